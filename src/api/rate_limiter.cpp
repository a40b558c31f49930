#include "api/rate_limiter.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace posthorn::api {

namespace {

int seconds_until(UnixMs at, UnixMs now) {
    return static_cast<int>(std::max<UnixMs>(1, (at - now + 999) / 1000));
}

}  // namespace

// ---- one node ----

std::optional<RateLimiter::Denied> LocalRateLimiter::try_reserve(const std::string& account_id,
                                                                 UnixMs now) {
    std::lock_guard lock(mutex_);
    auto& w = windows_[account_id];
    while (!w.empty() && w.front() <= now - kWindowMs) w.pop_front();
    if (static_cast<int>(w.size()) >= per_minute_)
        return Denied{seconds_until(w.front() + kWindowMs, now)};
    // Keep the window sorted even if the clock steps back a little.
    w.insert(std::upper_bound(w.begin(), w.end(), now), now);
    return std::nullopt;
}

asio::awaitable<Result<std::optional<RateLimiter::Denied>>> LocalRateLimiter::reserve(
    std::string account_id, UnixMs now) {
    co_return try_reserve(account_id, now);
}

void LocalRateLimiter::release(const std::string& account_id, UnixMs reserved_at) {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(account_id);
    if (it == windows_.end()) return;
    auto& w = it->second;
    auto pos = std::find(w.begin(), w.end(), reserved_at);
    if (pos != w.end()) w.erase(pos);
}

// ---- several nodes ----

SharedRateLimiter::SharedRateLimiter(store::SendRateStore& store, int per_minute)
    : store_(store),
      per_minute_(per_minute),
      max_grant_(std::clamp<std::int64_t>(per_minute / 20, 1, 256)) {}

void SharedRateLimiter::drop_stale(const std::string& account_id, Grant& g, std::int64_t second) {
    if (g.second >= second) return;
    if (g.left > 0) returns_.push_back({account_id, g.second, g.left});
    g.left = 0;
}

asio::awaitable<Result<std::optional<RateLimiter::Denied>>> SharedRateLimiter::reserve(
    std::string account_id, UnixMs now) {
    using R = Result<std::optional<Denied>>;
    const std::int64_t second = now / 1000;
    std::int64_t ask = 1;
    {
        std::lock_guard lock(mutex_);
        auto& g = grants_[account_id];
        if (g.second == second && g.left > 0) {
            --g.left;
            co_return R(std::nullopt);
        }
        // Back for more within a second: the account sends fast, ask for more at once.
        g.size = g.second >= second - 1 ? std::min(max_grant_, g.size * 2) : 1;
        ask = g.size;
        drop_stale(account_id, g, second);
    }
    auto counts = co_await store_.add_sends(account_id, since(second), second, ask, per_minute_);
    if (!counts) co_return R(boost::system::in_place_error, counts.error());
    if (counts->added <= 0) {
        const UnixMs frees_at = counts->oldest_second > 0
                                    ? counts->oldest_second * 1000 + kWindowMs
                                    : now + 1000;  // taken by slots in other nodes' hands
        co_return R(Denied{seconds_until(frees_at, now)});
    }
    std::lock_guard lock(mutex_);
    auto& g = grants_[account_id];
    if (g.second > second) {  // a later second's grant came meanwhile: this one goes back
        returns_.push_back({account_id, second, counts->added - 1});
    } else {
        drop_stale(account_id, g, second);
        g.second = second;
        g.left += counts->added - 1;
    }
    co_return R(std::nullopt);
}

void SharedRateLimiter::release(const std::string& account_id, UnixMs reserved_at) {
    const std::int64_t second = reserved_at / 1000;
    std::lock_guard lock(mutex_);
    auto& g = grants_[account_id];
    if (g.second == second)
        ++g.left;  // used again within its second, or returned with the rest
    else
        returns_.push_back({account_id, second, 1});
}

asio::awaitable<std::int64_t> SharedRateLimiter::return_unused(UnixMs now) {
    const std::int64_t second = now / 1000;
    std::vector<Return> going;
    {
        std::lock_guard lock(mutex_);
        for (auto it = grants_.begin(); it != grants_.end();) {
            drop_stale(it->first, it->second, second);
            // An account quiet for a window holds nothing worth remembering.
            if (it->second.second < since(second))
                it = grants_.erase(it);
            else
                ++it;
        }
        going.swap(returns_);
    }
    std::int64_t returned = 0;
    for (auto& r : going) {
        if (r.n <= 0 || r.second < since(second)) continue;  // already out of the window
        auto done =
            co_await store_.add_sends(std::move(r.account_id), since(second), r.second, -r.n, 0);
        if (!done)
            log::warn("send rate: giving back {} slots: {}", r.n, done.error().message());
        else
            returned += r.n;
    }
    co_return returned;
}

asio::awaitable<void> SharedRateLimiter::run(const core::Clock& clock) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        timer.expires_after(std::chrono::seconds(1));
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
        co_await return_unused(clock.now_ms());
    }
}

}  // namespace posthorn::api
