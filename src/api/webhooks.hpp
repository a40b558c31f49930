// api/webhooks.hpp — /v1/webhooks: create (the signing secret shown once), list, read,
// update, delete, and the log of delivery attempts (DESIGN §8, docs/webhooks.md). The
// deliveries themselves are made by src/webhooks from the event outbox.
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> create_webhook(detail::Context ctx);
asio::awaitable<http::Response> list_webhooks(detail::Context ctx);
asio::awaitable<http::Response> get_webhook(detail::Context ctx);
asio::awaitable<http::Response> update_webhook(detail::Context ctx);
asio::awaitable<http::Response> delete_webhook(detail::Context ctx);
asio::awaitable<http::Response> list_webhook_deliveries(detail::Context ctx);

}  // namespace posthorn::api
