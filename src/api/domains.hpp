// api/domains.hpp — /v1/domains: create, list, read, update, verify, delete (INTERFACE.md
// "Domains", DESIGN §6), and the verification that the background job shares.
#pragma once

#include <string>

#include "api/detail/context.hpp"
#include "store/types.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> create_domain(detail::Context ctx);
asio::awaitable<http::Response> list_domains(detail::Context ctx);
asio::awaitable<http::Response> get_domain(detail::Context ctx);
asio::awaitable<http::Response> update_domain(detail::Context ctx);
asio::awaitable<http::Response> verify_domain(detail::Context ctx);
// The domain and its DKIM keys are erased; its emails are kept; sends from it are refused
// as from any domain the account does not have.
asio::awaitable<http::Response> delete_domain(detail::Context ctx);

struct VerifyResult {
    store::Domain domain;   // as it stands after the check
    std::string dns_error;  // non-empty: a lookup failed, nothing was changed
};

// Looks every record up, decides the status (DESIGN §6) and writes the outcome with its
// event. `background` marks the daily re-check of a VERIFIED domain, where any missing
// record turns it FAILED.
asio::awaitable<Result<VerifyResult>> check_domain(Deps deps, store::Domain domain,
                                                   bool background);

}  // namespace posthorn::api
