// delivery/tls_route.hpp — fills in the TLS each target of a route must have
// (tls_policy.hpp): asks for the recipient domain's MTA-STS policy (sts_policies.hpp) and
// each MX host's TLSA records (RFC 7672 §2.2: `_<port>._tcp.<host>`), and says in the words
// of an attempt (domain::TlsOutcome) what the TLS of a session came to. Not for a relay:
// the smarthost is the operator's choice, and only delivery.tls applies to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "delivery/router.hpp"
#include "delivery/sts_policies.hpp"
#include "delivery/tls_policy.hpp"
#include "dns/resolver.hpp"
#include "smtp/client.hpp"

namespace posthorn::delivery {

struct TlsInputs {
    TlsSetting setting = TlsSetting::opportunistic;
    StsPolicies* sts = nullptr;  // none: MTA-STS is not looked up
    bool dane = false;           // look TLSA records up (a validating resolver is ours)
    std::uint16_t port = 25;     // of the TLSA name: the port delivered to
    bool relay = false;
};

// `targets` with their `tls` set, for mail to `domain`.
asio::awaitable<std::vector<Target>> with_tls(dns::Resolver& resolver, TlsInputs in,
                                              std::string domain, std::vector<Target> targets);

// What the TLS of an opened session came to: `plain_retry` when it is the plain-text retry
// of a failed handshake.
domain::TlsOutcome session_tls(const HostTls& tls, const smtp::Client& client, bool plain_retry);

// A host that was not delivered to for its TLS: refused by the policy before connecting, or
// its certificate did not verify (`client` then holds what the handshake found).
domain::TlsOutcome failed_tls(const HostTls& tls, const smtp::Client* client, std::string why);

}  // namespace posthorn::delivery
