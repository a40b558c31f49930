// api/emails.hpp — sending and reading sent email (INTERFACE.md "Send Email", "Get Email",
// "List Emails", "List Envelopes"; DESIGN §2–§5): POST /v1/emails, GET /v1/emails/{id},
// GET /v1/email, GET /v1/emails/envelope. An accepted email is durably queued (QUEUED);
// delivering it is the delivery engine's business, through the queue.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "api/detail/context.hpp"
#include "api/queue_email.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> send_email(detail::Context ctx);
// POST /v1/emails/batch (batch.cpp): up to kMaxBatchEmails sends in one request, each
// answered apart, stored in one transaction.
asio::awaitable<http::Response> send_batch(detail::Context ctx);
inline constexpr std::size_t kMaxBatchEmails = 100;

// One send, from its JSON body (the body of POST /v1/emails, or one item of a batch) to an
// email checked, counted against the send rate and built, ready to store
// (queue_email.hpp: store_email, store_emails); or the answer to give instead: the stored
// answer of an earlier send with its idempotency key (200), or the error body of DESIGN §4.
// Its key: the body's idempotencyKey, else `default_key` (none: not idempotent). `client_ip`:
// the client's address, for the Received field (queue_email.hpp, QueueRequest::Origin).
asio::awaitable<std::variant<PreparedEmail, http::Response>> prepare_send(
    const Deps& deps, store::ApiKey key, boost::json::value body,
    std::optional<std::string> default_key, std::string client_ip);

// The Idempotency-Key header of `req` (checked: 1 to 256 bytes), none, or the 400 to answer.
std::variant<std::optional<std::string>, http::Response> idempotency_header(
    const http::Request& req);

// The operator's log line of a refused send (log_refused_send), read from its error answer.
void log_refused_answer(std::string_view account_id, std::string_view client_ip,
                        const http::Response& res);
// The email `id` of the key's account, for a key to `verb` ("read", "change"): 404
// NOT_FOUND for none (or another account's), 403 FORBIDDEN for a sending key and an email it
// did not send (domain::may_read_email); else the email.
asio::awaitable<std::variant<store::Email, http::Response>> email_for_key(detail::Context ctx,
                                                                          std::string id,
                                                                          std::string verb);
asio::awaitable<http::Response> get_email(detail::Context ctx);
asio::awaitable<http::Response> list_emails(detail::Context ctx);
asio::awaitable<http::Response> list_envelopes(detail::Context ctx);
// Scheduled send (docs/sending.md, domain/scheduling.hpp): PATCH /v1/emails/{id}
// {"scheduled_at"} and POST /v1/emails/{id}/cancel; 409 CONFLICT when too late. A sending key
// changes only the emails it sent.
asio::awaitable<http::Response> reschedule_email(detail::Context ctx);
asio::awaitable<http::Response> cancel_email(detail::Context ctx);

}  // namespace posthorn::api
