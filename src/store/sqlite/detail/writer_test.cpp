#include "store/sqlite/detail/writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

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
        // Long waits: whether a commit waits must not depend on how fast this test runs.
        writer_ = std::make_unique<Writer>(std::move(*db), 10s, kLazyDelay);
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

    // Submits an insert; `done` is set once it is committed.
    void insert(int v, std::atomic<bool>& done, bool expected = false) {
        writer_->submit(
            insert_job(v), [&done](error_code) { done = true; }, expected);
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

TEST_F(WriterTest, AnAnnouncedJobIsWaitedForAndSharesTheCommit) {
    writer_->expect();
    std::atomic<bool> first{false}, second{false};
    insert(1, first);
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(first) << "the commit waits for the announced job";
    insert(2, second, true);
    ASSERT_TRUE(wait_for(first));
    ASSERT_TRUE(wait_for(second));
    EXPECT_EQ(commits_, 1) << "both in one transaction";
}

TEST_F(WriterTest, AWithdrawnAnnouncementReleasesTheCommit) {
    writer_->expect();
    std::atomic<bool> first{false};
    insert(1, first);
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(first);
    writer_->unexpect();
    ASSERT_TRUE(wait_for(first));
    EXPECT_EQ(commits_, 1);
}

TEST_F(WriterTest, WithNothingAnnouncedACommitDoesNotWait) {
    std::atomic<bool> first{false}, second{false};
    insert(1, first);
    ASSERT_TRUE(wait_for(first)) << "not held for the 10 s window";
    // An announcement that arrives with its job (announced and submitted before the writer
    // looked) holds nothing either.
    writer_->expect();
    insert(2, second, true);
    ASSERT_TRUE(wait_for(second));
    EXPECT_EQ(commits_, 2);
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
