// api/rate_limiter.hpp — the send rate per account (limits.send_rate_per_minute): a
// sliding window of the last 60 seconds. A send reserves a slot before it is built and
// stored, and gives it back if it is refused or turns out to be an idempotent replay, so
// that a refused request counts nothing. Per process: with several nodes on PostgreSQL each
// node enforces the limit on its own. Thread-safe.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/time.hpp"

namespace posthorn::api {

class RateLimiter {
  public:
    explicit RateLimiter(int per_minute) : per_minute_(per_minute) {}

    struct Denied {
        int retry_after_s;  // whole seconds until a slot frees up (at least 1)
    };
    // The slot's time stamp, or how long to wait.
    std::optional<Denied> reserve(const std::string& account_id, UnixMs now);
    void release(const std::string& account_id, UnixMs reserved_at);

  private:
    static constexpr UnixMs kWindowMs = 60'000;
    int per_minute_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::deque<UnixMs>> windows_;  // guarded by mutex_
};

}  // namespace posthorn::api
