#include "api/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "core/block_on.hpp"

namespace posthorn::api {
namespace {

std::optional<RateLimiter::Denied> reserve(RateLimiter& r, const char* account, UnixMs now) {
    auto out = block_on(r.reserve(account, now));
    EXPECT_TRUE(out) << out.error().message();
    return out ? *out : std::nullopt;
}

TEST(LocalRateLimiter, AllowsTheRateThenTellsHowLongToWait) {
    LocalRateLimiter r(3);
    EXPECT_FALSE(reserve(r, "a", 1000));
    EXPECT_FALSE(reserve(r, "a", 2000));
    EXPECT_FALSE(reserve(r, "a", 3000));
    auto denied = reserve(r, "a", 4000);
    ASSERT_TRUE(denied);
    EXPECT_EQ(denied->retry_after_s, 57);  // the slot taken at 1.000 s frees at 61.000 s
    EXPECT_FALSE(reserve(r, "b", 4000)) << "accounts have separate windows";
    EXPECT_FALSE(reserve(r, "a", 61000)) << "the oldest slot has left the window";
}

TEST(LocalRateLimiter, AReleasedSlotCountsNothing) {
    LocalRateLimiter r(1);
    EXPECT_FALSE(reserve(r, "a", 1000));
    r.release("a", 1000);
    EXPECT_FALSE(reserve(r, "a", 1001));
    EXPECT_TRUE(reserve(r, "a", 1002));
}

// The store's side of the shared count, as the contract (store/contract/send_rate_test.cpp)
// has it, in memory: what each node's limiter took from it can be read back.
class CountingStore final : public store::SendRateStore {
  public:
    asio::awaitable<Result<store::SendCounts>> add_sends(std::string account_id, std::int64_t since,
                                                         std::int64_t second, std::int64_t n,
                                                         std::int64_t cap) override {
        ++calls;
        if (fail) co_return Result<store::SendCounts>(store::errc::unavailable);
        auto& counts = accounts[account_id];
        counts.erase(counts.begin(), counts.lower_bound(since));
        store::SendCounts out;
        for (const auto& [s, c] : counts) {
            if (s > second) continue;
            out.total += c;
            if (c > 0 && out.oldest_second == 0) out.oldest_second = s;
        }
        out.added = n < 0 ? n : std::clamp<std::int64_t>(cap - out.total, 0, n);
        counts[second] += out.added;
        out.total += out.added;
        if (out.oldest_second == 0 && out.added > 0) out.oldest_second = second;
        co_return out;
    }
    std::int64_t held(const std::string& account) {
        std::int64_t n = 0;
        for (const auto& [s, c] : accounts[account]) n += c;
        return n;
    }
    std::map<std::string, std::map<std::int64_t, std::int64_t>> accounts;
    int calls = 0;
    bool fail = false;
};

TEST(SharedRateLimiter, TwoNodesShareOneLimit) {
    CountingStore store;
    SharedRateLimiter a(store, 100), b(store, 100);
    ASSERT_EQ(a.max_grant(), 5);
    int accepted = 0;
    // Both nodes send as fast as they can within one second: together they get the 100.
    for (int i = 0; i < 200; ++i)
        if (!reserve(i % 2 ? a : b, "acc", 10'000 + i)) ++accepted;
    EXPECT_EQ(accepted, 100);
    EXPECT_EQ(store.held("acc"), 100);
    EXPECT_LT(store.calls, 200) << "grants, not a round trip per send";
    auto denied = reserve(a, "acc", 10'500);
    ASSERT_TRUE(denied);
    EXPECT_EQ(denied->retry_after_s, 60) << "second 10's sends leave the window at 70.000 s";
    EXPECT_TRUE(reserve(b, "acc", 69'999));
    EXPECT_FALSE(reserve(b, "acc", 70'000));
}

TEST(SharedRateLimiter, SlotsNotUsedGoBackForTheOtherNodes) {
    CountingStore store;
    SharedRateLimiter a(store, 100), b(store, 100);
    // A sends fast (its grants grow), stops within second 10, and holds slots it did not use.
    for (int i = 0; i < 13; ++i) EXPECT_FALSE(reserve(a, "acc", 10'000 + i));
    EXPECT_GT(store.held("acc"), 13) << "a holds a grant it has not used up";
    // A refused send gives its slot back too.
    EXPECT_FALSE(reserve(a, "acc", 10'100));
    a.release("acc", 10'100);
    EXPECT_EQ(block_on(a.return_unused(11'000)), store.held("acc") - 13);
    EXPECT_EQ(store.held("acc"), 13) << "only what was sent still counts";
    EXPECT_EQ(block_on(b.return_unused(11'000)), 0);
    int accepted = 0;
    for (int i = 0; i < 100; ++i)
        if (!reserve(b, "acc", 11'000 + i)) ++accepted;
    EXPECT_EQ(accepted, 87) << "b has everything a did not send";
    // A slot given back after its second has passed goes back too.
    b.release("acc", 11'050);
    EXPECT_EQ(block_on(b.return_unused(12'000)), 1);
    EXPECT_EQ(store.held("acc"), 99);
}

TEST(SharedRateLimiter, AnAccountSendingSlowlyTakesOneSlotAtATime) {
    CountingStore store;
    SharedRateLimiter a(store, 1000);
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(reserve(a, "acc", 10'000 + i * 3000));
    EXPECT_EQ(store.held("acc"), 5);
    EXPECT_EQ(store.calls, 5);
}

TEST(SharedRateLimiter, AStoreErrorIsAnErrorNotASlot) {
    CountingStore store;
    SharedRateLimiter a(store, 10);
    store.fail = true;
    auto r = block_on(a.reserve("acc", 10'000));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), store::errc::unavailable);
    store.fail = false;
    EXPECT_FALSE(reserve(a, "acc", 10'001));
    EXPECT_EQ(store.held("acc"), 1);
}

}  // namespace
}  // namespace posthorn::api
