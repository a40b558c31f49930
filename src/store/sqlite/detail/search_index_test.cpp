// The search index gives the lists the answers the scan gives: a store with the index and
// one without, on the same file, asked the same searches, before the index has caught up
// (the tail is scanned), once it has, and with a tail on top of an index.
#include "store/sqlite/detail/search_index.hpp"
#include "core/block_on.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/id.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::store::sqlite {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Each email here has a millisecond of its own (rows of one millisecond are listed in the
// order of their ids by a scan, and in the order they were indexed by the index), and an id
// made from it with first_id_at(), not new_id(): ids never go back in time within a process
// (core/id.hpp), so new_id() with these times would move the ids of the tests that run after.
constexpr UnixMs kBase = 1'950'000'000'000;

class SearchIndexTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ph_search_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        fs::create_directories(dir_);
        t0_ = kBase + 10'000'000 * counter_;
        auto s = SqliteStore::open({.path = path(), .readers = 2});
        ASSERT_TRUE(s) << s.error().message();
        indexed_ = std::move(*s);
        auto plain = SqliteStore::open({.path = path(), .readers = 1, .search_index = false});
        ASSERT_TRUE(plain) << plain.error().message();
        scanned_ = std::move(*plain);
        for (const char* a : {"acc_a", "acc_b"}) {
            ASSERT_TRUE(run(indexed_->create_account({.id = a, .name = a})));
            ASSERT_TRUE(run(indexed_->create_domain({.id = std::string("dom_") + a,
                                                     .account_id = a,
                                                     .name = "x.example",
                                                     .token = std::string("t") + a},
                                                    {})));
        }
    }
    void TearDown() override {
        indexed_.reset();
        scanned_.reset();
        fs::remove_all(dir_);
    }
    std::string path() const { return (dir_ / "s.db").string(); }
    // The emails in the index file.
    int indexed_emails() const {
        sqlite3* db = nullptr;
        sqlite3_open((path() + "-search").c_str(), &db);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(db, "SELECT count(*) FROM email_docs", -1, &st, nullptr);
        sqlite3_step(st);
        const auto n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return n;
    }

    template <class T>
    static T run(asio::awaitable<T> aw) {
        return block_on(std::move(aw));
    }

    // Email k of `account`, made at t0_ + 10k: subject words and recipients that the
    // searches below pick among.
    void add_email(const std::string& account, int k, std::optional<UnixMs> when = {}) {
        static const char* kWords[] = {"Invoice", "Shipped", "Welcome", "Receipt"};
        const UnixMs at = when ? *when : t0_ + 10 * k;
        NewEmail n;
        n.email = {
            .id = first_id_at("em_", at),
            .account_id = account,
            .domain_id = "dom_" + account,
            .from_email = k % 2 ? "billing@x.example" : "news@x.example",
            .from_name = k % 3 ? "Acme" : "",
            .to_display = "user" + std::to_string(k) + "@dest" + std::to_string(k % 5) + ".net",
            .subject = std::string(kWords[k % 4]) + " no. " + std::to_string(k),
            .message_id = "m" + std::to_string(k),
            .return_token = "rt" + std::to_string(k),
            .created_at = at,
            .queued_at = at};
        n.email.envelope_id = first_id_at("env_", at);
        n.total_recipients = 2;
        n.recipients = {Recipient{.address = n.email.to_display, .domain = "dest.net"},
                        Recipient{.address = "cc" + std::to_string(k) + "@copy.org",
                                  .domain = "copy.org",
                                  .type = domain::RecipientType::cc}};
        n.raw = "Subject: x\r\n\r\nx\r\n";
        ASSERT_TRUE(run((writes_to_ ? writes_to_ : indexed_.get())->create_email(std::move(n))));
    }

    void add_inbound(const std::string& account, int k) {
        const UnixMs at = t0_ + 10 * k + 5;
        const auto id = first_id_at("in_", at);
        std::vector<InboundEmail> in{{.id = id,
                                      .account_id = account,
                                      .domain_id = "dom_" + account,
                                      .from_email = "sender" + std::to_string(k) + "@far.example",
                                      .from_name = k % 2 ? "Far Away" : "",
                                      .to_address = "inbox@x.example",
                                      .subject = k % 3 ? "Question " + std::to_string(k) : "Reply",
                                      .raw = "x",
                                      .received_at = at}};
        ASSERT_TRUE(run(indexed_->create_inbound(std::move(in), {})));
    }

    // Every search below, on both stores: the same totals and pages.
    void expect_same_answers(const std::string& when) {
        const std::vector<std::string> needles = {
            "invoice", "INVOICE", "user1", "@dest3.net",   "cc17@", "no. 2",
            "billing", "acme",    "env_",  "nothing here", "ppy.or"};
        for (const auto& account : {"acc_a", "acc_b"}) {
            for (const auto& needle : needles) {
                for (auto order : {SortOrder::desc, SortOrder::asc}) {
                    for (const std::int64_t page : {1, 2, 4}) {
                        SearchQuery q{.account_id = account,
                                      .page = page,
                                      .limit = 7,
                                      .order = order,
                                      .search = needle};
                        const auto what =
                            when + " " + account + " '" + needle + "' page " + std::to_string(page);
                        compare_emails(q, what);
                        q.start = t0_ + 100;
                        q.end = t0_ + 400;
                        compare_emails(q, what + " in dates");
                        q.sort_by = "created_at";
                        auto a = run(indexed_->list_envelopes(q));
                        auto b = run(scanned_->list_envelopes(q));
                        ASSERT_TRUE(a && b) << what;
                        EXPECT_EQ(a->total, b->total) << what << " (envelopes)";
                        ASSERT_EQ(a->items.size(), b->items.size()) << what << " (envelopes)";
                        for (std::size_t i = 0; i < a->items.size(); ++i)
                            EXPECT_EQ(a->items[i].id, b->items[i].id) << what << " (envelopes)";
                        SearchQuery iq{.account_id = account,
                                       .page = page,
                                       .limit = 5,
                                       .sort_by = "received_at",
                                       .order = order,
                                       .search = needle == "invoice" ? "QUESTION" : needle};
                        auto c = run(indexed_->list_inbound(iq));
                        auto d = run(scanned_->list_inbound(iq));
                        ASSERT_TRUE(c && d) << what;
                        EXPECT_EQ(c->total, d->total) << what << " (inbound)";
                        ASSERT_EQ(c->items.size(), d->items.size()) << what << " (inbound)";
                        for (std::size_t i = 0; i < c->items.size(); ++i)
                            EXPECT_EQ(c->items[i].id, d->items[i].id) << what << " (inbound)";
                    }
                }
            }
        }
    }
    // Lists without a search: date bounds (counted in the index) and pages.
    void expect_same_lists(const std::string& when) {
        for (const auto& account : {"acc_a", "acc_b"})
            for (auto order : {SortOrder::desc, SortOrder::asc})
                for (const std::int64_t page : {1, 3}) {
                    SearchQuery q{.account_id = account, .page = page, .limit = 6, .order = order};
                    q.start = t0_ + 95;
                    q.end = t0_ + 505;
                    compare_emails(q, when + " " + account + " dates page " + std::to_string(page));
                    q.end.reset();
                    compare_emails(q, when + " " + account + " from a date");
                }
    }
    void compare_emails(const SearchQuery& q, const std::string& what) {
        auto a = run(indexed_->list_emails(q));
        auto b = run(scanned_->list_emails(q));
        ASSERT_TRUE(a && b) << what;
        EXPECT_EQ(a->total, b->total) << what;
        ASSERT_EQ(a->items.size(), b->items.size()) << what;
        for (std::size_t i = 0; i < a->items.size(); ++i) {
            EXPECT_EQ(a->items[i].id, b->items[i].id) << what << " item " << i;
            EXPECT_EQ(a->items[i].subject, b->items[i].subject) << what;
        }
    }

    static inline std::atomic<int> counter_{0};
    UnixMs t0_ = kBase;
    fs::path dir_;
    std::unique_ptr<SqliteStore> indexed_, scanned_;
    SqliteStore* writes_to_ = nullptr;  // add_email's store: indexed_ unless set
};

TEST_F(SearchIndexTest, TheIndexAnswersAsTheScanDoes) {
    for (int k = 0; k < 60; ++k) {
        add_email(k % 3 ? "acc_a" : "acc_b", k);
        add_inbound(k % 2 ? "acc_a" : "acc_b", k);
    }
    expect_same_answers("all in the tail or being indexed");
    expect_same_lists("all in the tail or being indexed");
    ASSERT_TRUE(indexed_->wait_search_indexed(10s));
    EXPECT_EQ(indexed_emails(), 60) << "every email indexed";
    expect_same_answers("all indexed");
    expect_same_lists("all indexed");
    // More on top: an index and a tail together (the next ones may be indexed meanwhile or
    // not; the answers must not depend on it).
    for (int k = 60; k < 90; ++k) {
        add_email(k % 3 ? "acc_a" : "acc_b", k);
        add_inbound(k % 2 ? "acc_a" : "acc_b", k);
    }
    expect_same_answers("indexed and a tail");
    expect_same_lists("indexed and a tail");
    ASSERT_TRUE(indexed_->wait_search_indexed(10s));
    expect_same_answers("all indexed again");
}

// A page deeper than 2000 rows is read from the index's narrow rows: the same page.
TEST_F(SearchIndexTest, DeepPagesAreThoseOfTheScan) {
    for (int k = 0; k < 2150; ++k) add_email("acc_a", k);
    ASSERT_TRUE(indexed_->wait_search_indexed(30s));
    for (int k = 2150; k < 2170; ++k) add_email("acc_a", k);  // and a tail
    for (auto order : {SortOrder::desc, SortOrder::asc})
        for (const std::int64_t page : {2, 102, 103, 107, 109}) {  // offsets 20; 2020 on
            SearchQuery q{.account_id = "acc_a", .page = page, .limit = 20, .order = order};
            compare_emails(q, "deep page " + std::to_string(page));
            auto e = run(indexed_->list_emails(q));
            ASSERT_TRUE(e);
            EXPECT_EQ(e->total, 2170);
            EXPECT_EQ(e->items.size(), page == 109 ? 10u : 20u) << page;
        }
}

// A time range's total comes from the counts of the documents per second, minute, hour and
// day, and the documents of its partial seconds: the same as the scan's for ranges that start
// and end anywhere, on the buckets' edges and off them.
TEST_F(SearchIndexTest, TotalsOfTimeRangesAreTheScans) {
    constexpr UnixMs kDay = 86'400'000, kSpan = 3 * kDay;
    const UnixMs day0 = (t0_ / kDay + 1) * kDay;  // a day's first millisecond
    std::vector<UnixMs> times;
    constexpr int kEmails = 1200;
    for (int k = 0; k < kEmails; ++k) times.push_back(day0 + (k * 648'017LL) % kSpan);
    for (int k = 0; k < kEmails; ++k) add_email("acc_a", k, times[k]);
    ASSERT_TRUE(indexed_->wait_search_indexed(30s));
    add_email("acc_a", kEmails, day0 + kSpan + 5);  // and a tail
    times.push_back(day0 + kSpan + 5);
    std::vector<std::pair<UnixMs, UnixMs>> ranges = {
        {day0, day0 + kSpan},
        {day0 + kDay, day0 + 2 * kDay - 1},            // one whole day
        {day0 + 3'600'000, day0 + 7'200'000 - 1},      // one whole hour
        {day0 + 60'000 * 7, day0 + 60'000 * 8},        // a minute and a millisecond
        {day0 + 1'000 * 13, day0 + 1'000 * 13 + 999},  // one second
        {day0 - 1, day0},
        {day0 + kDay - 1, day0 + kDay + 1},
    };
    std::uint64_t x = 12345;
    for (int i = 0; i < 60; ++i) {  // and ranges anywhere
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto a = day0 - 1000 + static_cast<UnixMs>((x >> 16) % (kSpan + 2000));
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto len = static_cast<UnixMs>((x >> 16) % (i % 3 == 0 ? 5'000 : kDay * 2));
        ranges.emplace_back(a, a + len);
    }
    for (const auto& [start, end] : ranges) {
        const auto want = std::count_if(times.begin(), times.end(),
                                        [&](UnixMs t) { return t >= start && t <= end; });
        const auto what = std::to_string(start - day0) + ".." + std::to_string(end - day0);
        SearchQuery q{.account_id = "acc_a", .limit = 5, .start = start, .end = end};
        auto got = run(indexed_->list_emails(q));
        ASSERT_TRUE(got) << what;
        EXPECT_EQ(got->total, want) << what;
        compare_emails(q, what);
    }
    // Pages more than 1,000 documents in: their window is found by the buckets.
    for (auto order : {SortOrder::desc, SortOrder::asc})
        for (const std::int64_t page : {144, 150, 171, 172, 173}) {  // offsets 1001 to 1197
            SearchQuery q{.account_id = "acc_a", .page = page, .limit = 7, .order = order};
            compare_emails(q, "deep page " + std::to_string(page));
            q.start = day0 + 1'000;  // leaves out the first email (at day0)
            compare_emails(q, "deep page in dates " + std::to_string(page));
        }
}

// The index is derived data: removed, or of another version, it is built again from the
// store when the store opens.
TEST_F(SearchIndexTest, AMissingIndexIsBuiltAgain) {
    for (int k = 0; k < 20; ++k) add_email("acc_a", k);
    ASSERT_TRUE(indexed_->wait_search_indexed(10s));
    indexed_.reset();
    for (const char* suffix : {"-search", "-search-wal", "-search-shm"})
        fs::remove(path() + suffix);
    auto s = SqliteStore::open({.path = path(), .readers = 1});
    ASSERT_TRUE(s) << s.error().message();
    indexed_ = std::move(*s);
    ASSERT_TRUE(indexed_->wait_search_indexed(10s));
    expect_same_answers("rebuilt");
}

// While sends keep coming (each announced by a poke, as the store announces them: one each
// 10 ms here), the indexer leaves them to the tail; once they pause (SearchIndex::kQuiet), it
// indexes them all. The emails are written first, through the store without an index, and
// the store's own indexer is closed: the test's is the only one on the file.
TEST_F(SearchIndexTest, TheIndexWaitsForTheSendsToPause) {
    indexed_.reset();
    writes_to_ = scanned_.get();
    for (int k = 0; k < 60; ++k) add_email("acc_a", k);
    auto index = detail::SearchIndex::open(path());
    ASSERT_TRUE(index) << index.error().message();
    (*index)->start();
    for (int i = 0; i < 60; ++i) {
        (*index)->poke();
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(indexed_emails(), 0) << "indexed beside the stream of sends";
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (indexed_emails() < 60 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(20ms);
    EXPECT_EQ(indexed_emails(), 60) << "indexed once the sends paused";
}

}  // namespace
}  // namespace posthorn::store::sqlite
