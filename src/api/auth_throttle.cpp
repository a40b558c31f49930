#include "api/auth_throttle.hpp"

#include <algorithm>

namespace posthorn::api {

namespace {
constexpr int kFreeFailures = 2;  // a typo or two is answered at once
}

int AuthThrottle::count(Times& t, Clock::time_point now) const {
    while (!t.empty() && now - t.front() >= options_.window) t.pop_front();
    return static_cast<int>(t.size());
}

// A flood of made-up clients or prefixes must not grow the maps without end: past the
// bound, what has aged out goes, and if that is not enough, everything does (the
// attacker then starts again from nothing, as anyone does after a restart).
void AuthThrottle::bound(std::unordered_map<std::string, Times>& m, Clock::time_point now) {
    if (m.size() < kMaxTracked) return;
    std::erase_if(m, [&](const auto& kv) {
        return kv.second.empty() || now - kv.second.back() >= options_.window;
    });
    if (m.size() >= kMaxTracked) m.clear();
}

bool AuthThrottle::locked(const std::string& client, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = clients_.find(client);
    return it != clients_.end() && count(it->second, now) >= options_.max_failures;
}

std::chrono::seconds AuthThrottle::locked_for(const std::string& client, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = clients_.find(client);
    if (it == clients_.end()) return std::chrono::seconds{0};
    const int n = count(it->second, now);
    if (n < options_.max_failures) return std::chrono::seconds{0};
    // Unlocked once the failure that makes the count max_failures ages out.
    const auto until =
        it->second[static_cast<std::size_t>(n - options_.max_failures)] + options_.window;
    return std::max(std::chrono::seconds{1}, std::chrono::ceil<std::chrono::seconds>(until - now));
}

int AuthThrottle::failures(const std::string& client, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = clients_.find(client);
    return it == clients_.end() ? 0 : count(it->second, now);
}

AuthThrottle::Failure AuthThrottle::failed(const std::string& client, std::string_view prefix,
                                           Clock::time_point now) {
    std::lock_guard lock(mutex_);
    bound(clients_, now);
    auto& mine = clients_[client];
    count(mine, now);
    mine.push_back(now);
    // A client's list never needs more than max_failures entries to say it is locked.
    while (static_cast<int>(mine.size()) > options_.max_failures) mine.pop_front();
    const int failures = static_cast<int>(mine.size());
    int worst = failures;
    if (!prefix.empty()) {
        bound(prefixes_, now);
        auto& theirs = prefixes_[std::string(prefix)];
        count(theirs, now);
        theirs.push_back(now);
        while (static_cast<int>(theirs.size()) > options_.max_failures) theirs.pop_front();
        worst = std::max(worst, static_cast<int>(theirs.size()));
    }
    if (worst <= kFreeFailures) return {.failures = failures};
    return {.delay = std::min(options_.max_delay, options_.step * (worst - kFreeFailures)),
            .failures = failures};
}

}  // namespace posthorn::api
