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
// POST /v1/domains/{identifier}/dkim/rotate: a new key for the selector that does not sign,
// switched to once the operator's zone serves it (docs/domains.md, "Rotation").
asio::awaitable<http::Response> rotate_dkim(detail::Context ctx);

struct VerifyResult {
    store::Domain domain;   // as it stands after the check
    std::string dns_error;  // non-empty: a lookup failed, nothing was changed
};

// Looks every record up, decides the status (DESIGN §6) and writes the outcome with its
// event. `background` marks the daily re-check of a VERIFIED domain, where any missing
// record turns it FAILED.
asio::awaitable<Result<VerifyResult>> check_domain(Deps deps, store::Domain domain,
                                                   bool background);

// Whether the domain's tracking CNAME (<label>.<domain>) was right at its last verification:
// its pixel and link URLs then use that host (docs/tracking.md).
bool tracking_verified(const store::Domain& domain);

// Makes a new key for the selector that does not sign and leaves it pending: the domain as
// it stands after. errc::conflict when a rotation is pending already.
asio::awaitable<Result<store::Domain>> start_dkim_rotation(Deps deps, store::Domain domain);

// For a domain with a rotation pending: looks up the TXT of its pending selector (at the
// name in the operator's zone its CNAME points to, then at <selector>._domainkey.<domain>)
// and, when it has the new key, switches signing to it. Answers whether it switched; an
// error when a lookup failed (nothing changes: tried again later).
asio::awaitable<Result<bool>> finish_dkim_rotation(Deps deps, store::Domain domain);

}  // namespace posthorn::api
