// api/queue_summary.hpp — a summary of the queue as JSON: what GET /v1/queue answers and
// `posthorn queue summary --json` prints (docs/api.md, docs/delivery.md "Queue control").
// Pure; thread-safe.
#pragma once

#include <boost/json/object.hpp>

#include <vector>

#include "store/types.hpp"

namespace posthorn::api {

// {"data": [{"domain", "state", "recipients", "oldest_queued_at", "next_attempt_at"}, …],
//  "total_recipients": N, "oldest_queued_at": the oldest of all, or null when none}, the
// groups in their order, times ISO 8601.
boost::json::object queue_summary_json(const std::vector<store::QueueGroup>& groups);

}  // namespace posthorn::api
