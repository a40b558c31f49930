// The contract of LogStore: the request log, appended without waiting, listed per account
// with filters, in either order, by pages with their totals, and expired by time.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

// Entry i of 25 of `account`, at kT0 + 1000 + i: POST every fifth, 404 every third, a
// dashboard session's every fourth.
LogEntry entry(const Account& account, int i) {
    const UnixMs at = kT0 + 1000 + i;
    return LogEntry{.id = id_at("log_", at),
                    .account_id = account.id,
                    .created_at = at,
                    .method = i % 5 == 0 ? "POST" : "GET",
                    .url = "/v1/logs?i=" + std::to_string(i),
                    .status = i % 3 == 0 ? 404 : 200,
                    .duration_ms = i,
                    .ip = "192.0.2." + std::to_string(i),
                    .user_agent = "agent/" + std::to_string(i),
                    .session = i % 4 == 0};
}

std::vector<UnixMs> times(const Page<LogEntry>& page) {
    std::vector<UnixMs> out;
    for (const auto& e : page.items) out.push_back(e.created_at);
    return out;
}

TEST_P(StoreContract, LogsFilterSortPageAndExpire) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<LogEntry> written;
    for (int i = 0; i < 25; ++i) {
        written.push_back(entry(a, i));
        store().append_log(written.back());
    }
    store().append_log(entry(b, 40));
    ASSERT_TRUE(run(store().flush()));

    auto page = run(store().list_logs({.account_id = a.id, .page = 1, .limit = 10}));
    ASSERT_TRUE(page) << page.error().message();
    EXPECT_EQ(page->total, 25);
    ASSERT_EQ(page->items.size(), 10u);
    EXPECT_EQ(page->items.front().created_at, kT0 + 1024) << "newest first by default";
    EXPECT_EQ(page->items.back().created_at, kT0 + 1015);
    // Every field comes back as written.
    const auto& got = page->items.front();
    const auto& want = written[24];
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(got.account_id, a.id);
    EXPECT_EQ(got.method, want.method);
    EXPECT_EQ(got.url, want.url);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.duration_ms, want.duration_ms);
    EXPECT_EQ(got.ip, want.ip);
    EXPECT_EQ(got.user_agent, want.user_agent);
    for (std::size_t k = 0; k < page->items.size(); ++k)  // entries 24 … 15: 24, 20, 16 a session's
        EXPECT_EQ(page->items[k].session, written[24 - k].session) << k;

    auto last = run(
        store().list_logs({.account_id = a.id, .page = 3, .limit = 10, .order = SortOrder::asc}));
    ASSERT_TRUE(last);
    EXPECT_EQ(last->total, 25);
    EXPECT_EQ(times(*last),
              (std::vector<UnixMs>{kT0 + 1020, kT0 + 1021, kT0 + 1022, kT0 + 1023, kT0 + 1024}));
    auto beyond = run(store().list_logs({.account_id = a.id, .page = 4, .limit = 10}));
    ASSERT_TRUE(beyond);
    EXPECT_TRUE(beyond->items.empty());
    EXPECT_EQ(beyond->total, 25) << "the total of the filter, whatever the page";

    auto posts = run(store().list_logs({.account_id = a.id, .limit = 100, .method = "POST"}));
    EXPECT_EQ(posts->total, 5);
    EXPECT_EQ(times(*posts),
              (std::vector<UnixMs>{kT0 + 1020, kT0 + 1015, kT0 + 1010, kT0 + 1005, kT0 + 1000}));
    auto missing = run(store().list_logs({.account_id = a.id, .limit = 100, .status = 404}));
    EXPECT_EQ(missing->total, 9);
    auto both = run(store().list_logs({.account_id = a.id,
                                       .limit = 1,
                                       .status = 404,
                                       .method = "POST",
                                       .order = SortOrder::asc}));
    EXPECT_EQ(both->total, 2) << "0 and 15";
    EXPECT_EQ(times(*both), std::vector<UnixMs>{kT0 + 1000});
    auto none = run(store().list_logs({.account_id = a.id, .method = "DELETE"}));
    EXPECT_EQ(none->total, 0);
    EXPECT_TRUE(none->items.empty());

    auto gone = run(store().delete_logs_before(kT0 + 1010));
    ASSERT_TRUE(gone);
    EXPECT_EQ(*gone, 10) << "created before the cutoff, not at it";
    auto kept = run(store().list_logs({.account_id = a.id, .limit = 100, .order = SortOrder::asc}));
    EXPECT_EQ(kept->total, 15);
    ASSERT_EQ(kept->items.size(), 15u);
    EXPECT_EQ(kept->items.front().created_at, kT0 + 1010);
    EXPECT_EQ(run(store().list_logs({.account_id = a.id, .method = "POST"}))->total, 3);
    EXPECT_EQ(run(store().list_logs({.account_id = b.id}))->total, 1) << "after the cutoff";
    EXPECT_EQ(*run(store().delete_logs_before(kT0 + 1010)), 0);
    EXPECT_EQ(*run(store().delete_logs_before(kT0 + 2000)), 16) << "every account's";
    EXPECT_EQ(run(store().list_logs({.account_id = b.id}))->total, 0);
}

// Entries of one millisecond come in the order of their ids, both ways; each account sees
// its own.
TEST_P(StoreContract, LogEntriesOfOneMomentAreOrderedByTheirIds) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
        auto e = entry(a, 0);
        e.id = id_at("log_", e.created_at);  // ascending
        e.url = "/" + std::to_string(i);
        ids.push_back(e.id);
        store().append_log(e);
        auto other = entry(b, 0);
        other.id = id_at("log_", other.created_at);
        store().append_log(other);
    }
    ASSERT_TRUE(run(store().flush()));
    auto asc = run(store().list_logs({.account_id = a.id, .order = SortOrder::asc}));
    ASSERT_TRUE(asc);
    ASSERT_EQ(asc->items.size(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(asc->items[i].id, ids[i]);
    auto desc = run(store().list_logs({.account_id = a.id, .page = 2, .limit = 3}));
    ASSERT_EQ(desc->items.size(), 1u);
    EXPECT_EQ(desc->items[0].id, ids[0]);
    EXPECT_EQ(desc->total, 4);
    auto of_b = run(store().list_logs({.account_id = b.id, .limit = 10}));
    ASSERT_TRUE(of_b);
    EXPECT_EQ(of_b->total, 4);
    for (const auto& e : of_b->items) EXPECT_EQ(e.account_id, b.id);
}

}  // namespace
}  // namespace posthorn::store::contract
