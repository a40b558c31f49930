#include "api/auth_throttle.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

using namespace std::chrono_literals;

TEST(AuthThrottle, SlowsThenLocksOutAClient) {
    AuthThrottle t({.max_failures = 5, .window = 60s, .step = 100ms, .max_delay = 250ms});
    const auto t0 = AuthThrottle::Clock::now();
    EXPECT_EQ(t.failed("192.0.2.1", "ph_AAAAAAAA", t0).delay, 0ms);
    EXPECT_EQ(t.failed("192.0.2.1", "ph_BBBBBBBB", t0).delay, 0ms);
    EXPECT_EQ(t.failed("192.0.2.1", "ph_CCCCCCCC", t0).delay, 100ms);
    EXPECT_EQ(t.failed("192.0.2.1", "", t0).delay, 200ms);
    EXPECT_FALSE(t.locked("192.0.2.1", t0));
    EXPECT_EQ(t.failed("192.0.2.1", "", t0).delay, 250ms);  // at most max_delay
    EXPECT_TRUE(t.locked("192.0.2.1", t0 + 59s));
    EXPECT_FALSE(t.locked("192.0.2.2", t0));  // another client is not
    // The failures age out of the window, and with them the lock-out.
    EXPECT_FALSE(t.locked("192.0.2.1", t0 + 60s));
    EXPECT_EQ(t.failures("192.0.2.1", t0 + 60s), 0);
    EXPECT_EQ(t.failed("192.0.2.1", "", t0 + 61s).delay, 0ms);
}

TEST(AuthThrottle, SaysHowLongALockOutLasts) {
    AuthThrottle t({.max_failures = 3, .window = 60s});
    const auto t0 = AuthThrottle::Clock::now();
    t.failed("192.0.2.1", "", t0);
    t.failed("192.0.2.1", "", t0 + 10s);
    EXPECT_EQ(t.locked_for("192.0.2.1", t0 + 10s), 0s);  // not yet
    t.failed("192.0.2.1", "", t0 + 20s);
    // Locked until the first failure ages out, rounded up to a whole second.
    EXPECT_EQ(t.locked_for("192.0.2.1", t0 + 20s), 40s);
    EXPECT_EQ(t.locked_for("192.0.2.1", t0 + 20s + 1500ms), 39s);
    EXPECT_EQ(t.locked_for("192.0.2.1", t0 + 59s + 999ms), 1s);
    EXPECT_EQ(t.locked_for("192.0.2.1", t0 + 60s), 0s);
    EXPECT_FALSE(t.locked("192.0.2.1", t0 + 60s));
    EXPECT_EQ(t.locked_for("192.0.2.2", t0), 0s);  // a client never seen
    // More failures while locked (SMTP counts them): the oldest that keeps it locked counts.
    t.failed("192.0.2.3", "", t0);
    t.failed("192.0.2.3", "", t0 + 5s);
    t.failed("192.0.2.3", "", t0 + 6s);
    t.failed("192.0.2.3", "", t0 + 30s);
    EXPECT_EQ(t.locked_for("192.0.2.3", t0 + 30s), 35s);
}

TEST(AuthThrottle, AKeyGuessedFromManyClientsIsSlowedWithoutLockingThemOut) {
    AuthThrottle t({.max_failures = 5, .window = 60s, .step = 100ms, .max_delay = 1s});
    const auto t0 = AuthThrottle::Clock::now();
    for (int i = 0; i < 4; ++i) t.failed("198.51.100." + std::to_string(i), "ph_TARGET00", t0);
    // The fifth client has failed once, but the prefix four times before: slowed.
    EXPECT_EQ(t.failed("198.51.100.9", "ph_TARGET00", t0).delay, 300ms);
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(t.locked("198.51.100." + std::to_string(i), t0));
}

TEST(AuthThrottle, StaysBoundedUnderAFloodOfClients) {
    AuthThrottle t({.max_failures = 3, .window = 60s});
    const auto t0 = AuthThrottle::Clock::now();
    for (std::size_t i = 0; i < AuthThrottle::kMaxTracked + 10; ++i)
        t.failed("c" + std::to_string(i), "", t0);
    // Everything was dropped once at the bound; the latest are counted again.
    EXPECT_EQ(t.failures("c0", t0), 0);
    EXPECT_EQ(t.failures("c" + std::to_string(AuthThrottle::kMaxTracked + 9), t0), 1);
}

}  // namespace
}  // namespace posthorn::api
