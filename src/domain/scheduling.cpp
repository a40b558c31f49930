#include "domain/scheduling.hpp"

#include <vector>

#include "domain/events.hpp"

namespace posthorn::domain {

namespace {

// The email's status and times as they stand, at `at`.
EmailChange unchanged(const Email& e, UnixMs at) {
    return EmailChange{.status = e.status,
                       .sent_at = e.sent_at,
                       .delivered_at = e.delivered_at,
                       .failed_at = e.failed_at,
                       .opened_at = e.opened_at,
                       .clicked_at = e.clicked_at,
                       .at = at};
}

// A recipient's change that writes it as it stands but for what the caller then sets.
RecipientChange as_is(const Recipient& r) {
    return RecipientChange{.id = r.id,
                           .status = r.status,
                           .attempts = r.attempts,
                           .next_attempt_at = r.next_attempt_at,
                           .last_response = r.last_response,
                           .sent_at = r.sent_at,
                           .bounce = r.bounce,
                           .tls = r.tls,
                           .held_at = r.held_at};
}

// Never attempted, open, and no node holds it.
bool untouched(const Recipient& r, UnixMs now) {
    return r.status == RecipientStatus::queued && r.attempts == 0 && !r.sent_at &&
           !in_flight(r, now);
}

}  // namespace

std::optional<std::string> schedule_refusal(std::string_view field, UnixMs at, UnixMs now) {
    if (at < now - kScheduleGraceMs)
        return std::string(field) + " is in the past (" + format_iso8601(at) + "; now is " +
               format_iso8601(now) + ")";
    if (at > now + kMaxScheduleAheadMs)
        return std::string(field) + " is more than 30 days ahead (" + format_iso8601(at) +
               "; the latest is " + format_iso8601(now + kMaxScheduleAheadMs) + ")";
    return std::nullopt;
}

std::optional<EmailChange> release_scheduled(const Email& email, UnixMs now) {
    if (email.status != EmailStatus::scheduled) return std::nullopt;
    if (email.scheduled_at && *email.scheduled_at > now) return std::nullopt;
    auto change = unchanged(email, now);
    change.status = EmailStatus::queued;
    return change;
}

std::variant<EmailChange, TooLate> reschedule(const Email& email, UnixMs at, UnixMs now) {
    if (email.status != EmailStatus::scheduled)
        return TooLate{"the email is " + std::string(name(email.status)) +
                       ": only a SCHEDULED email can be rescheduled"};
    if (email.scheduled_at && *email.scheduled_at <= now)
        return TooLate{"the email's scheduled time has come: it is being sent"};
    auto change = unchanged(email, now);
    for (const auto& r : email.recipients) {
        if (r.status != RecipientStatus::queued) continue;
        if (!untouched(r, now))
            return TooLate{"the email is being sent: a recipient has been attempted already"};
        auto rc = as_is(r);
        rc.next_attempt_at = at;
        change.recipients.push_back(std::move(rc));
    }
    change.scheduled_at = at;
    change.status = waits(at, now) ? EmailStatus::scheduled : EmailStatus::queued;
    return change;
}

std::variant<EmailChange, TooLate> cancel(const Email& email, UnixMs now) {
    if (email.status == EmailStatus::canceled) return TooLate{"the email is CANCELED already"};
    if (is_final(email.status))
        return TooLate{"the email is " + std::string(name(email.status)) +
                       ": delivery has ended, nothing is left to cancel"};
    auto change = unchanged(email, now);
    std::vector<Recipient> after = email.recipients;
    std::vector<const Recipient*> canceled;
    for (auto& r : after) {
        if (!untouched(r, now)) continue;
        r.status = RecipientStatus::canceled;
        r.next_attempt_at = std::nullopt;
        r.last_response = std::string(kCanceledResponse);
        r.held_at = std::nullopt;
        auto rc = as_is(r);
        rc.final_at = now;
        change.recipients.push_back(std::move(rc));
        canceled.push_back(&r);
    }
    if (canceled.empty())
        return TooLate{
            "delivery has started for every recipient (attempted, or under way): too late to "
            "cancel"};
    change.status = EmailStatus::canceled;
    change.events.push_back(make_event(EventKind::email_canceled, email.account_id, email.id,
                                       email_event_data(email, EmailStatus::canceled, canceled),
                                       now));
    return change;
}

}  // namespace posthorn::domain
