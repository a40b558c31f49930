// api/queue.hpp — GET /v1/queue: the account's queued recipients by destination domain and
// state (docs/api.md "GET /v1/queue"), read from the store's view of the queue; never
// another account's. The API changes nothing in the queue: the operator's controls are the
// CLI's (`posthorn queue`). The JSON it answers is queue_summary.hpp's.
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> get_queue(detail::Context ctx);

}  // namespace posthorn::api
