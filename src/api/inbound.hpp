// api/inbound.hpp — mail received on the account's domains (INTERFACE "List Inbound
// Emails"): GET /v1/emails/inbound, and beyond the interface GET /v1/emails/inbound/{id}
// (text, html, headers) and GET /v1/emails/inbound/{id}/attachments/{index} (the bytes).
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> list_inbound(detail::Context ctx);
asio::awaitable<http::Response> get_inbound(detail::Context ctx);
asio::awaitable<http::Response> get_inbound_attachment(detail::Context ctx);

}  // namespace posthorn::api
