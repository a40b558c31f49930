// The contract of JobLeaseStore: a periodic job runs on one node at a time.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

TEST_P(StoreContract, JobLeasesAreHeldByOneOwnerAtATime) {
    auto take = [&](const char* job, const char* owner, UnixMs now, UnixMs until) {
        auto r = run(store().take_job_lease(job, owner, now, until));
        EXPECT_TRUE(r) << r.error().message();
        return r && *r;
    };
    EXPECT_TRUE(take("retention", "node-a", kT0, kT0 + 100)) << "free";
    EXPECT_FALSE(take("retention", "node-b", kT0 + 50, kT0 + 150)) << "node-a's";
    EXPECT_FALSE(take("retention", "node-b", kT0 + 99, kT0 + 150)) << "node-a's till 100";
    EXPECT_TRUE(take("domain-check", "node-b", kT0 + 50, kT0 + 150)) << "another job";
    EXPECT_TRUE(take("retention", "node-a", kT0 + 60, kT0 + 300)) << "its own: renewed";
    EXPECT_FALSE(take("retention", "node-b", kT0 + 200, kT0 + 400)) << "till 300 now";
    EXPECT_TRUE(take("retention", "node-b", kT0 + 300, kT0 + 400)) << "ran out: taken over";
    EXPECT_FALSE(take("retention", "node-a", kT0 + 350, kT0 + 500)) << "node-b's now";
    EXPECT_TRUE(take("retention", "node-b", kT0 + 350, kT0 + 500));
}

// Nodes racing for a free lease: one of them gets it.
TEST_P(StoreContract, OneOfManyRacingNodesTakesAJobLease) {
    auto& node = another_node();
    std::vector<asio::awaitable<Result<bool>>> tries;
    for (int i = 0; i < 8; ++i)
        tries.push_back(
            (i % 2 ? node : store())
                .take_job_lease("retention", "node-" + std::to_string(i), kT0, kT0 + 1000));
    int holders = 0;
    for (const auto& r : run_all(std::move(tries))) {
        ASSERT_TRUE(r) << r.error().message();
        holders += *r ? 1 : 0;
    }
    EXPECT_EQ(holders, 1);
}

}  // namespace
}  // namespace posthorn::store::contract
