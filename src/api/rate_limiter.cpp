#include "api/rate_limiter.hpp"

#include <algorithm>

namespace posthorn::api {

std::optional<RateLimiter::Denied> RateLimiter::reserve(const std::string& account_id, UnixMs now) {
    std::lock_guard lock(mutex_);
    auto& w = windows_[account_id];
    while (!w.empty() && w.front() <= now - kWindowMs) w.pop_front();
    if (static_cast<int>(w.size()) >= per_minute_) {
        const auto wait_ms = w.front() + kWindowMs - now;
        return Denied{static_cast<int>(std::max<UnixMs>(1, (wait_ms + 999) / 1000))};
    }
    // Keep the window sorted even if the clock steps back a little.
    w.insert(std::upper_bound(w.begin(), w.end(), now), now);
    return std::nullopt;
}

void RateLimiter::release(const std::string& account_id, UnixMs reserved_at) {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(account_id);
    if (it == windows_.end()) return;
    auto& w = it->second;
    auto pos = std::find(w.begin(), w.end(), reserved_at);
    if (pos != w.end()) w.erase(pos);
}

}  // namespace posthorn::api
