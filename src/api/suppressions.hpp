// api/suppressions.hpp — /v1/suppressions: the account's suppression list (docs/
// suppressions.md): list (pages, `search`, `reason`), read one, add one (reason `manual`
// unless given; an address already there is 409 CONFLICT and keeps its entry), remove one
// (the address can be sent to again). Each change raises its event (suppression.added,
// suppression.removed) in the store's transaction. Addresses are read as the send path reads
// them (mail/address.hpp) and compared lower-cased, as delivery's claim compares them.
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> list_suppressions(detail::Context ctx);
asio::awaitable<http::Response> get_suppression(detail::Context ctx);
asio::awaitable<http::Response> add_suppression(detail::Context ctx);
asio::awaitable<http::Response> remove_suppression(detail::Context ctx);

}  // namespace posthorn::api
