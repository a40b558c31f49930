#include "domain/email_rules.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "domain/delivery_policy.hpp"
#include "domain/events.hpp"
#include "domain/stats.hpp"

namespace posthorn::domain {

EmailStatus email_status(const std::vector<Recipient>& recipients, bool any_sent,
                         EmailStatus before, bool complaint) {
    // A complaint outranks the rest, and stays.
    if (complaint || before == EmailStatus::complained) return EmailStatus::complained;
    // A canceled email stays CANCELED: a recipient whose attempt was under way when it was
    // canceled keeps its own outcome (scheduling.hpp).
    if (before == EmailStatus::canceled) return EmailStatus::canceled;
    bool open = false, bounced = false, failed = false, blocked = false;
    for (const auto& r : recipients) {
        switch (r.status) {
            case RecipientStatus::queued:
                open = true;
                break;
            case RecipientStatus::bounced:
                bounced = true;
                break;
            case RecipientStatus::failed:
                failed = true;
                break;
            case RecipientStatus::blocked:
                blocked = true;
                break;
            case RecipientStatus::delivered:
            case RecipientStatus::complained:
            case RecipientStatus::canceled:
                break;
        }
        any_sent = any_sent || r.sent_at.has_value();
    }
    if (open) return any_sent ? EmailStatus::sent : EmailStatus::queued;
    if (bounced) return EmailStatus::bounced;
    if (failed) return EmailStatus::failed;
    if (blocked) return EmailStatus::blocked;
    return EmailStatus::delivered;
}

std::optional<EmailChange> apply_outcomes(const Email& email, const Outcomes& outcomes) {
    const UnixMs at = outcomes.at;
    std::vector<Recipient> recipients = email.recipients;
    EmailChange change{.at = at};
    std::vector<std::size_t> about;    // indexes of the recipients the outcomes name
    std::vector<std::size_t> delayed;  // of those, the ones first deferred by this attempt
    bool transmitted = false;
    for (const auto& o : outcomes.recipients) {
        auto it = std::find_if(recipients.begin(), recipients.end(),
                               [&](const Recipient& r) { return r.id == o.recipient_id; });
        if (it == recipients.end()) continue;
        auto& r = *it;
        // Deferred for the first time: its first attempt left it queued for a retry.
        const bool first_deferral = r.status == RecipientStatus::queued && r.attempts == 0 &&
                                    o.status == RecipientStatus::queued && o.attempts > 0;
        r.status = o.status;
        r.attempts = o.attempts;
        r.next_attempt_at = o.next_attempt_at;
        if (o.response) r.last_response = o.response;
        if (o.transmitted && !r.sent_at) r.sent_at = at;
        if (o.bounce) r.bounce = o.bounce;
        if (o.tls) r.tls = o.tls;
        transmitted = transmitted || o.transmitted;
        change.recipients.push_back(RecipientChange{
            .id = r.id,
            .status = r.status,
            .attempts = r.attempts,
            .next_attempt_at = r.next_attempt_at,
            .last_response = r.last_response,
            .sent_at = r.sent_at,
            .final_at = is_final(r.status) ? std::optional<UnixMs>(at) : std::nullopt,
            .bounce = r.bounce,
            .tls = r.tls,
            // A hold keeps an open recipient off the queue (an attempt under way when it was
            // held ends in a retry that waits for the release); a final one is in no queue.
            .held_at = is_final(r.status) ? std::nullopt : r.held_at});
        if (o.suppress)
            change.suppressions.push_back(
                suppression_added(Suppression{.account_id = email.account_id,
                                              .address = core::ascii_lower(r.address),
                                              .reason = *o.suppress,
                                              .email_id = email.id,
                                              .created_at = at}));
        const auto index = static_cast<std::size_t>(it - recipients.begin());
        if (std::find(about.begin(), about.end(), index) == about.end()) about.push_back(index);
        if (first_deferral && std::find(delayed.begin(), delayed.end(), index) == delayed.end())
            delayed.push_back(index);
    }
    if (about.empty() && !outcomes.complaint) return std::nullopt;

    const bool was_sent = email.sent_at.has_value();
    const auto status =
        email_status(recipients, was_sent || transmitted, email.status, outcomes.complaint);
    change.status = status;
    change.sent_at = email.sent_at;
    if (transmitted && !change.sent_at) change.sent_at = at;
    change.delivered_at = email.delivered_at;
    if (status == EmailStatus::delivered && email.status != EmailStatus::delivered)
        change.delivered_at = at;
    change.failed_at = email.failed_at;
    if ((status == EmailStatus::bounced || status == EmailStatus::failed ||
         status == EmailStatus::blocked) &&
        !change.failed_at)
        change.failed_at = at;
    change.opened_at = email.opened_at;
    change.clicked_at = email.clicked_at;

    std::vector<const Recipient*> named;
    named.reserve(about.size());
    for (auto i : about) named.push_back(&recipients[i]);
    auto raise = [&](EventKind kind) {
        change.events.push_back(make_event(kind, email.account_id, email.id,
                                           email_event_data(email, status, named), at));
    };
    if (transmitted && !was_sent) raise(EventKind::email_sent);
    if (!delayed.empty()) {
        std::vector<const Recipient*> late;
        late.reserve(delayed.size());
        for (auto i : delayed) late.push_back(&recipients[i]);
        change.events.push_back(make_event(EventKind::email_delivery_delayed, email.account_id,
                                           email.id, email_event_data(email, status, late), at));
    }
    if (status != email.status && is_final(status)) raise(event_for(status));
    count_change(email, change);
    return change;
}

EmailChange engage(const Email& email, Engagement what, std::string data_json, UnixMs at) {
    EmailChange change{.status = email.status,
                       .sent_at = email.sent_at,
                       .delivered_at = email.delivered_at,
                       .failed_at = email.failed_at,
                       .opened_at = email.opened_at,
                       .clicked_at = email.clicked_at,
                       .at = at};
    auto& first = what == Engagement::open ? change.opened_at : change.clicked_at;
    if (!first) first = at;
    change.events.push_back(
        make_event(what == Engagement::open ? EventKind::email_opened : EventKind::email_clicked,
                   email.account_id, email.id, std::move(data_json), at));
    count_change(email, change);
    return change;
}

Outcomes complaint_outcomes(const Email& email, const std::vector<std::string>& named,
                            const std::string& feedback_type, UnixMs at) {
    Outcomes out{.at = at};
    const auto decision = decide_complaint(feedback_type);
    if (!decision) return out;
    out.complaint = true;
    for (const auto& r : email.recipients) {
        const auto address = core::ascii_lower(r.address);
        const bool is_named = std::any_of(named.begin(), named.end(), [&](const std::string& n) {
            return core::ascii_lower(n) == address;
        });
        if (!is_named && !(named.empty() && r.type == RecipientType::to)) continue;
        out.recipients.push_back(RecipientOutcome{.recipient_id = r.id,
                                                  .status = RecipientStatus::complained,
                                                  .attempts = r.attempts,
                                                  .response = "feedback report: " + feedback_type,
                                                  .suppress = SuppressionReason::complaint});
    }
    return out;
}

}  // namespace posthorn::domain
