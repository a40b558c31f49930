// delivery/router.hpp — where mail for a domain goes (RFC 5321 §5): the smarthost when one
// is configured; otherwise the MX hosts by preference, each with its addresses, or the
// domain's own A/AAAA when it has no MX (the implicit MX). When there is nowhere to go, the
// trouble says why (a null MX, RFC 7505; a domain that does not exist; a DNS failure) and
// the delivery policy decides what it means.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/asio.hpp"
#include "delivery/attempt.hpp"
#include "delivery/tls_policy.hpp"
#include "dns/resolver.hpp"

namespace posthorn::delivery {

struct Target {
    std::string host;  // the MX name (for TLS SNI and our words)
    asio::ip::tcp::endpoint endpoint;
    HostTls tls;  // what TLS the connection must have (delivery/tls_route.hpp fills it in)
};

struct Relay {
    std::string host;
    std::uint16_t port = 25;
};

// The targets in the order to try, or what came of trying to find them (stage `route`),
// for every recipient of the domain. Unless `allow_private`, an MX address that is not on
// the public Internet (core::is_private_address) is never a target: a recipient domain is
// chosen by an API user, and its MX must not make posthorn connect into the operator's
// network. A domain whose every address is private has no address to deliver to. The
// relay is the operator's own choice and is not checked.
asio::awaitable<std::variant<std::vector<Target>, AttemptResult>> route(dns::Resolver& resolver,
                                                                        std::string domain,
                                                                        std::optional<Relay> relay,
                                                                        std::uint16_t mx_port,
                                                                        bool allow_private);

}  // namespace posthorn::delivery
