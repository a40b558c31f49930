#include "domain/delivery_policy.hpp"

#include <array>

#include "core/text.hpp"

namespace posthorn::domain {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "c.s.d" at `p` of `s` (RFC 3463 §2: class 2, 4 or 5, subject and detail of 1 to 3
// digits); its length, or 0.
std::size_t code_at(std::string_view s, std::size_t p) {
    if (p + 5 > s.size() || (s[p] != '2' && s[p] != '4' && s[p] != '5') || s[p + 1] != '.')
        return 0;
    std::size_t i = p + 2, n = 0;
    for (; i < s.size() && is_digit(s[i]) && n < 3; ++i, ++n) {
    }
    if (n == 0 || i >= s.size() || s[i] != '.') return 0;
    ++i;
    n = 0;
    for (; i < s.size() && is_digit(s[i]) && n < 3; ++i, ++n) {
    }
    if (n == 0 || (i < s.size() && is_digit(s[i]))) return 0;
    return i - p;
}

struct Code {
    int klass = 0, subject = -1, detail = -1;
    explicit Code(std::string_view c) {
        if (c.empty()) return;
        klass = c[0] - '0';
        const auto dot2 = c.find('.', 2);
        subject = std::stoi(std::string(c.substr(2, dot2 - 2)));
        detail = std::stoi(std::string(c.substr(dot2 + 1)));
    }
    bool is(int s, int d) const { return subject == s && detail == d; }
};

// Words of refusals, lower-case, as the big receivers and the common MTAs write them
// (docs/delivery.md; delivery_policy_test.cpp holds the replies they come from).
constexpr std::array<std::string_view, 38> kHardWords = {
    "user unknown",        "unknown user",         "no such user",
    "no such mailbox",     "no such recipient",    "no such address",
    "unknown recipient",   "recipient unknown",    "invalid recipient",
    "recipient not found", "user not found",       "mailbox not found",
    "address not found",   "mailbox unavailable",  "mailbox unknown",
    "does not exist",      "doesn't exist",        "no mailbox",
    "mailbox is disabled", "account is disabled",  "account has been disabled",
    "account disabled",    "is disabled",          "doesn't have a",
    "does not have a",     "invalid mailbox",      "not a valid mailbox",
    "invalid address",     "unrouteable address",  "unroutable address",
    "no longer available", "deactivated",          "address unknown",
    "unknown address",     "domain not found",     "not our customer",
    "recipientnotfound",   "has been discontinued"};
constexpr std::array<std::string_view, 17> kSoftWords = {
    "mailbox full",    "mailbox is full",    "inbox is full",
    "over quota",      "quota exceeded",     "exceeded storage",
    "exceeds storage", "storage allocation", "insufficient storage",
    "out of storage",  "quotaexceeded",      "too large",
    "too big",         "size limit",         "message size",
    "size exceeds",    "exceeds the maximum"};
constexpr std::array<std::string_view, 37> kBlockWords = {"spam",
                                                          "blocked",
                                                          "block list",
                                                          "blocklist",
                                                          "blacklist",
                                                          "black list",
                                                          "spamhaus",
                                                          "barracuda",
                                                          "spamcop",
                                                          "sorbs",
                                                          "dnsbl",
                                                          "rbl",
                                                          "reputation",
                                                          "unsolicited",
                                                          "bulk",
                                                          "policy",
                                                          "dmarc",
                                                          "spf",
                                                          "dkim",
                                                          "unauthenticated",
                                                          "not authorized",
                                                          "authentication",
                                                          "banned",
                                                          "prohibit",
                                                          "abuse",
                                                          "listed",
                                                          "refused",
                                                          "rejected due to",
                                                          "content rejected",
                                                          "message rejected",
                                                          "virus",
                                                          "malware",
                                                          "phishing",
                                                          "suspicious",
                                                          "denied",
                                                          "not permitted",
                                                          "not accepted"};

template <std::size_t N>
bool has_any(std::string_view lower, const std::array<std::string_view, N>& words) {
    for (auto w : words)
        if (lower.find(w) != std::string_view::npos) return true;
    return false;
}

// By a specific enhanced code; nullopt when the code says nothing specific.
std::optional<BounceType> by_code(const Code& c, std::string_view lower, Stage stage) {
    if (c.klass == 0) return std::nullopt;
    // Bad destination mailbox, system, syntax; moved; null MX (RFC 7505; Microsoft also
    // uses it for a recipient its directory does not know).
    if (c.is(1, 1) || c.is(1, 2) || c.is(1, 3) || c.is(1, 6) || c.is(1, 10))
        return BounceType::hard;
    if (c.is(1, 7) || c.is(1, 8)) return BounceType::undetermined;  // about our sender
    if (c.is(2, 1)) return BounceType::hard;                        // mailbox disabled
    if (c.is(7, 13)) return BounceType::hard;  // user account disabled (RFC 3463)
    if (c.is(2, 2) || c.is(2, 3) || c.is(3, 4)) return BounceType::soft;  // full; too large
    // Microsoft's directory-based edge blocking: "550 5.4.1 Recipient address rejected:
    // Access denied" is its answer for an address it does not have.
    if (c.is(4, 1) && stage == Stage::rcpt &&
        lower.find("recipient address rejected") != std::string_view::npos)
        return BounceType::hard;
    // Authentication and reputation: DMARC (7.26 Gmail, 7.509 Microsoft), PTR (7.25),
    // SPF (7.23, 7.27), banned or blocked IPs (7.606–7.649, 7.7xx Microsoft).
    if (c.subject == 7 && c.detail >= 23 && c.detail != 13) return BounceType::block;
    return std::nullopt;
}

// By the code's class alone, and the stage.
BounceType by_class(int code, const Code& c, Stage stage) {
    switch (c.subject) {
        case 1:
            return stage == Stage::rcpt || stage == Stage::report ? BounceType::hard
                                                                  : BounceType::undetermined;
        case 2:
        case 3:
            return BounceType::soft;
        case 4:
            return c.detail == 4 ? BounceType::hard : BounceType::undetermined;  // unroutable
        case 7:
            return BounceType::block;
        default:
            break;
    }
    if (stage == Stage::rcpt && (code == 551 || code == 553)) return BounceType::hard;
    if (code == 552 || code == 452) return BounceType::soft;  // exceeded storage allocation
    return BounceType::undetermined;
}

std::string last_line(std::string_view text) {
    while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.remove_suffix(1);
    const auto nl = text.rfind('\n');
    return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

}  // namespace

std::string enhanced_code(std::string_view reply_text) {
    // On the last line of a multiline reply (where Gmail and others repeat it), after the
    // basic code and its separator; or qmail's "(#5.1.1)" anywhere.
    const auto line = last_line(reply_text);
    std::string_view s(line);
    std::size_t p = 0;
    if (s.size() >= 4 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) &&
        (s[3] == ' ' || s[3] == '-'))
        p = 4;
    while (p < s.size() && s[p] == ' ') ++p;
    if (auto n = code_at(s, p)) return std::string(s.substr(p, n));
    for (auto hash = s.find('#'); hash != std::string_view::npos; hash = s.find('#', hash + 1))
        if (auto n = code_at(s, hash + 1)) return std::string(s.substr(hash + 1, n));
    return {};
}

BounceType classify(int code, std::string_view enhanced, std::string_view text, Stage stage) {
    const Code c(enhanced);
    const auto lower = core::ascii_lower(text);
    auto type = by_code(c, lower, stage);
    if (!type) {
        // Words of a missing address say nothing of the recipient when they are about the
        // sender ("Sender address rejected: Domain not found", "Sender verify failed").
        const bool about_sender = lower.find("sender") != std::string::npos;
        if (!about_sender && has_any(lower, kHardWords))
            type = BounceType::hard;
        else if (has_any(lower, kSoftWords))
            type = BounceType::soft;
        else if (has_any(lower, kBlockWords))
            type = BounceType::block;
        else
            type = by_class(code, c, stage);
    }
    // A refusal of MAIL FROM is about our sender, never about the recipient's address.
    if (*type == BounceType::hard && stage == Stage::mail) type = BounceType::undetermined;
    return *type;
}

namespace {

Decision give_up(RecipientStatus status, std::string response, Bounce bounce) {
    Decision d{.what = Disposition::give_up, .status = status, .response = std::move(response)};
    if (bounce.type == BounceType::hard) d.suppress = SuppressionReason::hard_bounce;
    d.bounce = std::move(bounce);
    return d;
}

// A trouble that no retry mends: the recipient fails at once.
std::optional<Decision> final_trouble(const AttemptResult& r) {
    auto fail = [&](BounceType type, const char* code) {
        return give_up(RecipientStatus::failed, r.text,
                       Bounce{.type = type, .code = code, .message = r.text});
    };
    switch (r.trouble) {
        case Trouble::null_mx:
            return fail(BounceType::hard, "5.1.10");
        case Trouble::no_such_domain:
        case Trouble::no_address:
            return fail(BounceType::hard, "5.1.2");
        case Trouble::tls_unavailable:
            return fail(BounceType::undetermined, "5.7.10");  // encryption needed
        case Trouble::smtputf8_unsupported:
            return fail(BounceType::undetermined, "5.6.7");  // RFC 6531 §3.5
        case Trouble::sender_domain_gone:
            return fail(BounceType::undetermined, "5.7.0");  // nothing a retry could sign with
        default:
            return std::nullopt;
    }
}

}  // namespace

Decision decide(const AttemptResult& r, const RetryState& state) {
    if (r.trouble == Trouble::none && r.code / 100 == 2)
        return Decision{.what = Disposition::delivered,
                        .status = RecipientStatus::delivered,
                        .response = r.text};
    if (auto d = final_trouble(r)) return *d;
    // A 5xx is final; anything else (4xx, a 3xx out of step, no reply, DNS or TLS trouble
    // that may pass, our own) is retried on the schedule.
    if (r.trouble == Trouble::none && r.code / 100 == 5) {
        const auto code = enhanced_code(r.text);
        return give_up(
            RecipientStatus::bounced, r.text,
            Bounce{
                .type = classify(r.code, code, r.text, r.stage), .code = code, .message = r.text});
    }
    const auto done = static_cast<std::size_t>(state.attempts_before);
    if (state.schedule_s && done < state.schedule_s->size())
        return Decision{.what = Disposition::retry,
                        .status = RecipientStatus::queued,
                        .response = r.text,
                        .next_attempt_at = state.now + (*state.schedule_s)[done] * 1000LL};
    // Retries ran out: a soft bounce, with the last reply's code when it gave one (RFC 3463
    // 4.4.7: delivery time expired).
    auto code = r.trouble == Trouble::none ? enhanced_code(r.text) : std::string();
    if (code.empty()) code = "4.4.7";
    const auto response =
        r.text + " (gave up after " + std::to_string(state.attempts_before + 1) + " attempts)";
    return give_up(RecipientStatus::failed, response,
                   Bounce{.type = BounceType::soft, .code = code, .message = response});
}

std::optional<Decision> decide_report(std::string_view action, std::string_view status,
                                      std::string_view diagnostic) {
    if (!core::ascii_iequals(action, "failed")) return std::nullopt;
    std::string response = "DSN: " + std::string(status);
    if (!diagnostic.empty()) response += " " + std::string(diagnostic);
    // The Status field is the enhanced code (RFC 3464 §2.3.4); the diagnostic, the remote
    // server's words ("smtp; 550 5.1.1 …").
    std::string code(status.substr(0, code_at(status, 0)));
    // "smtp; 550 5.1.1 …": the diagnostic's type, then the server's reply (§2.3.6).
    auto reply = diagnostic.substr(
        diagnostic.find(';') == std::string_view::npos ? 0 : diagnostic.find(';') + 1);
    while (!reply.empty() && reply.front() == ' ') reply.remove_prefix(1);
    if (code.empty()) code = enhanced_code(reply);
    auto type = classify(550, code, diagnostic, Stage::report);
    return give_up(RecipientStatus::bounced, response,
                   Bounce{.type = type, .code = code, .message = response});
}

std::optional<Decision> decide_complaint(std::string_view feedback_type) {
    if (core::ascii_iequals(feedback_type, "not-spam")) return std::nullopt;
    return Decision{.what = Disposition::give_up,
                    .status = RecipientStatus::complained,
                    .response = "feedback report: " + std::string(feedback_type),
                    .suppress = SuppressionReason::complaint};
}

RecipientOutcome outcome_of(std::int64_t recipient_id, int attempts, Decision d) {
    return RecipientOutcome{.recipient_id = recipient_id,
                            .status = d.status,
                            .attempts = attempts,
                            .next_attempt_at = d.next_attempt_at,
                            .response = std::move(d.response),
                            .transmitted = d.what == Disposition::delivered,
                            .bounce = std::move(d.bounce),
                            .suppress = d.suppress};
}

}  // namespace posthorn::domain
