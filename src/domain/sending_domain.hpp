// domain/sending_domain.hpp — the rules of a user's domain (DESIGN §6): which domains may
// send and receive, and what a verification of its DNS records makes of it — its status,
// when it is checked again, and the event it raises. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "core/time.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::domain {

enum class SendCheck : std::uint8_t { ok, not_verified, sending_disabled };

// Sending is allowed only from a VERIFIED domain whose config.sending is on.
SendCheck may_send_from(DomainStatus status, bool sending);

// Inbound mail is accepted only for a VERIFIED domain whose config.inbound is on.
bool receives_mail(DomainStatus status, bool inbound);

struct Verification {
    int verified = 0;         // required records found as published
    int required = 0;         // records a domain needs for VERIFIED (DKIM, SPF, DMARC)
    bool background = false;  // the periodic re-check, not a user's verify
    DomainStatus before = DomainStatus::not_started;
    std::optional<UnixMs> first_verify_at;
    std::optional<UnixMs> verified_at;
    UnixMs now = 0;
    UnixMs pending_recheck_ms = 300'000;
    UnixMs verified_recheck_ms = 86'400'000;
    UnixMs give_up_after_ms = 72 * 3'600'000;  // PENDING this long → FAILED
};

struct VerificationOutcome {
    DomainStatus status = DomainStatus::pending;
    std::optional<UnixMs> next_check_at;  // none: no background re-check
    std::optional<UnixMs> first_verify_at;
    std::optional<UnixMs> verified_at;
    std::optional<EventKind> event;  // domain.verified / domain.failed on a change to them
};

// Every required record → VERIFIED; none → FAILED; some → PENDING, or FAILED once the
// first verify is give_up_after old; a VERIFIED domain whose records went away in a
// background re-check → FAILED. PENDING is re-checked after pending_recheck, VERIFIED
// after verified_recheck; FAILED waits for the user.
VerificationOutcome verify(const Verification& v);

}  // namespace posthorn::domain
