#include "domain/test_mode.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "domain/delivery_policy.hpp"
#include "domain/email_rules.hpp"

namespace posthorn::domain {

TestOutcome test_outcome(std::string_view address) {
    const auto a = core::ascii_lower(address);
    if (a == kTestDelivered) return TestOutcome::delivered;
    if (a == kTestBounced) return TestOutcome::bounced;
    if (a == kTestComplained) return TestOutcome::complained;
    return TestOutcome::captured;
}

bool is_sandbox_sender(std::string_view address) {
    return core::ascii_lower(address) == kSandboxSender;
}

bool sends_from_sandbox(const ApiKey& key, std::string_view from_address) {
    return key.test && is_sandbox_sender(from_address);
}

namespace {

// `change` applied to `email` (its recipients, status and times), as a store would write it.
void apply(Email& email, const EmailChange& change) {
    email.status = change.status;
    email.sent_at = change.sent_at;
    email.delivered_at = change.delivered_at;
    email.failed_at = change.failed_at;
    for (const auto& c : change.recipients) {
        auto it = std::find_if(email.recipients.begin(), email.recipients.end(),
                               [&](const Recipient& r) { return r.id == c.id; });
        if (it == email.recipients.end()) continue;
        it->status = c.status;
        it->attempts = c.attempts;
        it->next_attempt_at = c.next_attempt_at;
        it->last_response = c.last_response;
        it->sent_at = c.sent_at;
        it->bounce = c.bounce;
        it->tls = c.tls;
        it->held_at = c.held_at;
    }
}

}  // namespace

std::optional<EmailChange> settle_test_email(const Email& email, UnixMs at) {
    // The attempt as it would have gone: the delivery policy decides the replies, so a test
    // bounce is classified as a real one (hard, 5.1.1). Nothing is suppressed.
    static const std::vector<int> kNoRetries;
    const RetryState state{.attempts_before = 0, .schedule_s = &kNoRetries, .now = at};
    Outcomes attempt{.at = at};
    std::vector<std::string> complained;
    for (const auto& r : email.recipients) {
        const auto what = test_outcome(r.address);
        const bool bounce = what == TestOutcome::bounced;
        const AttemptResult result{
            .stage = bounce ? Stage::rcpt : Stage::data,
            .code = bounce ? 550 : 250,
            .text = std::string(bounce ? kTestBounceReply : kTestDeliveredReply)};
        auto o = outcome_of(r.id, 1, decide(result, state));
        o.suppress.reset();
        attempt.recipients.push_back(std::move(o));
        if (what == TestOutcome::complained) complained.push_back(r.address);
    }
    auto change = apply_outcomes(email, attempt);
    if (!change || complained.empty()) return change;

    // Then the complaint, about the complained@ recipients, on the email as delivered.
    Email delivered = email;
    apply(delivered, *change);
    auto report = complaint_outcomes(delivered, complained, "abuse", at);
    for (auto& o : report.recipients) o.suppress.reset();
    auto then = apply_outcomes(delivered, report);
    if (!then) return change;
    // One change: the complaint's status and times, every recipient as it ends, and the
    // events in the order they happened.
    for (const auto& rc : change->recipients)
        if (std::none_of(then->recipients.begin(), then->recipients.end(),
                         [&](const RecipientChange& c) { return c.id == rc.id; }))
            then->recipients.push_back(rc);
    std::sort(then->recipients.begin(), then->recipients.end(),
              [](const RecipientChange& a, const RecipientChange& b) { return a.id < b.id; });
    then->events.insert(then->events.begin(), change->events.begin(), change->events.end());
    then->stats.insert(then->stats.begin(), change->stats.begin(), change->stats.end());
    then->suppressions.clear();
    return then;
}

}  // namespace posthorn::domain
