// domain/test_mode.hpp — test mode (issue 29, point 3): what becomes of an email sent with a
// test key (ApiKey::test). It is accepted as a live one is (validated, counted against the
// send rate, stored, listed) but never delivered: each recipient's outcome is decided when the
// email is accepted, in the same write (EmailStore::create_email with NewEmail::settle), so
// the queue never holds it. The special addresses of the reserved domain test.posthorn choose
// the outcome; any other address is captured, DELIVERED without leaving the machine. No
// outcome of a test email touches the suppression list: a suppressed address is not blocked
// (its recipients are never claimed), and a test bounce or complaint suppresses nothing.
// A test key may send from the sandbox sender (sandbox@test.posthorn) without a verified
// domain; a live key may not. docs/test-mode.md. Pure; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "domain/api_keys.hpp"
#include "domain/model.hpp"

namespace posthorn::domain {

// The reserved domain (no real one ends in .posthorn) and its addresses.
inline constexpr std::string_view kTestDomain = "test.posthorn";
inline constexpr std::string_view kSandboxSender = "sandbox@test.posthorn";
inline constexpr std::string_view kTestDelivered = "delivered@test.posthorn";
inline constexpr std::string_view kTestBounced = "bounced@test.posthorn";
inline constexpr std::string_view kTestComplained = "complained@test.posthorn";

// The reply a test bounce shows, as a real MTA's refusal of an unknown mailbox reads (a hard
// bounce, 5.1.1), and the reply a test delivery shows.
inline constexpr std::string_view kTestBounceReply =
    "550 5.1.1 <bounced@test.posthorn>: Recipient address rejected: User unknown in virtual "
    "mailbox table (test mode)";
inline constexpr std::string_view kTestDeliveredReply =
    "250 2.0.0 Ok: accepted in test mode, not delivered";

// What a test email does for one recipient.
enum class TestOutcome : std::uint8_t {
    delivered,   // delivered@test.posthorn: DELIVERED
    bounced,     // bounced@test.posthorn: BOUNCED, a hard bounce
    complained,  // complained@test.posthorn: delivered, then COMPLAINED
    captured,    // any other address: DELIVERED (kept, never sent)
};
// Case-insensitive, as the domain of an address is (the local part of these is ours).
TestOutcome test_outcome(std::string_view address);

// Whether `address` is the sandbox sender, which a test key may send from without a domain.
bool is_sandbox_sender(std::string_view address);

// Whether `key` sends from `from_address` as the sandbox sender, needing no domain: a test
// key, and the sandbox address. A key tied to a domain still sends only from its domain
// (key_may_send_from), the sandbox sender included; a live key never sends from it.
bool sends_from_sandbox(const ApiKey& key, std::string_view from_address);

// The outcomes of a test email just stored (`email`, with all of its recipients and `test`
// set), as they would have come from delivery: email.sent, then the event of its final
// status (email.delivered, email.bounced), then for a complained@ recipient the complaint
// (COMPLAINED, email.complained) — each event as a live email raises it, with "test":true.
// No suppression. nullopt when the email has no recipient (nothing happens to it).
std::optional<EmailChange> settle_test_email(const Email& email, UnixMs at);

}  // namespace posthorn::domain
