// api/logs.hpp — GET /v1/logs: the account's request log (INTERFACE.md "List Logs").
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> list_logs(detail::Context ctx);

}  // namespace posthorn::api
