// What PgStore promises beyond the store contract, against a real server (PH_TEST_PG_DSN):
// migrations under the advisory lock, the refusal of a newer schema, other nodes hearing of
// new, released and retried mail (LISTEN/NOTIFY), and connections lost and made again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <thread>

#include "core/id.hpp"
#include "store/pg/detail/conn.hpp"
#include "store/pg/detail/impl.hpp"
#include "store/pg/detail/migrations.hpp"
#include "store/pg/detail/search_indexer.hpp"
#include "store/pg/detail/testing/test_databases.hpp"
#include "store/pg/pg_store.hpp"

namespace posthorn::store::pg {
namespace {

using testing::TestDatabase;

template <class T>
T run(asio::awaitable<T> aw) {
    asio::io_context ctx;
    std::optional<T> out;
    asio::co_spawn(ctx, std::move(aw), [&out](std::exception_ptr e, T v) {
        if (e) std::rethrow_exception(e);
        out = std::move(v);
    });
    ctx.run();
    return std::move(*out);
}

bool eventually(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

// One value of the first row of `sql` on `url`'s database.
std::int64_t scalar(const std::string& url, const std::string& sql) {
    auto c = detail::Conn::open(url);
    if (!c) return -1;
    auto rows = c->exec(sql);
    if (!rows || rows->empty()) return -1;
    return rows->row(0).int64(0);
}

std::unique_ptr<PgStore> open_store(const std::string& url) {
    auto s = PgStore::open({.url = url, .readers = 1});
    EXPECT_TRUE(s) << s.error().message();
    return s ? std::move(*s) : nullptr;
}

class PgStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        db_ = TestDatabase::make();
        if (!db_) GTEST_SKIP() << "no PostgreSQL server (PH_TEST_PG_DSN)";
    }
    std::unique_ptr<TestDatabase> db_;
};

TEST_F(PgStoreTest, AFreshDatabaseIsMigratedOnce) {
    const auto& all = detail::migrations();
    ASSERT_FALSE(all.empty());
    {
        auto s = open_store(db_->url());
        ASSERT_TRUE(s);
        EXPECT_EQ(s->schema_version(), all.back().version);
    }
    auto again = open_store(db_->url());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->schema_version(), all.back().version);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM schema_migrations"),
              static_cast<std::int64_t>(all.size()));
}

// Nodes starting together on an empty database: one migrates, the others wait for its
// advisory lock and find the work done.
TEST_F(PgStoreTest, NodesStartingTogetherMigrateOnce) {
    std::vector<std::thread> nodes;
    std::atomic<int> opened{0};
    for (int i = 0; i < 4; ++i)
        nodes.emplace_back([&] {
            auto s = PgStore::open({.url = db_->url(), .readers = 1, .listen = false});
            if (s) ++opened;
        });
    for (auto& t : nodes) t.join();
    EXPECT_EQ(opened, 4);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM schema_migrations"),
              static_cast<std::int64_t>(detail::migrations().size()));
}

TEST_F(PgStoreTest, ANewerSchemaIsRefused) {
    ASSERT_TRUE(open_store(db_->url()));
    auto c = detail::Conn::open(db_->url());
    ASSERT_TRUE(c);
    const auto newer = detail::migrations().back().version + 1;
    ASSERT_TRUE(c->exec("INSERT INTO schema_migrations (version, name) VALUES ($1, 'future')",
                        detail::Params().add(newer)));
    auto s = PgStore::open({.url = db_->url()});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::newer_schema);
}

TEST_F(PgStoreTest, AnExistingInstallOnlyIsOpenedWithoutCreate) {
    auto s = PgStore::open({.url = db_->url(), .listen = false, .create = false});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), errc::no_schema);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), 0)
        << "nothing made";
    ASSERT_TRUE(open_store(db_->url()));
    auto existing = PgStore::open({.url = db_->url(), .listen = false, .create = false});
    ASSERT_TRUE(existing) << existing.error().message();
    EXPECT_EQ((*existing)->schema_version(), detail::migrations().back().version);
}

TEST_F(PgStoreTest, AMigrationThatFailsLeavesNothing) {
    auto c = detail::Conn::open(db_->url());
    ASSERT_TRUE(c);
    const std::vector<detail::Migration> broken = {
        {1, "001_ok", "CREATE TABLE a (x integer)"},
        {2, "002_broken", "CREATE TABLE b (x integer); SELECT no_such_function()"}};
    auto v = detail::migrate(*c, broken);
    EXPECT_FALSE(v);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM schema_migrations"), 1);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM pg_tables WHERE tablename = 'b'"), 0);
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM pg_tables WHERE tablename = 'a'"), 1);
}

// A node hears of the mail another node queues (LISTEN/NOTIFY), at once, not at its next
// poll; and of the events it writes.
TEST_F(PgStoreTest, OtherNodesHearOfNewMailAndEvents) {
    auto a = open_store(db_->url());
    auto b = open_store(db_->url());
    ASSERT_TRUE(a && b);
    auto queued = std::make_shared<std::atomic<int>>(0);
    auto events = std::make_shared<std::atomic<int>>(0);
    b->set_queue_listener([queued] { ++*queued; });
    b->set_event_listener([events] { ++*events; });
    const UnixMs t = 1'800'000'000'000;
    const Account acc{.id = new_id("acc_", t), .name = "acme", .created_at = t};
    ASSERT_TRUE(run(a->create_account(acc)));
    NewEmail n;
    n.email = {.id = new_id("em_", t),
               .account_id = acc.id,
               .from_email = "a@example.com",
               .to_display = "b@example.net",
               .subject = "s",
               .message_id = "m@h",
               .return_token = "t",
               .created_at = t,
               .queued_at = t};
    n.email.envelope_id = new_id("env_", t);
    n.recipients = {{.address = "b@example.net", .domain = "example.net"}};
    n.raw = "Subject: s\r\n\r\nhi\r\n";
    ASSERT_TRUE(run(a->create_email(n)));
    EXPECT_TRUE(eventually([&] { return *queued >= 1; })) << "another node's mail";
    EXPECT_EQ(*events, 0);
    auto open = [t](const Email& e) {
        EmailChange c{.status = e.status, .opened_at = t + 1, .at = t + 1};
        c.events.push_back(Event{.id = new_id("evt_", t + 1),
                                 .account_id = e.account_id,
                                 .kind = domain::EventKind::email_opened,
                                 .email_id = e.id,
                                 .data_json = "{}",
                                 .created_at = t + 1});
        return std::optional(c);
    };
    ASSERT_TRUE(run(a->change_email(acc.id, n.email.id, false, open)));
    EXPECT_TRUE(eventually([&] { return *events >= 1; })) << "another node's event";
}

// Two nodes' transactions adding to the same statistics counters in opposite orders, both
// between their two additions at once (the CI failure of 2026-11-27: a send and a delivery
// grouped in one transaction on each of two nodes, each holding the counter the other
// wanted): neither deadlocks, neither runs twice, and the counters hold both.
TEST_F(PgStoreTest, CountersAddedInOppositeOrdersDoNotDeadlock) {
    ASSERT_TRUE(open_store(db_->url()));  // migrated
    const StatBump accepted{
        .account_id = "acc_1", .hour = 3'600'000, .kind = domain::StatKind::accepted};
    const StatBump delivered{
        .account_id = "acc_1", .hour = 3'600'000, .kind = domain::StatKind::delivered};
    std::latch halfway(2);
    std::atomic<int> runs{0};
    auto job = [&](StatBump first, StatBump second) {
        return [&, first, second](detail::Conn&, detail::Batch& b) -> error_code {
            ++runs;
            b.add_stats({first});
            halfway.arrive_and_wait();  // both transactions are open, each past its first
            b.add_stats({second});
            return {};
        };
    };
    std::vector<std::unique_ptr<detail::Writer>> writers;
    std::vector<std::future<error_code>> done;
    for (int i = 0; i < 2; ++i) {
        auto conn = detail::Conn::open(db_->url());
        ASSERT_TRUE(conn);
        writers.push_back(std::make_unique<detail::Writer>(std::move(*conn), detail::finish_batch));
        writers.back()->start();
    }
    for (int i = 0; i < 2; ++i) {
        auto p = std::make_shared<std::promise<error_code>>();
        done.push_back(p->get_future());
        writers[i]->submit(i == 0 ? job(accepted, delivered) : job(delivered, accepted),
                           [p](error_code ec) { p->set_value(ec); });
    }
    for (auto& d : done) {
        ASSERT_EQ(d.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        EXPECT_FALSE(d.get());
    }
    writers.clear();
    EXPECT_EQ(runs, 2) << "a job ran again: its transaction met a deadlock";
    EXPECT_EQ(
        scalar(db_->url(), "SELECT sum(count)::bigint FROM stat_counters WHERE kind = 'accepted'"),
        2);
    EXPECT_EQ(
        scalar(db_->url(), "SELECT sum(count)::bigint FROM stat_counters WHERE kind = 'delivered'"),
        2);
}

// Two nodes' batches run apart (each holds a job that failed), each inserting the same two
// unique keys in opposite orders, both between their two inserts at once: the CI failure of
// 2026-11-28 (one idempotency key sent to two nodes at once, a send answered 500). The
// transaction that meets the deadlock still holds its first key, which the other waits for, so
// running the job again in it meets the deadlock again; the job runs after its COMMIT instead,
// and both succeed.
TEST_F(PgStoreTest, UniqueKeysInsertedInOppositeOrdersWhileRunningApartBothSucceed) {
    {
        auto c = detail::Conn::open(db_->url());
        ASSERT_TRUE(c);
        ASSERT_TRUE(c->run("CREATE TABLE uniq (k text PRIMARY KEY)"));
    }
    std::latch halfway(2);
    std::atomic<int> waited{0};
    auto insert = [](detail::Conn& c, const char* k) {
        return c
            .exec("INSERT INTO uniq (k) VALUES ($1) ON CONFLICT DO NOTHING",
                  detail::Params().add(k))
            .error();
    };
    auto first = [&](const char* k) {
        return [&, k](detail::Conn& c, detail::Batch&) -> error_code {
            if (auto ec = insert(c, k)) return ec;
            if (waited.fetch_add(1) < 2) halfway.arrive_and_wait();  // both hold their first
            return {};
        };
    };
    auto second = [&](const char* k) {
        return [&, k](detail::Conn& c, detail::Batch&) -> error_code { return insert(c, k); };
    };
    std::vector<std::unique_ptr<detail::Writer>> writers;
    std::vector<std::promise<void>> gates(2);
    std::vector<std::future<error_code>> done;
    auto submit = [&](detail::Writer& w, detail::Writer::Job job) {
        auto p = std::make_shared<std::promise<error_code>>();
        done.push_back(p->get_future());
        w.submit(std::move(job), [p](error_code ec) { p->set_value(ec); });
    };
    for (int i = 0; i < 2; ++i) {
        auto conn = detail::Conn::open(db_->url());
        ASSERT_TRUE(conn);
        writers.push_back(std::make_unique<detail::Writer>(std::move(*conn), nullptr));
        writers.back()->start();
        // A first batch held open, so that the next three jobs go together in one batch.
        auto gate = gates[i].get_future().share();
        writers.back()->submit(
            [gate](detail::Conn&, detail::Batch&) -> error_code {
                gate.wait();
                return {};
            },
            [](error_code) {});
    }
    for (int i = 0; i < 2; ++i) {
        auto& w = *writers[i];
        // Fails: the batch runs apart, each job in a savepoint.
        submit(w, [](detail::Conn&, detail::Batch&) -> error_code { return errc::conflict; });
        submit(w, first(i == 0 ? "a" : "b"));
        submit(w, second(i == 0 ? "b" : "a"));
    }
    for (auto& g : gates) g.set_value();
    for (std::size_t i = 0; i < done.size(); ++i) {
        ASSERT_EQ(done[i].wait_for(std::chrono::seconds(30)), std::future_status::ready);
        if (i % 3 == 0)
            EXPECT_EQ(done[i].get(), errc::conflict);
        else
            EXPECT_FALSE(done[i].get()) << "job " << i;
    }
    writers.clear();
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM uniq"), 2);
}

// The writer's lanes run two batches at once (each job below waits for the other to be
// running: with one lane, neither would end), and drained() waits for every job submitted
// before it, on whichever lane: here a lazy job and one still running on the other lane.
TEST_F(PgStoreTest, WriterLanesRunBatchesAtOnceAndDrainedWaitsForEveryLane) {
    {
        auto c = detail::Conn::open(db_->url());
        ASSERT_TRUE(c);
        ASSERT_TRUE(c->run("CREATE TABLE rows (k text PRIMARY KEY)"));
    }
    std::vector<detail::Conn> conns;
    for (int i = 0; i < 2; ++i) {
        auto c = detail::Conn::open(db_->url());
        ASSERT_TRUE(c);
        conns.push_back(std::move(*c));
    }
    detail::Writer writer(std::move(conns), nullptr);
    writer.start();
    std::latch both(2);
    std::promise<void> gate;
    auto held = gate.get_future().share();
    auto insert = [](detail::Conn& c, const char* k) {
        return c.exec("INSERT INTO rows (k) VALUES ($1)", detail::Params().add(k)).error();
    };
    std::vector<std::future<error_code>> done;
    auto submit = [&](detail::Writer::Job job) {
        auto p = std::make_shared<std::promise<error_code>>();
        done.push_back(p->get_future());
        writer.submit(std::move(job), [p](error_code ec) { p->set_value(ec); });
    };
    submit([&](detail::Conn& c, detail::Batch&) -> error_code {
        both.arrive_and_wait();
        return insert(c, "a");
    });
    // The second job goes to the other lane only once the first lane is busy with the first.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    submit([&, held](detail::Conn& c, detail::Batch&) -> error_code {
        both.arrive_and_wait();
        held.wait();  // keeps this lane's batch open until the gate opens
        return insert(c, "b");
    });
    ASSERT_EQ(done[0].wait_for(std::chrono::seconds(20)), std::future_status::ready)
        << "the two batches did not run at once";
    EXPECT_FALSE(done[0].get());
    writer.submit([&](detail::Conn& c, detail::Batch&) { return insert(c, "lazy"); }, {});
    auto drained = std::async(std::launch::async, [&] { return run(writer.drained()); });
    EXPECT_EQ(drained.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
        << "drained() did not wait for the job still running";
    gate.set_value();
    ASSERT_EQ(drained.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_TRUE(drained.get());
    ASSERT_EQ(done[1].wait_for(std::chrono::seconds(1)), std::future_status::ready);
    EXPECT_FALSE(done[1].get());
    EXPECT_EQ(scalar(db_->url(), "SELECT count(*) FROM rows"), 3);
    writer.stop();
}

// Mail the operator releases or makes due on one node (`posthorn queue release|retry`, a
// process of its own) is due at once: the other nodes hear of it as of new mail.
TEST_F(PgStoreTest, OtherNodesHearOfReleasedAndRetriedMail) {
    auto a = open_store(db_->url());
    auto b = open_store(db_->url());
    ASSERT_TRUE(a && b);
    const UnixMs t = 1'800'000'000'000;
    const Account acc{.id = new_id("acc_", t), .name = "acme", .created_at = t};
    ASSERT_TRUE(run(a->create_account(acc)));
    NewEmail n;
    n.email = {.id = new_id("em_", t),
               .account_id = acc.id,
               .from_email = "a@example.com",
               .to_display = "b@example.net",
               .subject = "s",
               .message_id = "m@h",
               .return_token = "t",
               .created_at = t,
               .queued_at = t};
    n.email.envelope_id = new_id("env_", t);
    n.recipients = {{.address = "b@example.net", .domain = "example.net"}};
    n.raw = "Subject: s\r\n\r\nhi\r\n";
    ASSERT_TRUE(run(a->create_email(n)));
    ASSERT_EQ(*run(a->hold_queued({}, t + 1)), 1);
    auto queued = std::make_shared<std::atomic<int>>(0);
    b->set_queue_listener([queued] { ++*queued; });
    EXPECT_EQ(*run(a->hold_queued({}, t + 2)), 0);
    ASSERT_EQ(*run(a->release_queued({}, t + 3)), 1);
    EXPECT_TRUE(eventually([&] { return *queued >= 1; })) << "released on another node";
    const int before = *queued;
    ASSERT_EQ(*run(a->make_due({}, t + 4)), 1);
    EXPECT_TRUE(eventually([&] { return *queued > before; })) << "made due on another node";
}

// Connections that the server drops (a restart, a fail-over, an idle timeout on the way) are
// made again: a read goes through on a new one, and so does a write (nothing of it had run
// on the broken one); the LISTEN connection listens again.
TEST_F(PgStoreTest, LostConnectionsAreMadeAgain) {
    auto s = open_store(db_->url());
    auto other = open_store(db_->url());
    ASSERT_TRUE(s && other);
    auto queued = std::make_shared<std::atomic<int>>(0);
    s->set_queue_listener([queued] { ++*queued; });
    const UnixMs t = 1'800'000'000'000;
    ASSERT_TRUE(run(s->create_account({.id = new_id("acc_", t), .name = "a", .created_at = t})));
    auto c = detail::Conn::open(db_->url());
    ASSERT_TRUE(c);
    ASSERT_TRUE(
        c->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"));
    // Terminated backends go away asynchronously; wait until they are gone.
    EXPECT_TRUE(eventually([&] {
        auto n = c->exec(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
            "pid <> pg_backend_pid() AND backend_type = 'client backend'");
        return n && n->row(0).int64(0) == 0;
    }));
    auto found = run(s->find_account_by_name("a"));
    ASSERT_TRUE(found) << found.error().message();
    auto written = run(s->create_account({.id = new_id("acc_", t), .name = "b", .created_at = t}));
    EXPECT_TRUE(written) << written.error().message();
    EXPECT_TRUE(run(other->find_account_by_name("b")));
    // The LISTEN connection is back within a few seconds (it wakes the listeners then, once,
    // as notifications may have been lost), and hears another node's mail.
    EXPECT_TRUE(eventually([&] { return *queued >= 1; }));
    const int before = *queued;
    NewEmail n;
    n.email = {.id = new_id("em_", t),
               .account_id = found->id,
               .from_email = "a@example.com",
               .to_display = "b@example.net",
               .subject = "s",
               .message_id = "m@h",
               .return_token = "t",
               .created_at = t,
               .queued_at = t};
    n.email.envelope_id = new_id("env_", t);
    n.recipients = {{.address = "b@example.net", .domain = "example.net"}};
    n.raw = "Subject: s\r\n\r\nhi\r\n";
    auto created = run(other->create_email(n));
    ASSERT_TRUE(created) << created.error().message();
    EXPECT_TRUE(eventually([&] { return *queued > before; }));
}

// The lists' search indexer (detail/search_indexer.hpp): a send's email waits in search_todo;
// once the node's writes pause, the indexer moves it into email_search; under writes that
// never pause, it moves the waiting emails once its backlog is full, and not before.
// The plans PostgreSQL makes for the hot lookups on a new database (no statistics yet: what a
// prepared statement's generic plan is made on, and kept until autovacuum analyzes the table)
// use the index that fits them. The emails' lookups once named the account and took an index
// that begins with it (emails_account_to), so that each walked all the account's emails; the
// probe before a claim named neither index of due recipients and read the whole table.
TEST_F(PgStoreTest, TheHotLookupsTakeTheirIndexOnANewDatabase) {
    ASSERT_TRUE(open_store(db_->url()));  // migrated
    auto c = detail::Conn::open(db_->url());
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->run("SET plan_cache_mode = force_generic_plan"));
    const auto plan = [&](const std::string& name, const std::string& sql,
                          const std::string& args) {
        EXPECT_TRUE(c->run(("PREPARE " + name + " AS " + sql).c_str())) << sql;
        auto rows = c->exec("EXPLAIN EXECUTE " + name + args);
        EXPECT_TRUE(rows) << sql;
        std::string text;
        if (rows)
            for (int i = 0; i < rows->size(); ++i) text += rows->row(i).text(0) + "\n";
        return text;
    };
    const auto by_id = plan("by_id", detail::kEmailByIdSql, "('em_x')");
    EXPECT_NE(by_id.find("Index Scan using emails_pkey"), std::string::npos) << by_id;
    const auto raw = plan("raw", detail::kEmailRawSql, "('em_x')");
    EXPECT_NE(raw.find("Index Scan using emails_pkey"), std::string::npos) << raw;
    const auto due = plan("due", detail::kAnyDueSql, "(1)");
    EXPECT_NE(due.find("using recipients_fresh"), std::string::npos) << due;
    EXPECT_NE(due.find("using recipients_retry"), std::string::npos) << due;
    EXPECT_EQ(due.find("Seq Scan"), std::string::npos) << due;
}

TEST_F(PgStoreTest, TheSearchIndexerRunsWhenWritesPauseOrOnceItsBacklogIsFull) {
    const UnixMs t = 1'800'000'000'000;
    const Account acc{.id = new_id("acc_", t), .name = "acme", .created_at = t};
    auto send = [&](Store& s, int k) {
        NewEmail n;
        n.email = {.id = new_id("em_", t),
                   .account_id = acc.id,
                   .envelope_id = new_id("env_", t),
                   .from_email = "a@example.com",
                   .to_display = "b@example.net",
                   .subject = "searchable " + std::to_string(k),
                   .message_id = "m" + std::to_string(k) + "@h",
                   .return_token = "t" + std::to_string(k),
                   .created_at = t,
                   .queued_at = t};
        n.recipients = {{.address = "b@example.net", .domain = "example.net"}};
        n.raw = "Subject: s\r\n\r\nhi\r\n";
        ASSERT_TRUE(run(s.create_email(n)));
    };
    const auto url = db_->url();
    auto counts = [&] {
        return std::pair(scalar(url, "SELECT count(*) FROM search_todo"),
                         scalar(url, "SELECT count(*) FROM email_search"));
    };
    {
        auto s = open_store(url);
        ASSERT_TRUE(s);
        ASSERT_TRUE(run(s->create_account(acc)));
        for (int k = 0; k < 3; ++k) send(*s, k);
        EXPECT_TRUE(eventually([&] {
            return counts() == std::pair<std::int64_t, std::int64_t>(0, 3);
        })) << "indexed once the writes paused: "
            << counts().first << " waiting";
    }
    auto s = PgStore::open({.url = url, .readers = 1, .index_searches = false});
    ASSERT_TRUE(s);
    for (int k = 3; k < 7; ++k) send(**s, k);
    auto conn = detail::Conn::open(url);
    ASSERT_TRUE(conn);
    detail::SearchIndexer busy(
        std::move(*conn), [] { return false; }, 5);
    busy.start();
    std::this_thread::sleep_for(detail::SearchIndexer::kBacklogCheck * 2);
    EXPECT_EQ(counts(), (std::pair<std::int64_t, std::int64_t>(4, 3))) << "4 of 5: they wait";
    send(**s, 7);
    EXPECT_TRUE(eventually([&] { return counts() == std::pair<std::int64_t, std::int64_t>(0, 8); }))
        << "a full backlog is indexed: " << counts().first << " waiting";
    auto found = run((*s)->list_emails({.account_id = acc.id, .search = "SEARCHABLE"}));
    ASSERT_TRUE(found);
    EXPECT_EQ(found->total, 8);
}

}  // namespace
}  // namespace posthorn::store::pg
