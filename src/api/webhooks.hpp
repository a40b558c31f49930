// api/webhooks.hpp — /v1/webhooks: create (the signing secret shown once), list, read,
// update, delete, the log of delivery attempts, secret rotation and replays (DESIGN §8,
// docs/webhooks.md). The
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
// A new signing secret, shown once; the one it replaces still signs for kPreviousSecretMs.
asio::awaitable<http::Response> rotate_webhook_secret(detail::Context ctx);
// One event's delivery, or every delivery given up since a time, sent again.
asio::awaitable<http::Response> replay_webhook_deliveries(detail::Context ctx);

}  // namespace posthorn::api
