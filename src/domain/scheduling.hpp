// domain/scheduling.hpp — scheduled send (issue 30, docs/sending.md "Scheduled send"): which
// times a send may be scheduled at, when a SCHEDULED email becomes QUEUED, and what a
// reschedule and a cancel make of an email. A store reads the email (with its recipients
// and their leases) and writes what these answer, in one transaction (EmailStore::
// change_email_locked); the API and the scheduler decide nothing themselves. Pure: no I/O, no
// clock (the time is given); thread-safe.
//
// The rules:
//   - A scheduled time is at most 30 days ahead, and not in the past by more than
//     kScheduleGraceMs (clocks of client and server differ by a few seconds); a time within
//     the grace, or now, sends at once (QUEUED).
//   - A SCHEDULED email's recipients are due at its scheduled time (their next attempt): the
//     queue claims none of them before. At that time the email becomes QUEUED
//     (release_scheduled; the scheduler's job), or what its recipients' outcomes make it if an
//     attempt ended first.
//   - Reschedule: only a SCHEDULED email whose time has not come, none of whose recipients
//     has been attempted or is under way. Its time and its recipients' next attempt move.
//   - Cancel: the recipients still QUEUED that were never attempted and that no node holds
//     for an attempt (lease_until ahead) become CANCELED (final, never attempted) and the
//     email CANCELED, with an email.canceled event about them. Recipients attempted already
//     (delivered, bounced, or waiting for a retry) and those under way keep their course and
//     their own outcome; the email stays CANCELED whatever they come to (a complaint still
//     makes it COMPLAINED). When no recipient is left to cancel (delivery has started for
//     every one), or the email is CANCELED already, the cancel is refused (409).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "domain/model.hpp"

namespace posthorn::domain {

inline constexpr UnixMs kMaxScheduleAheadMs = 30LL * 24 * 3600 * 1000;  // 30 days
// How far in the past a scheduled time may be and still be taken (sent at once).
inline constexpr UnixMs kScheduleGraceMs = 10'000;

// Why `at` may not be the scheduled time of a send made at `now` (the message names
// `field`: "scheduled_at", the SMTP header), or nullopt when it may.
std::optional<std::string> schedule_refusal(std::string_view field, UnixMs at, UnixMs now);

// Whether a send scheduled at `at` waits (SCHEDULED) at `now`, or goes at once (QUEUED).
constexpr bool waits(UnixMs at, UnixMs now) { return at > now; }

// Whether a node holds `r` for an attempt at `now`.
constexpr bool in_flight(const Recipient& r, UnixMs now) {
    return r.lease_until.has_value() && *r.lease_until > now;
}

// A SCHEDULED email whose time has come (at `now`) becomes QUEUED; nothing else changes and
// no event is raised. nullopt for any other email.
std::optional<EmailChange> release_scheduled(const Email& email, UnixMs now);

// A refused reschedule or cancel: the email is no longer in a state that allows it (409).
struct TooLate {
    std::string message;
};

// `email` (with all its recipients and their leases) rescheduled to `at` at `now` (`at`
// checked by schedule_refusal already): its scheduled time and the next attempt of its
// recipients become `at`; it stays SCHEDULED, or becomes QUEUED when `at` is not ahead.
std::variant<EmailChange, TooLate> reschedule(const Email& email, UnixMs at, UnixMs now);

// `email` (with all its recipients and their leases) canceled at `now`, as the rules above
// say.
std::variant<EmailChange, TooLate> cancel(const Email& email, UnixMs now);

// The response and the bounce message of a canceled recipient.
inline constexpr std::string_view kCanceledResponse = "canceled";

}  // namespace posthorn::domain
