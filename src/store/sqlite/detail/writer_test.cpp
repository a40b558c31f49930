#include "store/sqlite/detail/writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "store/sqlite/detail/events.hpp"

namespace posthorn::store::sqlite::detail {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A writer on a database of its own, counting the transactions it commits.
class WriterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ph_writer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        fs::create_directories(dir_);
        auto db = Db::open((dir_ / "w.db").string(), true);
        ASSERT_TRUE(db) << db.error().message();
        ASSERT_TRUE(db->exec("CREATE TABLE t (v INTEGER)"));
        sqlite3_commit_hook(
            db->handle(),
            [](void* n) {
                ++*static_cast<std::atomic<int>*>(n);
                return 0;
            },
            &commits_);
        // The gather window of production; each test that needs jobs in one batch holds the
        // writer with a first job that waits for them (hold()).
        writer_ = std::make_unique<Writer>(std::move(*db), Writer::kGatherWindow, kLazyDelay);
        writer_->start();
        commits_ = 0;
    }
    void TearDown() override {
        writer_.reset();
        fs::remove_all(dir_);
    }

    static constexpr auto kLazyDelay = 500ms;

    static Writer::Job insert_job(int v) {
        return [v](Db& db) -> error_code {
            auto st = db.prepare("INSERT INTO t (v) VALUES (?1)");
            if (!st) return st.error();
            auto r = st->bind(1, v).run();
            return r ? error_code{} : r.error();
        };
    }

    // A job that fails (its table does not exist), counting its runs.
    static Writer::Job failing_job(std::atomic<int>& runs) {
        return [&runs](Db& db) -> error_code {
            ++runs;
            auto st = db.prepare("INSERT INTO missing_table (v) VALUES (1)");
            return st ? error_code{} : st.error();
        };
    }

    // Submits an insert; `done` is set once it is committed.
    void insert(int v, std::atomic<bool>& done) {
        writer_->submit(insert_job(v), [&done](error_code) { done = true; });
    }

    // Submits a job that runs until `go` is set: the jobs submitted meanwhile join its batch
    // (the writer takes what is pending after each job it runs).
    void hold(std::atomic<bool>& go, std::atomic<bool>& running, std::atomic<bool>& done) {
        writer_->submit(
            [&go, &running](Db&) -> error_code {
                running = true;
                while (!go) std::this_thread::sleep_for(1ms);
                return {};
            },
            [&done](error_code) { done = true; });
    }

    // Submits an insert nobody waits for; `ran` is set when its batch runs it.
    void insert_lazy(int v, std::atomic<bool>& ran) {
        writer_->submit(
            [v, &ran](Db& db) {
                ran = true;
                return insert_job(v)(db);
            },
            {});
    }

    // The first column of the first row of `sql` as text ("" for none or NULL), read from
    // the database file on a connection of its own (once the writer has stopped).
    std::string read_text(const char* sql) const {
        sqlite3* db = nullptr;
        std::string out;
        sqlite3_stmt* st = nullptr;
        if (sqlite3_open((dir_ / "w.db").string().c_str(), &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(db);
        return out;
    }

    static bool wait_for(const std::atomic<bool>& flag) {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!flag && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
        return flag;
    }

    static inline std::atomic<int> counter_{0};
    fs::path dir_;
    std::atomic<int> commits_{0};
    std::unique_ptr<Writer> writer_;
};

// Jobs that come while a batch runs join it, and share its commit.
TEST_F(WriterTest, JobsThatComeWhileABatchRunsShareItsCommit) {
    std::atomic<bool> go{false}, running{false}, held{false}, first{false}, second{false};
    hold(go, running, held);
    ASSERT_TRUE(wait_for(running));
    insert(1, first);
    insert(2, second);
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(first) << "not committed while its batch runs";
    go = true;
    ASSERT_TRUE(wait_for(held) && wait_for(first) && wait_for(second));
    EXPECT_EQ(commits_, 1) << "the three in one transaction";
}

// A stream of jobs close together: a batch holds its commit for the next one, so that they
// share commits; a job after a quiet spell commits at once.
TEST_F(WriterTest, AStreamOfJobsSharesCommitsAndALoneJobDoesNotWait) {
    writer_.reset();
    auto db = Db::open((dir_ / "w.db").string(), false);
    ASSERT_TRUE(db);
    sqlite3_commit_hook(
        db->handle(),
        [](void* n) {
            ++*static_cast<std::atomic<int>*>(n);
            return 0;
        },
        &commits_);
    // A window of 200 ms, so that gaps of a few hundred microseconds (however slow this
    // machine is) count as close together.
    writer_ = std::make_unique<Writer>(std::move(*db), 200ms, kLazyDelay);
    writer_->start();
    commits_ = 0;
    constexpr int kJobs = 60;
    std::atomic<int> done{0};
    for (int i = 0; i < kJobs; ++i) {
        writer_->submit(insert_job(i), [&done](error_code) { ++done; });
        std::this_thread::sleep_for(200us);
    }
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (done < kJobs && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(done, kJobs);
    EXPECT_LT(commits_, kJobs / 2) << "jobs close together share commits";

    // A quiet spell longer than the window: the mean gap grows, and a lone job commits at
    // once instead of waiting for another.
    std::this_thread::sleep_for(600ms);
    for (int i = 0; i < 8; ++i) {  // each after a quiet spell of its own
        std::atomic<bool> one{false};
        const auto start = std::chrono::steady_clock::now();
        insert(1000 + i, one);
        ASSERT_TRUE(wait_for(one));
        if (i == 7) {
            EXPECT_LT(std::chrono::steady_clock::now() - start, 150ms) << "not held";
        }
        std::this_thread::sleep_for(300ms);
    }
}

// A batch runs in one transaction without savepoints; when a job fails, the transaction is
// rolled back and the batch runs again with each job in a savepoint: the others commit.
TEST_F(WriterTest, AFailingJobDoesNotUndoItsBatch) {
    std::atomic<int> runs{0};
    std::atomic<bool> first{false}, third{false}, second_done{false};
    error_code second_error;
    std::atomic<bool> go{false}, running{false}, held{false};
    hold(go, running, held);  // so that the three share its batch
    ASSERT_TRUE(wait_for(running));
    insert(1, first);
    writer_->submit(failing_job(runs), [&](error_code ec) {
        second_error = ec;
        second_done = true;
    });
    insert(3, third);
    go = true;
    ASSERT_TRUE(wait_for(first) && wait_for(second_done) && wait_for(third));
    EXPECT_TRUE(second_error) << "the failing job is told";
    EXPECT_EQ(runs, 2) << "run together, then apart";
    writer_->stop();
    EXPECT_EQ(commits_, 1) << "the first try was rolled back";
    EXPECT_EQ(read_text("SELECT group_concat(v) FROM t"), "1,3");
}

// The statistics counters the jobs of a batch add to are written once, summed, before its
// COMMIT; a job rolled back adds to none: not the failing one, and not the others' first run
// (together, rolled back when one failed) on top of their second (apart).
TEST_F(WriterTest, CountersAreWrittenSummedAndARolledBackJobAddsToNone) {
    std::atomic<bool> made{false};
    writer_->submit(
        [](Db& db) -> error_code {
            return db
                .exec(
                    "CREATE TABLE stat_counters (account_id TEXT NOT NULL, dimension TEXT "
                    "NOT NULL, hour INTEGER NOT NULL, kind TEXT NOT NULL, count INTEGER "
                    "NOT NULL, PRIMARY KEY (account_id, dimension, hour, kind))")
                .error();
        },
        [&made](error_code) { made = true; });
    ASSERT_TRUE(wait_for(made));
    const auto bump = [](std::string dimension) {
        return StatBump{.account_id = "acc_1",
                        .hour = 3'600'000,
                        .dimension = std::move(dimension),
                        .kind = domain::StatKind::accepted};
    };
    const auto counting = [bump](std::vector<std::string> dimensions, bool fail) {
        return [bump, dimensions, fail](Db& db) -> error_code {
            std::vector<StatBump> bumps;
            for (const auto& d : dimensions) bumps.push_back(bump(d));
            add_stats(db, bumps);
            if (fail) return db.prepare("INSERT INTO missing_table (v) VALUES (1)").error();
            return insert_job(1)(db);
        };
    };
    std::atomic<bool> go{false}, running{false}, held{false};
    hold(go, running, held);  // so that the three share its batch
    ASSERT_TRUE(wait_for(running));
    std::atomic<int> answered{0};
    const auto count = [&answered](error_code) { ++answered; };
    writer_->submit(counting({"", "mail.example.com"}, false), count);
    writer_->submit(counting({"", "mail.example.com", "tag:x"}, true), count);
    writer_->submit(counting({""}, false), count);
    go = true;
    ASSERT_TRUE(wait_for(held));
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (answered < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    ASSERT_EQ(answered, 3);
    writer_->stop();
    EXPECT_EQ(read_text("SELECT group_concat(dimension || '=' || count, ',') FROM "
                        "(SELECT * FROM stat_counters ORDER BY dimension)"),
              "=2,mail.example.com=1");
}

// A job alone in its batch that fails is told at once: it does not run a second time.
TEST_F(WriterTest, ALoneFailingJobRunsOnce) {
    std::atomic<int> runs{0};
    std::atomic<bool> done{false};
    error_code result;
    writer_->submit(failing_job(runs), [&](error_code ec) {
        result = ec;
        done = true;
    });
    ASSERT_TRUE(wait_for(done));
    EXPECT_TRUE(result);
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(commits_, 0);
}

// A COMMIT that fails (here: a deferred foreign key left broken) fails every job of its
// batch and is rolled back; the next batch, with the same cached COMMIT, commits.
TEST_F(WriterTest, AFailedCommitFailsItsBatchAndTheNextOneCommits) {
    auto run_job = [this](Writer::Job job) {
        std::atomic<bool> done{false};
        error_code result;
        writer_->submit(std::move(job), [&](error_code ec) {
            result = ec;
            done = true;
        });
        EXPECT_TRUE(wait_for(done));
        return result;
    };
    auto sql = [](const char* text) {
        return [text](Db& db) -> error_code {
            auto r = db.exec(text);
            return r ? error_code{} : r.error();
        };
    };
    ASSERT_FALSE(
        run_job(sql("CREATE TABLE p (id INTEGER PRIMARY KEY); "
                    "CREATE TABLE c (p INTEGER REFERENCES p(id) "
                    "DEFERRABLE INITIALLY DEFERRED)")));
    EXPECT_TRUE(run_job(sql("INSERT INTO c (p) VALUES (42)"))) << "the commit fails";
    EXPECT_FALSE(run_job(insert_job(7))) << "the next batch commits";
    EXPECT_FALSE(run_job(sql("INSERT INTO p (id) VALUES (1); INSERT INTO c (p) VALUES (1)")));
    writer_->stop();
    EXPECT_EQ(read_text("SELECT group_concat(v) FROM t"), "7");
    EXPECT_EQ(read_text("SELECT group_concat(p) FROM c"), "1") << "the broken row was rolled back";
}

TEST_F(WriterTest, LazyJobsWaitForTheirDelayNotForTheNextCommit) {
    std::atomic<bool> lazy{false}, awaited{false};
    const auto start = std::chrono::steady_clock::now();
    insert_lazy(1, lazy);
    insert(2, awaited);
    ASSERT_TRUE(wait_for(awaited));
    if (std::chrono::steady_clock::now() - start < kLazyDelay / 2) {
        EXPECT_FALSE(lazy) << "the lazy job does not ride with the awaited one";
    }
    ASSERT_TRUE(wait_for(lazy)) << "it goes once its delay is over";
    writer_->stop();
    EXPECT_EQ(commits_, 2);
}

TEST_F(WriterTest, LazyJobsGoTogether) {
    std::atomic<bool> a{false}, b{false}, c{false};
    const auto start = std::chrono::steady_clock::now();
    insert_lazy(1, a);
    insert_lazy(2, b);
    insert_lazy(3, c);
    const bool in_time = std::chrono::steady_clock::now() - start < kLazyDelay / 2;
    ASSERT_TRUE(wait_for(c));
    writer_->stop();
    EXPECT_TRUE(a && b);
    if (in_time) {
        EXPECT_EQ(commits_, 1);
    }
}

TEST_F(WriterTest, StoppingCommitsTheLazyJobsAtOnce) {
    std::atomic<bool> lazy{false};
    insert_lazy(1, lazy);
    const auto start = std::chrono::steady_clock::now();
    writer_->stop();
    EXPECT_TRUE(lazy);
    EXPECT_EQ(commits_, 1);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "not held for the delay";
}

}  // namespace
}  // namespace posthorn::store::sqlite::detail
