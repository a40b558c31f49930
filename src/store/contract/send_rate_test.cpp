// The contract of SendRateStore: a bounded add to an account's sends per second, atomic
// across nodes, over a window the caller names.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

constexpr std::int64_t kS0 = kT0 / 1000;  // a second

TEST_P(StoreContract, SendCountsAddUpToTheCapOverTheWindow) {
    auto add = [&](const char* account, std::int64_t second, std::int64_t n, std::int64_t cap) {
        auto r = run(store().add_sends(account, second - 59, second, n, cap));
        EXPECT_TRUE(r) << r.error().message();
        return r ? *r : SendCounts{};
    };
    auto r = add("acc_a", kS0, 4, 10);
    EXPECT_EQ(r.added, 4);
    EXPECT_EQ(r.total, 4);
    EXPECT_EQ(r.oldest_second, kS0);
    r = add("acc_a", kS0 + 5, 4, 10);
    EXPECT_EQ(r.added, 4);
    EXPECT_EQ(r.total, 8);
    EXPECT_EQ(r.oldest_second, kS0) << "the earliest second holding a count";
    r = add("acc_a", kS0 + 6, 5, 10);
    EXPECT_EQ(r.added, 2) << "only as many as the cap leaves";
    EXPECT_EQ(r.total, 10);
    r = add("acc_a", kS0 + 7, 1, 10);
    EXPECT_EQ(r.added, 0) << "full";
    EXPECT_EQ(r.total, 10);
    EXPECT_EQ(r.oldest_second, kS0);
    EXPECT_EQ(add("acc_b", kS0 + 7, 3, 10).added, 3) << "another account counts apart";

    // Given back: a negative add goes in whole, and makes room.
    r = add("acc_a", kS0 + 6, -2, 10);
    EXPECT_EQ(r.added, -2);
    EXPECT_EQ(r.total, 8);
    EXPECT_EQ(add("acc_a", kS0 + 8, 3, 10).added, 2);

    // The window moves on: kS0's four leave it at kS0 + 60.
    r = add("acc_a", kS0 + 59, 1, 10);
    EXPECT_EQ(r.added, 0) << "kS0 is still in the window";
    r = add("acc_a", kS0 + 60, 5, 10);
    EXPECT_EQ(r.added, 4) << "kS0's four left it";
    EXPECT_EQ(r.total, 10);
    EXPECT_EQ(r.oldest_second, kS0 + 5);
    r = add("acc_a", kS0 + 200, 0, 10);
    EXPECT_EQ(r.total, 0) << "everything left it";
    EXPECT_EQ(r.oldest_second, 0);
}

// Nodes adding at once never go past the cap together.
TEST_P(StoreContract, RacingNodesShareOneSendCap) {
    auto& node = another_node();
    std::vector<asio::awaitable<Result<SendCounts>>> adds;
    for (int i = 0; i < 16; ++i)
        adds.push_back((i % 2 ? node : store()).add_sends("acc_r", kS0 - 59, kS0, 3, 20));
    std::int64_t added = 0;
    for (const auto& r : run_all(std::move(adds))) {
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_LE(r->total, 20);
        added += r->added;
    }
    EXPECT_EQ(added, 20);
}

}  // namespace
}  // namespace posthorn::store::contract
