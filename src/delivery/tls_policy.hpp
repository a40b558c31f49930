// delivery/tls_policy.hpp — what TLS a connection to one MX host must have, from the
// operator's setting (delivery.tls), the recipient domain's MTA-STS policy (RFC 8461) and the
// host's DANE TLSA records (RFC 7672). DANE comes first when the host has authenticated
// TLSA records (RFC 8461 §2); then an MTA-STS policy in `enforce` or `testing` mode; then the
// setting. The one place these rules live (CONVENTIONS §10): no I/O, table-tested.
// Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "crypto/tls.hpp"
#include "delivery/mta_sts.hpp"
#include "dns/resolver.hpp"
#include "smtp/client.hpp"

namespace posthorn::delivery {

// delivery.tls
enum class TlsSetting : std::uint8_t { off, opportunistic, required, verify };

// Which policy applied to an attempt, as the API shows it.
enum class TlsPolicy : std::uint8_t { none, opportunistic, required, verify, mta_sts, dane };
std::string_view to_string(TlsPolicy policy);

// What the TLSA look-up of an MX host (_<port>._tcp.<host>) came to.
struct Dane {
    enum class State : std::uint8_t {
        none,    // no records, or records without the AD bit, or DANE not asked for
        secure,  // authenticated records (RFC 7672 §2.2)
        failed,  // the look-up failed (SERVFAIL, timeout): a forged denial cannot be ruled out
    };
    State state = State::none;
    std::vector<dns::TlsaRecord> records;
    std::string error;  // for `failed`: what the look-up said
};

// From the resolver's answer: AD bit set and records → secure; nxdomain/no_data, or records
// without AD → none; servfail or timeout → failed (RFC 7672 §2.2.1: a validating resolver
// answers SERVFAIL for a bogus answer, which is what an attacker's forgery looks like); any
// other failure (refused, a malformed answer) → none, as from a server that is no
// validating resolver.
Dane dane_of(const Result<dns::TlsaAnswer>& answer);

// What the connection to one MX host must be.
struct HostTls {
    TlsPolicy policy = TlsPolicy::opportunistic;
    smtp::TlsMode mode = smtp::TlsMode::opportunistic;
    std::optional<crypto::PeerCheck> check;  // what the certificate is checked against
    bool require_verified = false;           // a failed check defers (else: only reported)
    bool plain_fallback = false;             // a failed handshake may be retried in plain text
    // Not empty: do not connect to this host at all; the reason (a temporary failure).
    std::string refuse;
    // For MTA-STS `testing`: why the policy would have refused this host ("" when not).
    std::string report;

    // Sessions may be shared only by hosts of equal requirements (destination keys).
    std::string key() const;
};

// `sts`: the recipient domain's policy, if it has one (mode none counts as none).
HostTls host_tls(TlsSetting setting, const std::optional<StsPolicy>& sts, const Dane& dane,
                 const std::string& host);

}  // namespace posthorn::delivery
