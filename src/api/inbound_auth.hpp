// api/inbound_auth.hpp — the SPF, DKIM and DMARC results of an inbound message
// (docs/inbound.md, "Authentication"): mail/auth.hpp's checks, run on the blocking pool,
// their DNS questions asked through posthorn's resolver (dns.servers), as the JSON object
// stored with each copy and carried by inbound.received.
#pragma once

#include <chrono>
#include <string>

#include "core/asio.hpp"
#include "dns/resolver.hpp"
#include "mail/auth.hpp"

namespace posthorn::api {

// The results as JSON: {"spf": {...}, "dkim": [...], "dmarc": {...}}.
std::string authentication_json(const mail::AuthResults& r);

// Runs the checks off the network threads. Every DNS question of one message waits for
// its answer within `budget` in all: past it, the questions left fail (temperror). Never
// fails itself.
asio::awaitable<std::string> authenticate_inbound(
    dns::Resolver& resolver, asio::any_io_executor pool, mail::AuthInput input,
    std::chrono::milliseconds budget = std::chrono::seconds(15));

}  // namespace posthorn::api
