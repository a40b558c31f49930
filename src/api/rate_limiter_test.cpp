#include "api/rate_limiter.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

TEST(RateLimiter, AllowsTheRateThenTellsHowLongToWait) {
    RateLimiter r(3);
    EXPECT_FALSE(r.reserve("a", 1000));
    EXPECT_FALSE(r.reserve("a", 2000));
    EXPECT_FALSE(r.reserve("a", 3000));
    auto denied = r.reserve("a", 4000);
    ASSERT_TRUE(denied);
    EXPECT_EQ(denied->retry_after_s, 57);  // the slot taken at 1.000 s frees at 61.000 s
    EXPECT_FALSE(r.reserve("b", 4000)) << "accounts have separate windows";
    EXPECT_FALSE(r.reserve("a", 61000)) << "the oldest slot has left the window";
}

TEST(RateLimiter, AReleasedSlotCountsNothing) {
    RateLimiter r(1);
    EXPECT_FALSE(r.reserve("a", 1000));
    r.release("a", 1000);
    EXPECT_FALSE(r.reserve("a", 1001));
    EXPECT_TRUE(r.reserve("a", 1002));
}

}  // namespace
}  // namespace posthorn::api
