// api/api_keys.hpp — /v1/api-keys: an account makes its own keys (the key shown once, in the
// answer that made it: api/keys.hpp makes it as `posthorn key create` does), lists them
// (never the key) and revokes them. Which key may do what is the domain's
// (domain/api_keys.hpp): a sending key or one tied to a domain, and the account's last full
// key, which stays (409). Revocation holds on every node within moments: the stores drop
// what they keep in memory of keys when one changes (store/detail/lookup_cache.hpp).
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> create_api_key(detail::Context ctx);
asio::awaitable<http::Response> list_api_keys(detail::Context ctx);
asio::awaitable<http::Response> revoke_api_key(detail::Context ctx);

}  // namespace posthorn::api
