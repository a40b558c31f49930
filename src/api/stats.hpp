// api/stats.hpp — GET /v1/stats (issue 31; docs/api.md "GET /v1/stats"): the account's
// emails accepted, delivered, bounced (by class), complained, failed, blocked, opened and
// clicked per hour or day between two times, for the account, one of its domains or one
// tag. Answered from the store's counters (StatsStore), which the domain's rules keep as the
// emails are stored and change (domain/stats.hpp), never by reading emails. Any key of the
// account may ask; a key tied to a domain reads that domain's counts only.
#pragma once

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> get_stats(detail::Context ctx);

}  // namespace posthorn::api
