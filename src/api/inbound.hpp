// api/inbound.hpp — mail received on the account's domains (INTERFACE "List Inbound
// Emails"): GET /v1/emails/inbound, and beyond the interface GET /v1/emails/inbound/{id}
// (text, html, headers) and GET /v1/emails/inbound/{id}/attachments/{index} (the bytes).
#pragma once

#include "api/detail/context.hpp"
#include "mail/parse.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> list_inbound(detail::Context ctx);
asio::awaitable<http::Response> get_inbound(detail::Context ctx);
asio::awaitable<http::Response> get_inbound_attachment(detail::Context ctx);

// Parses a message with GMime on the blocking pool, off the network threads.
asio::awaitable<mail::ParsedMessage> parse_off_thread(asio::any_io_executor pool, std::string raw);

}  // namespace posthorn::api
