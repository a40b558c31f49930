// domain/sending_domain.hpp — the rules of a user's domain (DESIGN §6): which domains may
// send and receive, and what a verification of its DNS records makes of it — its status,
// when it is checked again, and the event it raises; its custom return path. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// DKIM rotation (docs/domains.md, "Rotation"). A domain has two selectors, ph1 and ph2: one
// signs, the other takes the next key. The selector a rotation gives a new key: the one
// that does not sign ("ph1" for anything but "ph1").
std::string rotation_selector(std::string_view active);

// Whether one of the TXT records `txts` (each one record's strings joined) is a DKIM key
// record (RFC 6376 §3.6.1) whose p= is `public_key` (base64; whitespace in it ignored):
// the operator's zone serves the new key, and signing may switch to it.
bool serves_dkim_key(const std::vector<std::string>& txts, std::string_view public_key);

// The time at or before which a domain's active key was made for `rotate_days` to rotate
// it at `now`; none when automatic rotation is off (rotate_days 0).
std::optional<UnixMs> rotate_keys_made_before(int rotate_days, UnixMs now);

// A domain's own hosts, <label>.<domain>: its tracking host (docs/tracking.md) and its
// return path (below). Why `label` cannot be such a label of `domain` (nullopt: it can):
// one DNS label of lower-case letters, digits and hyphens (not at either end), 1 to 63
// characters, and <label>.<domain> at most 253. `domain` may be empty: the label alone is
// checked. The API takes labels in lower case before asking.
std::optional<std::string> bad_host_label(std::string_view label, std::string_view domain);

// The base of a tracked email's pixel and link URLs: `<scheme>://<label>.<domain>` once the
// domain's tracking CNAME is verified (the scheme of public_url), else public_url itself.
std::string tracking_base(std::string_view public_url, std::string_view label,
                          std::string_view domain, bool tracking_verified);

// The (label, domain) a request's Host names as a tracking host: the first label and the
// rest, lower case and without a port; none for a name of fewer than three labels or an IP
// address literal.
std::optional<std::pair<std::string, std::string>> tracking_host_parts(std::string_view host);

// ---- the custom return path (docs/domains.md#return-path) ----
// A domain's return-path host is <label>.<domain>, a CNAME to the operator's bounce host.
// Once that CNAME is verified, the domain's mail has the envelope sender
// bounces+<token>@<label>.<domain>, so that SPF is checked (and aligns for DMARC) under the
// user's own domain. It is not one of the records that make a domain VERIFIED.

inline constexpr std::string_view kDefaultReturnPathLabel = "bounces";

// The domain of the envelope sender of mail accepted now from `domain`: its return-path
// host if that was verified, otherwise "" (the server's own: smtp.hostname). Decided at
// acceptance and kept with the email, so that a later change of the label or a failed
// re-check does not change where the reports about mail already sent go.
std::string envelope_domain(std::string_view domain, std::string_view label,
                            bool return_path_verified);

// Whether a report sent to bounces+<token>@<host> may be taken as one about the email of
// that token whose envelope domain is `email_return_path` ("" : smtp.hostname): to
// smtp.hostname always, to another host only if it is that email's return path. Any
// other host is not a bounce address (no open relay). Hosts compared case-insensitively.
bool bounce_host_matches(std::string_view host, std::string_view email_return_path,
                         std::string_view smtp_hostname);

}  // namespace posthorn::domain
