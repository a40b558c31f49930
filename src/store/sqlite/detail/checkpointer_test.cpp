#include "store/sqlite/detail/checkpointer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace posthorn::store::sqlite::detail {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A pass that cannot copy the whole WAL (here a reader holds an older snapshot; under load,
// a writer that commits while the pass runs) is one after which SQLite does not sync the
// database file. The checkpointer starts the writeback of what it copied, so that those
// pages are not all left for the one sync that ends a whole copy: the writer's own,
// between its batches.
TEST(Checkpointer, WritesTheDatabaseOutAfterAPassThatCopiedPartOfTheWal) {
    const auto dir =
        fs::temp_directory_path() / ("ph_checkpointer_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto path = (dir / "c.db").string();
    {
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
        Checkpointer checkpointer(std::move(*cdb), writer->handle(), 16000, /*threshold=*/10);
        ASSERT_TRUE(
            writer->exec("BEGIN; INSERT INTO t SELECT zeroblob(4000) FROM t, t, t, t, t;"
                         "INSERT INTO t SELECT zeroblob(4000) FROM t, t, t, t, t;"
                         "COMMIT"));  // 20 pages or more: a pass begins
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (checkpointer.database_writeouts() == 0 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        EXPECT_GT(checkpointer.database_writeouts(), 0) << "the database written out after a pass";

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

}  // namespace
}  // namespace posthorn::store::sqlite::detail
