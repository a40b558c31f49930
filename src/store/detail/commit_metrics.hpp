// store/detail/commit_metrics.hpp — posthorn_store_commit_duration_seconds: how long each
// back end's group commit takes (the COMMIT itself: the fsync of SQLite, the round trip and
// WAL flush of PostgreSQL). One family for every back end. Private to store/.
#pragma once

#include <chrono>

namespace posthorn::store::detail {

void observe_commit(std::chrono::nanoseconds took) noexcept;

}  // namespace posthorn::store::detail
