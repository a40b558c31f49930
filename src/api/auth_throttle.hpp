// api/auth_throttle.hpp — failed SMTP AUTH slows down, then locks out, the client that
// fails (Postfix's anvil auth rate and fail2ban are the models): guessing keys through the
// submission listener goes at a few a minute instead of thousands a second.
//
// Failures are counted per client (core::client_of: an IPv4 address or an IPv6 /64) and
// per presented key prefix ("ph_" and 8 characters), over the last `window`:
// - from the third failure of a client or of a prefix, each failed answer waits (a tarpit:
//   step × the failures past two, at most max_delay); a correct key is never delayed;
// - at max_failures of a client, that client is locked out until its failures age out of
//   the window: each AUTH is answered 454 4.7.0 without looking at the key. Another client
//   presenting a valid key is not affected, whatever the prefix's count.
//
// Thread-safe; memory bounded (at most kMaxTracked clients and prefixes each).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace posthorn::api {

struct AuthThrottleOptions {
    int max_failures = 10;
    std::chrono::seconds window{600};
    std::chrono::milliseconds step{500};
    std::chrono::milliseconds max_delay{5000};
};

class AuthThrottle {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t kMaxTracked = 100'000;

    explicit AuthThrottle(AuthThrottleOptions options) : options_(options) {}

    // True while `client` is locked out.
    bool locked(const std::string& client, Clock::time_point now);
    // How long `client` stays locked out: until enough of its failures age out of the
    // window, in whole seconds rounded up (a Retry-After); 0 when it is not locked out.
    std::chrono::seconds locked_for(const std::string& client, Clock::time_point now);
    // Counts a failure of `client` presenting a key that starts with `prefix` ("" when it
    // did not look like a key): how long to wait before saying so, and the client's
    // failures now (max_failures or more: it is locked out).
    struct Failure {
        std::chrono::milliseconds delay{0};
        int failures = 0;
    };
    Failure failed(const std::string& client, std::string_view prefix, Clock::time_point now);
    // The failures of `client` counted now.
    int failures(const std::string& client, Clock::time_point now);
    const AuthThrottleOptions& options() const { return options_; }

  private:
    using Times = std::deque<Clock::time_point>;
    // Drops what has aged out of the window; answers the count left.
    int count(Times& t, Clock::time_point now) const;
    void bound(std::unordered_map<std::string, Times>& m, Clock::time_point now);

    AuthThrottleOptions options_;
    std::mutex mutex_;
    std::unordered_map<std::string, Times> clients_;
    std::unordered_map<std::string, Times> prefixes_;
};

}  // namespace posthorn::api
