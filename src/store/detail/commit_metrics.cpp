#include "store/detail/commit_metrics.hpp"

#include "core/metrics.hpp"

namespace posthorn::store::detail {
namespace {

metrics::Histogram commit_seconds("posthorn_store_commit_duration_seconds",
                                  "Time each group commit of the store took, in seconds.",
                                  metrics::latency_bounds());

}  // namespace

void observe_commit(std::chrono::nanoseconds took) noexcept { commit_seconds.observe(took); }

}  // namespace posthorn::store::detail
