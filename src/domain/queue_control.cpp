#include "domain/queue_control.hpp"

#include <algorithm>
#include <string>

#include "domain/email_rules.hpp"

namespace posthorn::domain {

QueueState queue_state(const Recipient& r, EmailStatus email_status, UnixMs now) {
    if (r.lease_until && *r.lease_until > now) return QueueState::in_flight;
    if (r.held_at) return QueueState::held;
    const bool later = r.next_attempt_at && *r.next_attempt_at > now;
    if (later && email_status == EmailStatus::scheduled) return QueueState::scheduled;
    if (later) return QueueState::deferred;
    return QueueState::ready;
}

std::vector<QueueState> queue_states_for(QueueAction action) {
    using S = QueueState;
    switch (action) {
        case QueueAction::hold:
            return {S::ready, S::deferred, S::scheduled, S::in_flight};
        case QueueAction::release:
            return {S::held, S::in_flight};
        case QueueAction::retry:
            return {S::deferred};
        case QueueAction::purge:
            return {S::ready, S::deferred, S::scheduled, S::held};
    }
    return {};
}

std::optional<EmailChange> purge(const Email& email, const std::vector<std::int64_t>& ids,
                                 UnixMs at) {
    Outcomes outcomes{.at = at};
    for (const auto& r : email.recipients) {
        if (r.status != RecipientStatus::queued) continue;  // settled meanwhile
        if (std::find(ids.begin(), ids.end(), r.id) == ids.end()) continue;
        outcomes.recipients.push_back(
            RecipientOutcome{.recipient_id = r.id,
                             .status = RecipientStatus::failed,
                             .attempts = r.attempts,
                             .response = std::string(kPurgedResponse),
                             .bounce = Bounce{.type = BounceType::undetermined,
                                              .code = "",
                                              .message = std::string(kPurgedResponse)}});
    }
    if (outcomes.recipients.empty()) return std::nullopt;
    return apply_outcomes(email, outcomes);
}

}  // namespace posthorn::domain
