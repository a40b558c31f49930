#include "store/sqlite/detail/wal_writes.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/detail/db.hpp"
#include "store/sqlite/detail/testing/hooked_vfs.hpp"

namespace posthorn::store::sqlite::detail {
namespace {

namespace fs = std::filesystem;

// The default VFS, with the write calls that reach WAL files counted (and their sizes kept),
// and the next one failed on demand: what the gathering VFS hands down to the default.
class WalWriteVfs : testing::HookedVfs {
  public:
    explicit WalWriteVfs(int files = SQLITE_OPEN_WAL)
        : HookedVfs("ph-wal-writes", files, [](sqlite3_io_methods& m) {
              real_write_ = m.xWrite;
              m.xWrite = [](sqlite3_file* f, const void* data, int n, sqlite3_int64 at) {
                  if (fail_.exchange(false)) return SQLITE_IOERR_WRITE;
                  {
                      std::lock_guard lock(mutex_);
                      sizes_.push_back(n);
                  }
                  return real_write_(f, data, n, at);
              };
          }) {
        clear();
        fail_ = false;
    }

    std::vector<int> sizes() {
        std::lock_guard lock(mutex_);
        return sizes_;
    }
    void clear() {
        std::lock_guard lock(mutex_);
        sizes_.clear();
    }
    void fail_next_write() { fail_ = true; }

  private:
    static inline int (*real_write_)(sqlite3_file*, const void*, int, sqlite3_int64) = nullptr;
    static inline std::mutex mutex_;
    static inline std::vector<int> sizes_;
    static inline std::atomic<bool> fail_{false};
};

class WalWritesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ph_wal_writes_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = (dir_ / "w.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    // A writer connection on a new database with the table t made by `create`.
    Db new_table(const char* create) {
        auto db = Db::open(path_, true);
        EXPECT_TRUE(db) << db.error().message();
        if (!db) std::abort();
        EXPECT_TRUE(db->exec(create));
        return std::move(*db);
    }

    static std::string one(Db& db, const char* sql) {
        auto s = db.prepare(sql);
        EXPECT_TRUE(s) << sql;
        if (!s) return {};
        auto row = s->step();
        EXPECT_TRUE(row && *row) << sql;
        return s->text(0);
    }

    fs::path dir_;
    std::string path_;
};

// Forty rows of a page or so each, in one transaction: 80 writes or more to the WAL (two a
// frame) from SQLite, in a few from the VFS, none over the unix VFS's 128 KB - 1 a call;
// and the rows are what another connection reads, then and after the files are closed.
TEST_F(WalWritesTest, ACommitReachesTheWalInAFewWrites) {
    WalWriteVfs counting;
    {
        auto db = new_table("CREATE TABLE t (n INTEGER, v BLOB)");
        counting.clear();
        int frames = 0;
        sqlite3_wal_hook(
            db.handle(),
            [](void* out, sqlite3*, const char*, int n) {
                *static_cast<int*>(out) = n;
                return SQLITE_OK;
            },
            &frames);
        ASSERT_TRUE(
            db.exec("WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40) "
                    "INSERT INTO t SELECT i, randomblob(3000) FROM k"));
        const auto sizes = counting.sizes();
        EXPECT_GE(frames, 40);
        EXPECT_GE(sizes.size(), 1u);
        EXPECT_LE(sizes.size(), 4u) << "for " << frames << " frames";
        for (int n : sizes) EXPECT_LT(n, 0x20000);

        auto reader = Db::open(path_, false);
        ASSERT_TRUE(reader);
        EXPECT_EQ(one(*reader, "SELECT count(*) || ' ' || sum(length(v)) FROM t"), "40 120000");
        EXPECT_EQ(one(db, "SELECT sum(n) FROM t"), "820");
    }
    auto again = Db::open(path_, false);
    ASSERT_TRUE(again);
    EXPECT_EQ(one(*again, "SELECT count(*) || ' ' || sum(n) FROM t"), "40 820");
    EXPECT_EQ(one(*again, "PRAGMA integrity_check"), "ok");
}

// A blob larger than what is gathered at once (124 KB), written and read back byte for byte
// by another connection.
TEST_F(WalWritesTest, ATransactionLargerThanTheGatheringIsWhole) {
    WalWriteVfs counting;
    auto db = new_table("CREATE TABLE t (v BLOB)");
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES (randomblob(1000000))"));
    for (int n : counting.sizes()) EXPECT_LT(n, 0x20000);
    auto reader = Db::open(path_, false);
    ASSERT_TRUE(reader);
    const auto theirs = one(*reader, "SELECT hex(v) FROM t");
    EXPECT_EQ(theirs.size(), 2000000u);
    EXPECT_EQ(theirs, one(db, "SELECT hex(v) FROM t"));
    EXPECT_EQ(one(*reader, "PRAGMA integrity_check"), "ok");
}

// A checkpoint copies the frames of forty rows of a page or so each into the database file:
// the consecutive pages go out in a few writes, and the file holds them whole.
TEST_F(WalWritesTest, ACheckpointReachesTheDatabaseInAFewWrites) {
    WalWriteVfs counting(SQLITE_OPEN_MAIN_DB);
    {
        auto db = new_table("CREATE TABLE t (n INTEGER, v BLOB)");
        ASSERT_TRUE(db.exec("PRAGMA wal_autocheckpoint=0"));
        ASSERT_TRUE(
            db.exec("WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40) "
                    "INSERT INTO t SELECT i, randomblob(3000) FROM k"));
        counting.clear();
        ASSERT_TRUE(db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
        // The WAL is empty: what is read now comes from the database file.
        EXPECT_EQ(fs::file_size(path_ + "-wal"), 0u);
        const auto sizes = counting.sizes();
        EXPECT_GE(sizes.size(), 1u);
        EXPECT_LE(sizes.size(), 6u) << "40 pages or more";
        for (int n : sizes) EXPECT_LT(n, 0x20000);
        auto reader = Db::open(path_, false);
        ASSERT_TRUE(reader);
        EXPECT_EQ(one(*reader, "SELECT count(*) || ' ' || sum(length(v)) FROM t"), "40 120000");
    }
    auto again = Db::open(path_, false);
    ASSERT_TRUE(again);
    EXPECT_EQ(one(*again, "SELECT count(*) || ' ' || sum(n) FROM t"), "40 820");
    EXPECT_EQ(one(*again, "PRAGMA integrity_check"), "ok");
}

// A write that fails when the gathered frames go out (at the commit's sync) fails the
// commit: nothing of it is seen, and the next commit goes through.
TEST_F(WalWritesTest, AWriteThatFailsFailsItsCommit) {
    WalWriteVfs counting;
    auto db = new_table("CREATE TABLE t (v BLOB)");
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES (randomblob(10))"));
    counting.fail_next_write();
    EXPECT_FALSE(db.exec("INSERT INTO t VALUES (randomblob(5000))"));
    auto reader = Db::open(path_, false);
    ASSERT_TRUE(reader);
    EXPECT_EQ(one(*reader, "SELECT count(*) FROM t"), "1");
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES (randomblob(5000))"));
    EXPECT_EQ(one(*reader, "SELECT count(*) FROM t"), "2");
    EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "2");
    EXPECT_EQ(one(*reader, "PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace posthorn::store::sqlite::detail
