// SqliteCopySource (store/copy.hpp's source for `posthorn store copy`): what it refuses to
// read, and the rows it hands over, in the shape of copy_tables().
#include "store/sqlite/sqlite_copy_source.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "core/block_on.hpp"
#include "store/contract/contract.hpp"
#include "store/sqlite/detail/migrations.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::store::sqlite {
namespace {

namespace fs = std::filesystem;
using contract::id_at;
using contract::kT0;

// Each cell as text: NULL, i:<n>, b:<0|1>, t:<text>, x:<bytes>, n:<name>,<name>.
class Recorder final : public RowSink {
  public:
    void null() override { row_.emplace_back("NULL"); }
    void integer(std::int64_t v) override { row_.push_back("i:" + std::to_string(v)); }
    void boolean(bool v) override { row_.push_back(v ? "b:1" : "b:0"); }
    void text(std::string_view v) override { row_.push_back("t:" + std::string(v)); }
    void bytes(std::string_view v) override { row_.push_back("x:" + std::string(v)); }
    void names(const std::vector<std::string_view>& v) override {
        std::string s = "n:";
        for (const auto n : v) s += std::string(n) + ",";
        row_.push_back(s);
    }
    Result<void> end_row() override {
        rows.push_back(std::move(row_));
        row_.clear();
        return {};
    }
    std::vector<std::vector<std::string>> rows;

  private:
    std::vector<std::string> row_;
};

class SqliteCopySourceTest : public ::testing::Test {
  protected:
    void SetUp() override {
        static int n = 0;
        dir_ = fs::temp_directory_path() /
               ("ph_copy_source_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
        fs::create_directories(dir_);
        path_ = (dir_ / "posthorn.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::unique_ptr<SqliteStore> open_store() {
        auto s = SqliteStore::open({.path = path_, .readers = 1});
        EXPECT_TRUE(s) << s.error().message();
        return s ? std::move(*s) : nullptr;
    }
    void set_user_version(int v) {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
        const auto sql = "PRAGMA user_version = " + std::to_string(v);
        EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
    }
    // The rows of `table` as the source hands them, by their first cell.
    std::map<std::string, std::vector<std::string>> rows_of(SqliteCopySource& source,
                                                            std::string_view table) {
        for (const auto& t : copy_tables()) {
            if (t.name != table) continue;
            Recorder r;
            EXPECT_TRUE(source.read(t, r));
            std::map<std::string, std::vector<std::string>> out;
            for (auto& row : r.rows) {
                EXPECT_EQ(row.size(), t.columns.size()) << table << ": a cell per column";
                out[row.front()] = row;
            }
            EXPECT_EQ(static_cast<std::int64_t>(out.size()), *source.count(t)) << table;
            return out;
        }
        ADD_FAILURE() << "no table " << table;
        return {};
    }

    fs::path dir_;
    std::string path_;
};

// A lock of another process: the store is opened in a child (forked while this process has
// no thread), which keeps it open until told to close it.
TEST_F(SqliteCopySourceTest, AStoreOpenInAnotherProcessIsRefusedUntilItIsClosed) {
    open_store().reset();  // made and migrated
    int ready[2], done[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(done), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto s = SqliteStore::open({.path = path_, .readers = 1});
        char c = s ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        (void)!::read(done[0], &c, 1);
        if (s) (*s)->close();
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y') << "the child opened the store";
    auto busy = SqliteCopySource::open(path_);
    c = 'x';
    (void)!::write(done[1], &c, 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    for (const int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
    ASSERT_FALSE(busy) << "a posthorn has it open";
    EXPECT_EQ(busy.error(), errc::busy);
    auto source = SqliteCopySource::open(path_);
    ASSERT_TRUE(source) << source.error().message();
    EXPECT_EQ((*source)->schema_version(), detail::migrations().back().version);
}

TEST_F(SqliteCopySourceTest, AnotherSchemaVersionIsRefusedAndNotMigrated) {
    open_store().reset();
    const int known = detail::migrations().back().version;
    set_user_version(known - 1);
    auto older = SqliteCopySource::open(path_);
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error(), errc::older_schema);
    set_user_version(known + 1);
    auto newer = SqliteCopySource::open(path_);
    ASSERT_FALSE(newer);
    EXPECT_EQ(newer.error(), errc::newer_schema);
    set_user_version(0);
    EXPECT_FALSE(SqliteCopySource::open(path_)) << "not a posthorn store";
    EXPECT_FALSE(SqliteCopySource::open((dir_ / "missing.db").string()));
    EXPECT_FALSE(fs::exists(dir_ / "missing.db")) << "never created";
}

TEST_F(SqliteCopySourceTest, RowsComeOutInTheShapeOfTheTables) {
    auto store = open_store();
    ASSERT_TRUE(store);
    auto run = [](auto aw) { return block_on(std::move(aw)); };
    const Account acc{.id = id_at("acc_", kT0), .name = "acme", .created_at = kT0};
    ASSERT_TRUE(run(store->create_account(acc)));
    const Domain d{.id = id_at("dom_", kT0),
                   .account_id = acc.id,
                   .name = "mail.example.com",
                   .token = "tok",
                   .created_at = kT0,
                   .updated_at = kT0};
    ASSERT_TRUE(run(store->create_domain(d, {})));
    const Webhook w{.id = id_at("wh_", kT0),
                    .account_id = acc.id,
                    .url = "https://hooks.example/",
                    .events = {domain::EventKind::email_sent, domain::EventKind::email_failed},
                    .secret = std::string("s\0\xff", 3),
                    .created_at = kT0,
                    .updated_at = kT0};
    ASSERT_TRUE(run(store->create_webhook(w)));
    auto n = contract::new_email(acc, d, 2, kT0 + 5);
    n.raw = std::string("Subject: x\r\n\r\n\0\xff", 16);
    const auto email_id = n.email.id;
    ASSERT_TRUE(run(store->create_email(std::move(n))));
    auto routed =
        domain::make_event(domain::EventKind::domain_verified, acc.id, std::nullopt, "{}", kT0 + 6);
    ASSERT_TRUE(run(store->record_domain_check({.account_id = acc.id,
                                                .domain_id = d.id,
                                                .status = domain::DomainStatus::verified,
                                                .records_json = "{}",
                                                .checked_at = kT0 + 6,
                                                .event = routed})));
    ASSERT_TRUE(run(store->route_events(
        10, [](const Event&, const std::vector<Webhook>&) { return std::vector<std::string>{}; })));
    auto unrouted =
        domain::make_event(domain::EventKind::domain_failed, acc.id, std::nullopt, "{}", kT0 + 7);
    ASSERT_TRUE(run(store->record_domain_check({.account_id = acc.id,
                                                .domain_id = d.id,
                                                .status = domain::DomainStatus::failed,
                                                .records_json = "{}",
                                                .checked_at = kT0 + 7,
                                                .event = unrouted})));
    store.reset();

    auto source = SqliteCopySource::open(path_);
    ASSERT_TRUE(source) << source.error().message();
    auto emails = rows_of(**source, "emails");
    ASSERT_EQ(emails.size(), 1u);
    const auto& e = emails.at("t:" + email_id);
    EXPECT_EQ(e[2], "t:" + d.id);
    EXPECT_EQ(e[11], "t:r0@example.net\nr1@example.net") << "recipient_addresses";
    EXPECT_EQ(e[12], "b:0") << "track_opens";
    EXPECT_EQ(e[16], "i:2") << "total_recipients";
    EXPECT_EQ(e[25], "x:" + std::string("Subject: x\r\n\r\n\0\xff", 16)) << "raw, byte for byte";
    auto recipients = rows_of(**source, "recipients");
    ASSERT_EQ(recipients.size(), 2u);
    for (const auto& [id, r] : recipients) {
        EXPECT_EQ(r[6], "t:QUEUED");
        EXPECT_EQ(r[8], "i:" + std::to_string(kT0 + 5)) << "a fresh recipient is due when queued";
    }
    auto hooks = rows_of(**source, "webhooks");
    EXPECT_EQ(hooks.at("t:" + w.id)[3], "n:email.sent,email.failed,");
    EXPECT_EQ(hooks.at("t:" + w.id)[5], "x:" + std::string("s\0\xff", 3));
    EXPECT_EQ(hooks.at("t:" + w.id)[8], "NULL") << "never rotated: no previous secret";
    EXPECT_EQ(hooks.at("t:" + w.id)[9], "NULL");
    auto events = rows_of(**source, "events");
    ASSERT_EQ(events.size(), 2u);
    std::map<std::string, std::string> routed_of;
    for (const auto& [seq, ev] : events) routed_of[ev[1]] = ev[7];
    EXPECT_EQ(routed_of.at("t:" + routed.id), "b:1");
    EXPECT_EQ(routed_of.at("t:" + unrouted.id), "b:0");
    auto domains = rows_of(**source, "domains");
    EXPECT_EQ(domains.at("t:" + d.id)[3], "t:FAILED");
    EXPECT_TRUE(rows_of(**source, "request_logs").empty());
}

}  // namespace
}  // namespace posthorn::store::sqlite
