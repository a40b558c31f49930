// api/emails.hpp — sending and reading sent email (INTERFACE.md "Send Email", "Get Email",
// "List Emails", "List Envelopes"; DESIGN §2–§5): POST /v1/emails, GET /v1/emails/{id},
// GET /v1/email, GET /v1/emails/envelope. An accepted email is durably queued (QUEUED);
// delivering it is the delivery engine's business, through the queue.
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> send_email(detail::Context ctx);
asio::awaitable<http::Response> get_email(detail::Context ctx);
asio::awaitable<http::Response> list_emails(detail::Context ctx);
asio::awaitable<http::Response> list_envelopes(detail::Context ctx);
// Scheduled send (docs/sending.md, domain/scheduling.hpp): PATCH /v1/emails/{id}
// {"scheduled_at"} and POST /v1/emails/{id}/cancel; 409 CONFLICT when too late. A sending key
// changes only the emails it sent.
asio::awaitable<http::Response> reschedule_email(detail::Context ctx);
asio::awaitable<http::Response> cancel_email(detail::Context ctx);

}  // namespace posthorn::api
