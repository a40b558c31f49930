// domain/delivery_policy.hpp — the one place where what happened to a delivery attempt
// becomes what to do about it (Postfix's smtp_trouble.c): delivered, retry on the schedule,
// or give up; and for a give-up, its bounce classification — `hard` (the address does not
// exist), `soft` (the mailbox is full, the message too large, retries ran out), `block`
// (refused for reputation or policy: blocklists, spam, DMARC) or `undetermined` — with the
// enhanced status code (RFC 3463), and whether the address goes on the suppression list
// (hard bounces and complaints do; blocks and soft bounces do not). Bounce reports (DSN,
// RFC 3464) and complaint reports (ARF, RFC 5965) are decided here too. docs/delivery.md lists the
// table. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/email_rules.hpp"
#include "domain/model.hpp"

namespace posthorn::domain {

// Where in the attempt the reply (or the trouble) came.
enum class Stage : std::uint8_t {
    route,    // finding where to deliver (DNS)
    connect,  // opening the connection, the greeting, EHLO and STARTTLS
    mail,     // MAIL FROM
    rcpt,     // RCPT TO: the reply is about this recipient
    data,     // DATA, or the reply after the message
    report,   // a bounce report (DSN) that came back later
};

// What went wrong when no usable reply came.
enum class Trouble : std::uint8_t {
    none,                  // a reply came: see code and text
    network,               // refused, reset, timed out, or no server could be reached
    tls_unavailable,       // TLS is required and the server does not offer it
    tls_failed,            // the TLS handshake failed
    smtputf8_unsupported,  // a non-ASCII address and a server without SMTPUTF8 (RFC 6531)
    no_such_domain,        // the recipient's domain does not exist (NXDOMAIN)
    null_mx,               // the domain takes no mail (RFC 7505)
    no_address,            // no MX and no address to deliver to (RFC 5321 §5.1)
    dns_temporary,         // the DNS answered SERVFAIL, or not at all
    local,                 // we could not do our part (sign the message, read it)
    sender_domain_gone,    // the sending domain was deleted: the message cannot be signed
};

struct AttemptResult {
    Stage stage = Stage::data;
    Trouble trouble = Trouble::none;
    int code = 0;      // the reply's code, when one came
    std::string text;  // the reply as the server sent it ("550-5.1.1 …\r\n550 5.1.1 …"), or
                       // our words for the trouble
    std::optional<TlsOutcome> tls;  // the TLS policy and what came of it, once one applied
};

struct RetryState {
    int attempts_before = 0;               // attempts made before this one
    const std::vector<int>* schedule_s{};  // delays between attempts (delivery.retry_schedule_s)
    UnixMs now = 0;
};

enum class Disposition : std::uint8_t { delivered, retry, give_up };

struct Decision {
    Disposition what = Disposition::retry;
    RecipientStatus status = RecipientStatus::queued;  // delivered | queued | bounced | failed
    std::string response;                              // what the recipient shows as its reply
    std::optional<UnixMs> next_attempt_at;             // for a retry
    std::optional<Bounce> bounce;                      // for a give-up
    std::optional<SuppressionReason> suppress;         // for a hard bounce
};

// The enhanced status code (RFC 3463 §2: class.subject.detail, class 2, 4 or 5) at the
// start of a reply line's text (after the basic code), e.g. "5.1.1" of
// "550 5.1.1 <x@y>: Recipient address rejected"; "" when there is none.
std::string enhanced_code(std::string_view reply_text);

// The class of a refusal (a 5xx, a DSN's failure, or the last reply of a recipient whose
// retries ran out): by its enhanced code where that is specific, then by the words of its
// text, then by the code's class and the stage.
BounceType classify(int code, std::string_view enhanced, std::string_view text, Stage stage);

// The decision on one attempt for one recipient.
Decision decide(const AttemptResult& result, const RetryState& state);

// A recipient of a bounce report (RFC 3464 §2.3): its Action, Status and
// Diagnostic-Code. nullopt when the report does not say it failed (delayed, relayed,
// delivered, expanded: nothing to do).
std::optional<Decision> decide_report(std::string_view action, std::string_view status,
                                      std::string_view diagnostic);

// A recipient an abuse report (ARF, RFC 5965) is about: COMPLAINED, and suppressed; nullopt
// for a `not-spam` report (RFC 6650 §3), which is no complaint.
std::optional<Decision> decide_complaint(std::string_view feedback_type);

// The outcome for a recipient with `attempts` attempts made (this one included).
RecipientOutcome outcome_of(std::int64_t recipient_id, int attempts, Decision decision);

}  // namespace posthorn::domain
