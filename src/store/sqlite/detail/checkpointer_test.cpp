#include "store/sqlite/detail/checkpointer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "store/sqlite/detail/testing/hooked_vfs.hpp"

namespace posthorn::store::sqlite::detail {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The default VFS, with the syncs of main database files counted.
struct CountingVfs : testing::HookedVfs {
    CountingVfs()
        : HookedVfs("ph-counting", SQLITE_OPEN_MAIN_DB, [](sqlite3_io_methods& m) {
              real_sync_ = m.xSync;  // one kind of file here: unix
              m.xSync = [](sqlite3_file* f, int flags) {
                  ++database_syncs;
                  return real_sync_(f, flags);
              };
          }) {}

    static inline std::atomic<int> database_syncs{0};
    static inline int (*real_sync_)(sqlite3_file*, int) = nullptr;
};

// A pass that cannot copy the whole WAL (here a reader holds an older snapshot; under load,
// a writer that commits while the pass runs) is one after which SQLite does not sync the
// database file. The checkpointer does, so that the pages it copied are not all left for
// the one sync that ends a whole copy: the writer's own, between its batches.
TEST(Checkpointer, SyncsTheDatabaseAfterAPassThatCopiedPartOfTheWal) {
    const auto dir =
        fs::temp_directory_path() / ("ph_checkpointer_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto path = (dir / "c.db").string();
    {
        CountingVfs vfs;
        auto writer = Db::open(path, true);
        ASSERT_TRUE(writer) << writer.error().message();
        ASSERT_TRUE(writer->exec("CREATE TABLE t (v BLOB); INSERT INTO t VALUES (zeroblob(100))"));
        auto reader = Db::open(path, false);
        ASSERT_TRUE(reader);
        ASSERT_TRUE(reader->exec("BEGIN"));
        {
            auto count = reader->prepare("SELECT count(*) FROM t");
            ASSERT_TRUE(count && count->step());  // the reader's snapshot: the first frames
        }

        auto cdb = Db::open(path, false);
        ASSERT_TRUE(cdb);
        const int before = CountingVfs::database_syncs;
        Checkpointer checkpointer(std::move(*cdb), writer->handle(), 16000, /*threshold=*/10);
        ASSERT_TRUE(
            writer->exec("BEGIN; INSERT INTO t SELECT zeroblob(4000) FROM t, t, t, t, t;"
                         "INSERT INTO t SELECT zeroblob(4000) FROM t, t, t, t, t;"
                         "COMMIT"));  // 20 pages or more: a pass begins
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (CountingVfs::database_syncs == before && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        EXPECT_GT(CountingVfs::database_syncs, before) << "the database file synced after a pass";

        int log = 0, done = 0, rc = SQLITE_BUSY;  // the pass did copy only part of the WAL
        for (int i = 0; i < 500 && rc == SQLITE_BUSY; ++i) {  // busy: the thread's pass runs
            rc = sqlite3_wal_checkpoint_v2(writer->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                           &log, &done);
            if (rc == SQLITE_BUSY) std::this_thread::sleep_for(10ms);
        }
        ASSERT_EQ(rc, SQLITE_OK);
        EXPECT_GT(done, 0);
        EXPECT_LT(done, log);
        ASSERT_TRUE(reader->exec("COMMIT"));
    }
    fs::remove_all(dir);
}

// The nice value of this process's thread named `name` (/proc/self/task/*/comm), or
// nullopt when there is none.
std::optional<int> nice_of_thread(const std::string& name) {
    for (const auto& task : fs::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string line;
        if (!std::getline(comm, line) || line != name) continue;
        std::ifstream stat(task.path() / "stat");
        std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        // After "pid (comm) ", field 19 (nice) is the 17th: skip the comm, which may hold spaces.
        std::istringstream rest(all.substr(all.rfind(')') + 2));
        std::string field;
        for (int i = 3; i <= 19 && rest >> field; ++i) {
        }
        return std::stoi(field);
    }
    return std::nullopt;
}

// The checkpointer is background work: its thread runs below the others, so that its passes
// do not take a core from the writer or the network threads when every core is busy.
TEST(Checkpointer, RunsBelowTheOtherThreads) {
    const auto dir =
        fs::temp_directory_path() / ("ph_checkpointer_nice_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto path = (dir / "c.db").string();
    {
        auto writer = Db::open(path, true);
        ASSERT_TRUE(writer) << writer.error().message();
        auto cdb = Db::open(path, false);
        ASSERT_TRUE(cdb);
        const int ours = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
        Checkpointer checkpointer(std::move(*cdb), writer->handle());
        std::optional<int> nice;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < deadline) {  // its thread names itself
            nice = nice_of_thread("ph-checkpoint");
            if (nice && *nice != ours) break;
            std::this_thread::sleep_for(10ms);
        }
        ASSERT_TRUE(nice) << "no thread named ph-checkpoint";
        EXPECT_EQ(*nice, std::min(ours + Checkpointer::kNiceIncrement, 19));
        EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), ours)
            << "the caller's own priority is unchanged";
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace posthorn::store::sqlite::detail
