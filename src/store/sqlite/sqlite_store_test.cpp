#include "store/sqlite/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/block_on.hpp"
#include "core/id.hpp"
#include "domain/email_rules.hpp"
#include "store/sqlite/detail/migrations.hpp"

namespace posthorn::store::sqlite {
namespace {

// The schema version of the last migration (029_dashboard_sessions).
constexpr int kLatestVersion = 30;

namespace fs = std::filesystem;

// An email of `account_id` from its domain `domain_id` to one recipient, due at time 1.
NewEmail email_of(const std::string& account_id, const std::string& domain_id) {
    NewEmail n;
    n.email = {.id = new_id("em_", 1),
               .account_id = account_id,
               .domain_id = domain_id,
               .from_email = "a@mail.example.com",
               .to_display = "b@example.net",
               .subject = "s",
               .message_id = "m@h",
               .return_token = "rt1",
               .source = "api",
               .created_at = 1,
               .queued_at = 1};
    n.email.envelope_id = new_id("env_", 1);
    n.total_recipients = 1;
    n.recipients = {Recipient{.address = "b@example.net",
                              .domain = "example.net",
                              .type = domain::RecipientType::to,
                              .next_attempt_at = 1}};
    n.raw = "Subject: s\r\n\r\nbody\r\n";
    return n;
}

class SqliteStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ph_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        fs::create_directories(dir_);
        auto s = SqliteStore::open({.path = (dir_ / "t.db").string(), .readers = 2});
        ASSERT_TRUE(s) << s.error().message();
        store_ = std::move(*s);
    }
    void TearDown() override {
        store_.reset();
        fs::remove_all(dir_);
    }

    // Runs one coroutine to completion on a private io_context.
    template <class T>
    static T run(asio::awaitable<T> aw) {
        return block_on(std::move(aw));
    }

    Account make_account(const std::string& name) {
        Account a{.id = new_id("acc_", 1000), .name = name, .created_at = 1000};
        EXPECT_TRUE(run(store_->create_account(a)));
        return a;
    }

    // A new domain of `account` (`token`: its DNS label, unique), and an email from it to one
    // recipient, due at time 1.
    NewEmail one_email(const Account& account, const std::string& token = "t1") {
        const auto domain_id = new_id("dom_", 1);
        EXPECT_TRUE(run(store_->create_domain({.id = domain_id,
                                               .account_id = account.id,
                                               .name = "mail.example.com",
                                               .token = token,
                                               .created_at = 1,
                                               .updated_at = 1},
                                              {})));
        return email_of(account.id, domain_id);
    }
    // An email of `account`'s domain `domain_id` to one recipient, not yet tried (fresh).
    static NewEmail fresh_email(const Account& account, const std::string& domain_id) {
        auto n = email_of(account.id, domain_id);
        n.recipients[0].next_attempt_at.reset();
        return n;
    }

    static inline std::atomic<int> counter_{0};
    fs::path dir_;
    std::unique_ptr<SqliteStore> store_;
};

// A database at schema `version` (migrations 1..version) holding `rows` (SQL), as an older
// posthorn would have left it.
void make_database_at(const std::string& path, int version, const std::string& rows) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string sql = "BEGIN;";
    for (const auto& m : detail::migrations())
        if (m.version <= version) sql += m.sql;
    sql += "PRAGMA user_version = " + std::to_string(version) + ";" + rows + "COMMIT;";
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    sqlite3_free(err);
    sqlite3_close(db);
}

// The first column of the first row `sql` answers on `db`, as text.
std::string query_one(sqlite3* db, const char* sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        if (const auto* text = sqlite3_column_text(st, 0))
            out = reinterpret_cast<const char*>(text);
    sqlite3_finalize(st);
    return out;
}

// The same, on a connection of its own to the database at `path` (a store may have it open).
std::string query_at(const fs::path& path, const char* sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    auto out = query_one(db, sql);
    sqlite3_close(db);
    return out;
}

// An account and its email em_1, as rows of any schema version.
constexpr const char* kOneEmail = R"(
    INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'acme', 1);
    INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                        return_token, created_at, queued_at, updated_at)
        VALUES ('em_1', 'acc_1', 'a@x.example', 'b@y.example', 'Hi', 'm1', 't1', 5, 5, 5);)";

// Inserts into the tables that check a column against a list of values, each with the number
// of temporary B-trees it opens when it runs (0: the checks are comparisons, since version 6).
std::vector<std::pair<std::string, int>> checks_with_temporary_btrees(const std::string& path) {
    std::vector<std::pair<std::string, int>> out;
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const char* sql : {"INSERT INTO emails (status) VALUES (?1)",
                            "INSERT INTO recipients (type, status) VALUES (?1, ?2)",
                            "INSERT INTO domains (status) VALUES (?1)",
                            "INSERT INTO webhook_deliveries (state) VALUES (?1)",
                            "INSERT INTO suppressions (reason) VALUES (?1)"}) {
        sqlite3_stmt* st = nullptr;
        const std::string explain = std::string("EXPLAIN ") + sql;
        EXPECT_EQ(sqlite3_prepare_v2(db, explain.c_str(), -1, &st, nullptr), SQLITE_OK)
            << sqlite3_errmsg(db);
        int ephemeral = 0;
        while (sqlite3_step(st) == SQLITE_ROW)
            if (std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(st, 1))) ==
                "OpenEphemeral")
                ++ephemeral;
        sqlite3_finalize(st);
        out.emplace_back(sql, ephemeral);
    }
    sqlite3_close(db);
    return out;
}

TEST(SqliteStoreOpen, WithoutCreateOnlyAnExistingInstallOpensAndNothingIsMade) {
    const auto dir = fs::temp_directory_path() / ("ph_store_open_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto path = (dir / "posthorn.db").string();
    auto missing = SqliteStore::open({.path = path, .create = false});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), errc::no_schema);
    EXPECT_TRUE(fs::is_empty(dir)) << "no database, -epoch or -search file made";
    // A SQLite file that posthorn never migrated: refused, and left as it was (its journal
    // mode too).
    const auto foreign = (dir / "other.db").string();
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const auto size = fs::file_size(foreign);
    auto other = SqliteStore::open({.path = foreign, .create = false});
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error(), errc::no_schema);
    EXPECT_EQ(fs::file_size(foreign), size);
    EXPECT_FALSE(fs::exists(foreign + "-wal"));
    EXPECT_FALSE(fs::exists(foreign + "-epoch"));
    // Once made, it opens.
    { ASSERT_TRUE(SqliteStore::open({.path = path})); }
    auto existing = SqliteStore::open({.path = path, .create = false});
    ASSERT_TRUE(existing) << existing.error().message();
    EXPECT_EQ((*existing)->schema_version(), kLatestVersion);
    existing->reset();
    fs::remove_all(dir);
}

TEST_F(SqliteStoreTest, MigratesToLatestVersion) {
    ASSERT_FALSE(detail::migrations().empty());
    EXPECT_EQ(store_->schema_version(), detail::migrations().back().version);
    EXPECT_EQ(store_->schema_version(), kLatestVersion);
    for (const auto& [sql, ephemeral] : checks_with_temporary_btrees((dir_ / "t.db").string()))
        EXPECT_EQ(ephemeral, 0) << sql;
    // The checks still check.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "t.db").string().c_str(), &db), SQLITE_OK);
    auto exec = [db](const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); };
    EXPECT_EQ(exec("INSERT INTO accounts (id, name, created_at) VALUES ('acc_c', 'c', 1)"),
              SQLITE_OK);
    EXPECT_EQ(exec("INSERT INTO emails (id, account_id, from_email, to_display, subject, "
                   "message_id, return_token, created_at, queued_at, updated_at) VALUES "
                   "('em_c', 'acc_c', 'a@x.example', 'b@y.example', 'Hi', 'm', 't', 1, 1, 1)"),
              SQLITE_OK);
    EXPECT_EQ(exec("UPDATE emails SET status = 'DELIVERED' WHERE id = 'em_c'"), SQLITE_OK);
    EXPECT_EQ(exec("UPDATE emails SET status = 'LOST' WHERE id = 'em_c'"), SQLITE_CONSTRAINT);
    EXPECT_EQ(exec("INSERT INTO recipients (email_id, account_id, address, domain, type, "
                   "updated_at) VALUES ('em_c', 'acc_c', 'b@y.example', 'y.example', 'to', 1)"),
              SQLITE_OK);
    EXPECT_EQ(exec("UPDATE recipients SET type = 'reply-to'"), SQLITE_CONSTRAINT);
    EXPECT_EQ(exec("UPDATE recipients SET status = 'queued'"), SQLITE_CONSTRAINT);
    EXPECT_EQ(exec("INSERT INTO suppressions (account_id, address, reason, created_at) VALUES "
                   "('acc_c', 'x@y.example', 'hard_bounce', 1)"),
              SQLITE_OK);
    EXPECT_EQ(exec("INSERT INTO suppressions (account_id, address, reason, created_at) VALUES "
                   "('acc_c', 'z@y.example', 'bounce', 1)"),
              SQLITE_CONSTRAINT);
    sqlite3_close(db);
}

// Version 20: a tag filter of the email list (sqlite_emails.cpp, search_filter: an IN over
// email_tags) is a range of email_tags' key, and the emails it names are looked up by theirs:
// neither table is scanned, whatever the account holds.
TEST_F(SqliteStoreTest, ATagFilterReadsTheTagsKeyNotEveryEmail) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "t.db").string().c_str(), &db), SQLITE_OK);
    std::string plan;
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(
                  db,
                  "EXPLAIN QUERY PLAN SELECT e.id FROM emails e WHERE e.account_id = ?1 AND "
                  "e.id IN (SELECT t.email_id FROM email_tags t WHERE t.account_id = ?1 AND "
                  "t.name = ?10 AND t.value = ?11) ORDER BY e.id DESC LIMIT ?5 OFFSET ?6",
                  -1, &st, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    while (sqlite3_step(st) == SQLITE_ROW)
        plan += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) + "\n";
    sqlite3_finalize(st);
    sqlite3_close(db);
    EXPECT_NE(plan.find("SEARCH t USING PRIMARY KEY (account_id=? AND name=? AND value=?)"),
              std::string::npos)
        << plan;
    EXPECT_NE(plan.find("SEARCH e USING PRIMARY KEY (account_id=? AND id=?)"), std::string::npos)
        << plan;
    EXPECT_EQ(plan.find("SCAN"), std::string::npos) << plan;
}

// Version 13 takes the product's rules out of the schema: the trigger that fanned events out
// to webhooks is gone (the events a version-12 database holds were fanned out by it, so the
// router starts after them), the suppressions of bounces are hard bounces, and a bounce
// classification has its columns.
TEST_F(SqliteStoreTest, Version13RoutesOnlyNewEventsAndRenamesBounceSuppressions) {
    const auto path = (dir_ / "v12.db").string();
    make_database_at(path, 12, std::string(kOneEmail) + R"(
        INSERT INTO webhooks (id, account_id, url, events, active, secret, created_at, updated_at)
            VALUES ('wh_1', 'acc_1', 'https://h.example/', '["email.sent"]', 1, 'k', 1, 1);
        INSERT INTO events (id, account_id, type, email_id, data, created_at)
            VALUES ('evt_1', 'acc_1', 'email.sent', 'em_1', '{}', 5);
        INSERT INTO suppressions (account_id, address, reason, source_email_id, created_at)
            VALUES ('acc_1', 'gone@y.example', 'bounce', 'em_1', 6),
                   ('acc_1', 'angry@y.example', 'complaint', 'em_1', 7);)");
    EXPECT_EQ(query_at(path, "SELECT COUNT(*) FROM webhook_deliveries"), "1")
        << "fanned out by version 12's trigger";
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(query_at(path, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'events_fan_out'"),
              "0");
    auto route_all = [](const store::Event&, const std::vector<store::Webhook>& all) {
        std::vector<std::string> ids;
        for (const auto& w : all) ids.push_back(w.id);
        return ids;
    };
    EXPECT_EQ(*run((*s)->route_events(10, route_all)), 0) << "nothing new to route";
    EXPECT_EQ(query_at(path, "SELECT COUNT(*) FROM webhook_deliveries"), "1");
    EXPECT_EQ(query_at(path,
                       "SELECT group_concat(reason, ',') FROM (SELECT reason FROM "
                       "suppressions ORDER BY address)"),
              "complaint,hard_bounce");
    EXPECT_EQ(query_at(path,
                       "SELECT COUNT(*) FROM pragma_table_info('recipients') WHERE name "
                       "IN ('bounce_type', 'bounce_code', 'bounce_message')"),
              "3");
}

// A database of version 4 keeps its envelopes when migration 5 moves them into emails.
TEST_F(SqliteStoreTest, EnvelopesSurviveTheirMoveIntoEmails) {
    const auto path = (dir_ / "v4.db").string();
    make_database_at(path, 4, kOneEmail + std::string(R"(
        INSERT INTO envelopes (id, account_id, email_id, subject, from_email,
                               total_recipients, created_at)
            VALUES ('env_1', 'acc_1', 'em_1', 'Hi', 'a@x.example', 3, 5);)"));
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ((*s)->schema_version(), detail::migrations().back().version);
    auto page = run((*s)->list_envelopes({.account_id = "acc_1"}));
    ASSERT_TRUE(page);
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].id, "env_1");
    EXPECT_EQ(page->items[0].email_id, "em_1");
    EXPECT_EQ(page->items[0].total_recipients, 3);
    auto email = run((*s)->find_email("acc_1", "em_1"));
    ASSERT_TRUE(email);
    EXPECT_EQ(email->envelope_id, "env_1");
}

// Version 6 keys the raw messages by an integer the email holds, and keeps the request log
// in the order of its ids: a version-5 database keeps both, and its log counts.
TEST_F(SqliteStoreTest, MessagesAndLogsSurviveTheirMoves) {
    const auto path = (dir_ / "v5.db").string();
    const auto log1 = first_id_at("log_", 6), log2 = first_id_at("log_", 7);
    make_database_at(path, 5, kOneEmail + std::string(R"(
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at)
            VALUES ('em_2', 'acc_1', 'a@x.example', 'b@y.example', 'Hi', 'm2', 't2', 6, 6, 6);
        INSERT INTO email_bodies (email_id, raw) VALUES ('em_1', CAST('Subject: Hi' AS BLOB));
        INSERT INTO request_logs (id, account_id, created_at, method, url, status, duration_ms)
            VALUES (')" + log2 + R"(', 'acc_1', 7, 'GET', '/v1/logs', 200, 1),
                   (')" + log1 + R"(', 'acc_1', 6, 'POST', '/v1/emails', 200, 2);)"));
    EXPECT_EQ(checks_with_temporary_btrees(path)[1].second, 2);  // version 5: IN (...) twice
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ((*s)->schema_version(), kLatestVersion);
    for (const auto& [sql, ephemeral] : checks_with_temporary_btrees(path))
        EXPECT_EQ(ephemeral, 0) << sql;
    auto raw = run((*s)->email_raw("acc_1", "em_1"));
    ASSERT_TRUE(raw) << raw.error().message();
    EXPECT_EQ(*raw, "Subject: Hi");
    auto none = run((*s)->email_raw("acc_1", "em_2"));  // had no body, has none
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), errc::not_found);
    auto page = run((*s)->list_logs({.account_id = "acc_1", .limit = 10}));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->total, 2);
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_EQ(page->items[0].id, log2);  // newest first
    EXPECT_EQ(page->items[1].url, "/v1/emails");
    // The count triggers came back with the table.
    const auto log3 = first_id_at("log_", 2'000);
    (*s)->append_log({.id = log3,
                      .account_id = "acc_1",
                      .created_at = 2'000,
                      .method = "GET",
                      .url = "/v1/domains",
                      .status = 200});
    ASSERT_TRUE(run((*s)->flush()));
    auto deleted = run((*s)->delete_logs_before(1'000));
    ASSERT_TRUE(deleted);
    EXPECT_EQ(*deleted, 2);
    page = run((*s)->list_logs({.account_id = "acc_1", .limit = 10}));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->total, 1);
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].id, log3);
    // A body goes with its email.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    // The schema edited in place reads back whole (as SQLite advises to check after such edits).
    EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM email_bodies"), "1");
    EXPECT_EQ(sqlite3_exec(db, "DELETE FROM emails WHERE id = 'em_1'", nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM email_bodies"), "0");
    sqlite3_close(db);
}

// Version 9 keeps the request log by (account_id, created_at, id), one B-tree: the entries
// of a version-8 database survive in their order, with their counts, the count trigger
// comes back with the table, and expiry deletes by created_at, each account's own.
TEST_F(SqliteStoreTest, LogsSurviveTheirRebuildByAccount) {
    const auto path = (dir_ / "v8.db").string();
    // Two entries of acc_1 made in the same millisecond, whose ids sort the other way than
    // their insertion; one of acc_2, older.
    const auto a1 = first_id_at("log_", 6), b1 = new_id("log_", 7), c1 = new_id("log_", 7);
    const auto a2 = first_id_at("log_", 3);
    make_database_at(path, 8, R"(
        INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'acme', 1), ('acc_2', 'b', 1);
        INSERT INTO request_logs (id, account_id, created_at, method, url, status, duration_ms)
            VALUES (')" + c1 + R"(', 'acc_1', 7, 'GET', '/c', 200, 1),
                   (')" + a1 + R"(', 'acc_1', 6, 'POST', '/a', 201, 2),
                   (')" + b1 + R"(', 'acc_1', 7, 'GET', '/b', 404, 3),
                   (')" + a2 + R"(', 'acc_2', 3, 'GET', '/x', 200, 4);
        INSERT INTO request_log_counts (account_id, n) VALUES ('acc_1', 3), ('acc_2', 1);)");
    {
        auto s = SqliteStore::open({.path = path, .readers = 1});
        ASSERT_TRUE(s) << s.error().message();
        EXPECT_EQ((*s)->schema_version(), kLatestVersion);
        auto page = run((*s)->list_logs({.account_id = "acc_1", .limit = 10}));
        ASSERT_TRUE(page) << page.error().message();
        EXPECT_EQ(page->total, 3);
        ASSERT_EQ(page->items.size(), 3u);
        EXPECT_EQ(page->items[0].id, std::max(b1, c1));  // newest first, then by id
        EXPECT_EQ(page->items[1].id, std::min(b1, c1));
        EXPECT_EQ(page->items[2].id, a1);
        EXPECT_EQ(page->items[2].url, "/a");
        EXPECT_EQ(page->items[2].status, 201);
        EXPECT_EQ(page->items[2].duration_ms, 2);
        auto missing = run((*s)->list_logs({.account_id = "acc_1", .limit = 10, .status = 404}));
        ASSERT_TRUE(missing);
        EXPECT_EQ(missing->total, 1);
        ASSERT_EQ(missing->items.size(), 1u);
        EXPECT_EQ(missing->items[0].url, "/b");
        auto other = run((*s)->list_logs({.account_id = "acc_2", .limit = 10}));
        ASSERT_TRUE(other);
        EXPECT_EQ(other->total, 1);
        ASSERT_EQ(other->items.size(), 1u);
        EXPECT_EQ(other->items[0].id, a2);

        auto deleted = run((*s)->delete_logs_before(7));
        ASSERT_TRUE(deleted) << deleted.error().message();
        EXPECT_EQ(*deleted, 2);  // acc_1's of 6 and acc_2's of 3
        EXPECT_EQ(run((*s)->list_logs({.account_id = "acc_1", .limit = 10}))->total, 2);
        EXPECT_EQ(run((*s)->list_logs({.account_id = "acc_2", .limit = 10}))->total, 0);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_NE(query_one(db, "SELECT sql FROM sqlite_schema WHERE name = 'request_logs'")
                  .find("WITHOUT ROWID"),
              std::string::npos);
    EXPECT_EQ(query_one(db,
                        "SELECT COUNT(*) FROM sqlite_schema WHERE tbl_name = 'request_logs' AND "
                        "type = 'index'"),
              "0")
        << "one B-tree: no index beside the table";
    EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_one(db, "PRAGMA foreign_key_check"), "");
    sqlite3_close(db);
}

// A migration that fails leaves the database as it was: here 006 cannot create a table
// whose name is taken, so the database stays at version 5, its messages in place.
TEST_F(SqliteStoreTest, AFailedMigrationChangesNothing) {
    const auto path = (dir_ / "v5-taken.db").string();
    make_database_at(path, 5, kOneEmail + std::string(R"(
        INSERT INTO email_bodies (email_id, raw) VALUES ('em_1', CAST('Subject: Hi' AS BLOB));
        CREATE TABLE email_bodies_by_id (x);)"));
    auto s = SqliteStore::open({.path = path, .readers = 1});
    EXPECT_FALSE(s);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(query_one(db, "PRAGMA user_version"), "5");
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM email_bodies WHERE email_id = 'em_1'"),
              "1");  // the version-5 table, with its row
    EXPECT_GT(std::stoi(query_one(
                  db, "SELECT COUNT(*) FROM sqlite_schema WHERE sql LIKE '%status IN (%'")),
              0);  // the CHECKs as they were
    sqlite3_close(db);
}

TEST_F(SqliteStoreTest, ConcurrentWritesShareCommitsAndAllLand) {
    auto acc = make_account("acme");
    // 500 concurrent awaited writes from 4 threads; each must be acknowledged and present.
    constexpr int kWrites = 500;
    asio::io_context ctx;
    std::atomic<int> ok{0};
    for (int i = 0; i < kWrites; ++i) {
        ApiKey k{.id = new_id("key_", i),
                 .account_id = acc.id,
                 .prefix = "p",
                 .hash = "h" + std::to_string(i),
                 .created_at = i};
        asio::co_spawn(ctx, store_->create_api_key(k), [&](std::exception_ptr, Result<void> r) {
            if (r) ++ok;
        });
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&] { ctx.run(); });
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), kWrites);
    auto keys = run(store_->list_api_keys(acc.id));
    ASSERT_TRUE(keys);
    EXPECT_EQ(keys->size(), static_cast<std::size_t>(kWrites));
}

TEST_F(SqliteStoreTest, OneFailingWriteDoesNotUndoItsBatch) {
    auto acc = make_account("acme");
    asio::io_context ctx;
    int ok = 0, conflicts = 0;
    for (int i = 0; i < 20; ++i) {
        // Every other key reuses hash "dup": the first wins, the rest conflict.
        ApiKey k{.id = new_id("key_", i),
                 .account_id = acc.id,
                 .prefix = "p",
                 .hash = i % 2 ? "dup" : "h" + std::to_string(i),
                 .created_at = i};
        asio::co_spawn(ctx, store_->create_api_key(k), [&](std::exception_ptr, Result<void> r) {
            if (r)
                ++ok;
            else if (r.error() == errc::conflict)
                ++conflicts;
        });
    }
    ctx.run();
    EXPECT_EQ(ok, 11);
    EXPECT_EQ(conflicts, 9);
    EXPECT_EQ(run(store_->list_api_keys(acc.id))->size(), 11u);
}

// The writer never checkpoints; the checkpointer thread does, so the pages reach the
// database file and the WAL does not grow without end.
TEST_F(SqliteStoreTest, TheWalIsCheckpointedOffTheWriter) {
    auto a = make_account("a");
    const auto db_file = dir_ / "t.db";
    const auto before = fs::file_size(db_file);
    const std::string agent(2000, 'x');  // about a page per entry
    for (int round = 0; round < 30; ++round) {
        for (int i = 0; i < 100; ++i)
            store_->append_log({.id = new_id("log_", 1000 + round * 100 + i),
                                .account_id = a.id,
                                .created_at = 1000,
                                .method = "GET",
                                .url = "/v1/logs",
                                .status = 200,
                                .ip = "127.0.0.1",
                                .user_agent = agent});
        ASSERT_TRUE(run(store_->flush()));  // one commit per round: the WAL hook sees each
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (fs::file_size(db_file) < before + 4'000'000 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GE(fs::file_size(db_file), before + 4'000'000) << "pages copied into the database";
    auto page = run(store_->list_logs({.account_id = a.id, .limit = 1}));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->total, 3000);
}

// Checkpoints run every thousand frames added, not after every commit, yet the WAL must
// still start over now and then while commits keep coming (a WAL starts over only at a
// commit that finds it all copied), instead of growing until a RESTART checkpoint stalls
// the writer.
TEST_F(SqliteStoreTest, TheWalStartsOverWhileCommitsKeepComing) {
    store_.reset();  // again, starting over at 4000 frames (16000 by default)
    auto s = SqliteStore::open(
        {.path = (dir_ / "t.db").string(), .readers = 2, .wal_restart_frames = 4000});
    ASSERT_TRUE(s) << s.error().message();
    store_ = std::move(*s);
    auto acc = make_account("acme");
    const auto wal = dir_ / "t.db-wal";
    std::uintmax_t longest = 0;
    for (int i = 0; i < 4000; ++i) {  // ~12,000 frames in all: 3 pages per commit
        ASSERT_TRUE(run(store_->create_api_key({.id = new_id("key_", i),
                                                .account_id = acc.id,
                                                .prefix = "p",
                                                .hash = "h" + std::to_string(i),
                                                .created_at = i})));
        if (i % 100 == 0) longest = std::max(longest, fs::file_size(wal));
    }
    EXPECT_LT(longest, 8000u * 4120u) << "the WAL (a WAL file keeps its longest length)";
}

// The entries of a batch are written together, in statements of many rows (32, then the
// powers of two of the rest), and counted once per account; one that cannot be written
// (here: a second with the key of another) is left out and not counted, the others stay.
TEST_F(SqliteStoreTest, ABadLogEntryDoesNotTakeItsBatchWithIt) {
    auto a = make_account("a");
    auto b = make_account("b");
    std::vector<std::string> ids;
    for (int i = 0; i < 45; ++i) ids.push_back(new_id("log_", 5000 + i));
    for (int i = 0; i < 45; ++i) {
        const bool dup = i == 37;  // in the rest after the first 32: a statement of 8 rows
        store_->append_log({.id = dup ? ids[36] : ids[i],
                            .account_id = i % 9 == 4 ? b.id : a.id,
                            .created_at = dup ? 5036 : 5000 + i,
                            .method = "GET",
                            .url = "/v1/logs?i=" + std::to_string(i),
                            .status = 200,
                            .ip = "127.0.0.1",
                            .user_agent = "t"});
    }
    ASSERT_TRUE(run(store_->flush()));
    auto pa = run(store_->list_logs({.account_id = a.id, .limit = 100}));
    auto pb = run(store_->list_logs({.account_id = b.id, .limit = 100}));
    ASSERT_TRUE(pa && pb);
    EXPECT_EQ(pb->total, 5);  // i = 4, 13, 22, 31, 40
    EXPECT_EQ(pb->items.size(), 5u);
    EXPECT_EQ(pa->total, 39) << "45 entries, 5 of b, one refused";
    ASSERT_EQ(pa->items.size(), 39u);
    for (const auto& e : pa->items) EXPECT_NE(e.url, "/v1/logs?i=37");
    // Every other entry is there, with its own fields, in order.
    for (std::size_t k = 0; k + 1 < pa->items.size(); ++k)
        EXPECT_GT(pa->items[k].created_at, pa->items[k + 1].created_at);
    EXPECT_EQ(pa->items.back().url, "/v1/logs?i=0");
    EXPECT_EQ(pa->items.front().url, "/v1/logs?i=44");
}

TEST_F(SqliteStoreTest, ReadersSeeWritesOfThisAndOtherProcesses) {
    auto acc = make_account("acme");
    // A read first, so that any snapshot a reader kept would be stale afterwards.
    EXPECT_EQ(run(store_->find_api_key("k1")).error(), errc::not_found);
    EXPECT_EQ(run(store_->list_logs({.account_id = acc.id}))->total, 0);
    // A second store on the same file stands for the CLI in another process.
    auto other = SqliteStore::open({.path = (dir_ / "t.db").string(), .readers = 1});
    ASSERT_TRUE(other);
    ASSERT_TRUE(run((*other)->create_api_key(
        {.id = new_id("key_", 1), .account_id = acc.id, .prefix = "p", .hash = "k1"})));
    for (int i = 0; i < 4; ++i) {  // every reader connection must see it
        EXPECT_TRUE(run(store_->find_api_key("k1"))) << i;
    }
    store_->append_log({.id = new_id("log_", 1),
                        .account_id = acc.id,
                        .created_at = 1,
                        .method = "GET",
                        .url = "/",
                        .status = 200});
    ASSERT_TRUE(run(store_->flush()));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(run(store_->list_logs({.account_id = acc.id}))->total, 1);
}

// Keys and sending domains are answered from memory after the first look-up; a change
// committed by this store or by another process on the same file (the CLI revoking a key)
// is seen by the next look-up all the same.
TEST_F(SqliteStoreTest, CachedKeysAndDomainsFollowChangesOfEveryProcess) {
    auto acc = make_account("acme");
    const auto key_id = new_id("key_", 1);
    const auto domain_id = new_id("dom_", 1);
    ASSERT_TRUE(run(
        store_->create_api_key({.id = key_id, .account_id = acc.id, .prefix = "p", .hash = "k1"})));
    ASSERT_TRUE(run(store_->create_domain({.id = domain_id,
                                           .account_id = acc.id,
                                           .name = "mail.example.com",
                                           .token = "t1",
                                           .created_at = 1,
                                           .updated_at = 1},
                                          {})));
    for (int i = 0; i < 2; ++i) {  // read, then answered from the cache
        auto key = run(store_->find_api_key("k1"));
        ASSERT_TRUE(key);
        EXPECT_FALSE(key->revoked_at);
        auto d = run(store_->find_domain_by_name(acc.id, "mail.example.com"));
        ASSERT_TRUE(d);
        EXPECT_EQ(d->status, domain::DomainStatus::not_started);
        EXPECT_TRUE(d->sending);
    }
    EXPECT_FALSE(run(store_->find_domain_by_name("acc_other", "mail.example.com")))
        << "the account is part of the key";

    // Another process (a second store on the file) revokes the key and verifies the domain.
    auto other = SqliteStore::open({.path = (dir_ / "t.db").string(), .readers = 1});
    ASSERT_TRUE(other);
    ASSERT_TRUE(run((*other)->revoke_api_key(key_id, 5)));
    ASSERT_TRUE(run((*other)->record_domain_check({.account_id = acc.id,
                                                   .domain_id = domain_id,
                                                   .status = domain::DomainStatus::verified,
                                                   .records_json = "{}",
                                                   .checked_at = 6,
                                                   .next_check_at = 7})));
    auto key = run(store_->find_api_key("k1"));
    ASSERT_TRUE(key);
    EXPECT_EQ(key->revoked_at, std::optional<UnixMs>(5));
    auto d = run(store_->find_domain_by_name(acc.id, "mail.example.com"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->status, domain::DomainStatus::verified);

    // This store's own change.
    ASSERT_TRUE(run(store_->update_domain_settings(acc.id, domain_id, {.sending = false}, 8)));
    d = run(store_->find_domain_by_name(acc.id, "mail.example.com"));
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->sending);
    d = run((*other)->find_domain_by_name(acc.id, "mail.example.com"));
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->sending);
}

// The epoch file takes the database's permission bits (as SQLite's -wal and -shm do), and a
// store that cannot map it does not open: a CLI that wrote a revocation without moving the
// count would leave the key valid in a server's cache.
TEST_F(SqliteStoreTest, TheEpochFileGoesWithTheDatabase) {
    const auto path = (dir_ / "modes.db").string();
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        sqlite3_close(db);
    }
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::group_write);
    {
        auto s = SqliteStore::open({.path = path, .readers = 1});
        ASSERT_TRUE(s) << s.error().message();
    }
    EXPECT_EQ(fs::status(path + "-epoch").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::group_write);

    const auto blocked = (dir_ / "blocked.db").string();
    fs::create_directories(blocked + "-epoch");  // a directory cannot be mapped
    EXPECT_FALSE(SqliteStore::open({.path = blocked, .readers = 1}));
}

// A recipient not yet tried (no next_attempt_at) is claimed in the order of ids, without
// the index of when recipients are due: once claimed it is leased, shows the time it was
// accepted as its next attempt, and is claimed again through that index when its lease runs
// out; the claim moves queue_state.fresh_after past it.
TEST_F(SqliteStoreTest, FreshRecipientsAreClaimedInTheOrderOfTheirIds) {
    auto acc = make_account("acme");
    const auto domain_id = one_email(acc).email.domain_id;
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        auto n = fresh_email(acc, domain_id);
        n.email.created_at = n.email.queued_at = 50 + i;
        ids.push_back(n.email.id);
        ASSERT_TRUE(run(store_->create_email(std::move(n))));
    }
    auto shown = run(store_->find_email(acc.id, ids[1]));
    ASSERT_TRUE(shown);
    EXPECT_EQ(shown->recipients.at(0).next_attempt_at, 51) << "due since it was accepted";

    auto first = run(store_->claim_due(100, 2, "node-a", 1000));
    ASSERT_TRUE(first) << first.error().message();
    ASSERT_EQ(first->size(), 2u);
    std::set<std::string> got = {(*first)[0].id, (*first)[1].id};
    EXPECT_EQ(got, (std::set<std::string>{ids[0], ids[1]})) << "the first two, by id";
    EXPECT_EQ(query_at(dir_ / "t.db", "SELECT fresh_after FROM queue_state"), "2");
    auto second = run(store_->claim_due(100, 10, "node-a", 1000));
    ASSERT_EQ(second->size(), 1u);
    EXPECT_EQ((*second)[0].id, ids[2]);
    EXPECT_EQ(query_at(dir_ / "t.db", "SELECT fresh_after FROM queue_state"), "3");
    EXPECT_TRUE(run(store_->claim_due(500, 10, "node-a", 1500))->empty()) << "all leased";
    EXPECT_EQ(run(store_->find_email(acc.id, ids[0]))->recipients.at(0).next_attempt_at, 50);
    EXPECT_EQ(
        query_at(dir_ / "t.db", "SELECT COUNT(*) FROM recipients WHERE next_attempt_at IS NULL"),
        "0");
    auto again = run(store_->claim_due(2000, 10, "node-b", 3000));
    EXPECT_EQ(again->size(), 3u) << "their leases ran out: due through the index";
}

// Half of a batch goes to recipients due again, the rest to fresh ones, and what one side
// leaves the other takes: neither waits behind a backlog of the other.
TEST_F(SqliteStoreTest, AClaimSharesItsBatchBetweenRetriesAndFreshMail) {
    auto acc = make_account("acme");
    const auto domain_id = one_email(acc).email.domain_id;
    std::set<std::string> retries, fresh;
    for (int i = 0; i < 4; ++i) {
        // Due at 1, as a retry is; or not yet tried.
        auto n = i % 2 ? fresh_email(acc, domain_id) : email_of(acc.id, domain_id);
        (i % 2 ? fresh : retries).insert(n.email.id);
        ASSERT_TRUE(run(store_->create_email(std::move(n))));
    }
    auto batch = run(store_->claim_due(100, 2, "n", 1000));
    ASSERT_TRUE(batch);
    ASSERT_EQ(batch->size(), 2u);
    EXPECT_EQ(retries.count((*batch)[0].id) + retries.count((*batch)[1].id), 1u);
    EXPECT_EQ(fresh.count((*batch)[0].id) + fresh.count((*batch)[1].id), 1u);
    auto rest = run(store_->claim_due(100, 3, "n", 1000));
    ASSERT_EQ(rest->size(), 2u) << "one of each left";
    ASSERT_TRUE(run(store_->create_email(fresh_email(acc, domain_id))));
    EXPECT_EQ(run(store_->claim_due(100, 4, "n", 1000))->size(), 1u) << "fresh fills the batch";
}

// Deleting the recipients with the largest ids (an account's, by hand) brings fresh_after
// down with them, so that a new recipient, which takes the largest id left plus one, is not
// at or below it and is still claimed.
TEST_F(SqliteStoreTest, DeletingTheNewestRecipientsKeepsNewOnesClaimable) {
    auto a = make_account("a");
    auto b = make_account("b");
    const auto a_domain = one_email(a, "ta").email.domain_id;
    const auto b_domain = one_email(b, "tb").email.domain_id;
    ASSERT_TRUE(run(store_->create_email(fresh_email(a, a_domain))));
    ASSERT_TRUE(run(store_->create_email(fresh_email(a, a_domain))));
    ASSERT_TRUE(run(store_->create_email(fresh_email(b, b_domain))));
    ASSERT_EQ(run(store_->claim_due(100, 10, "n", 1000))->size(), 3u);
    EXPECT_EQ(query_at(dir_ / "t.db", "SELECT fresh_after FROM queue_state"), "3");
    store_.reset();
    const auto path = (dir_ / "t.db").string();
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        ASSERT_EQ(
            sqlite3_exec(
                db,
                ("PRAGMA foreign_keys=ON; DELETE FROM accounts WHERE id = '" + b.id + "'").c_str(),
                nullptr, nullptr, nullptr),
            SQLITE_OK);
        EXPECT_EQ(query_one(db, "SELECT fresh_after FROM queue_state"), "2");
        sqlite3_close(db);
    }
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_TRUE(s);
    store_ = std::move(*s);
    auto n = fresh_email(a, a_domain);
    const auto id = n.email.id;
    ASSERT_TRUE(run(store_->create_email(std::move(n))));
    EXPECT_EQ(run(store_->find_email(a.id, id))->recipients.at(0).id, 3) << "an id used before";
    auto claimed = run(store_->claim_due(100, 10, "n", 1000));
    ASSERT_EQ(claimed->size(), 1u);
    EXPECT_EQ((*claimed)[0].id, id);
}

// Version 8 rebuilds emails without a rowid: the rows, their recipients (which refer to them
// and would have gone with a plain DROP TABLE under foreign keys) and their bodies survive,
// the foreign key holds afterwards, and a bounce address of before is still found.
TEST_F(SqliteStoreTest, EmailsSurviveTheirRebuild) {
    const auto path = (dir_ / "v7.db").string();
    const std::string old_token(26, 'q');
    make_database_at(path, 7,
                     R"(
        INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'acme', 1);
        INSERT INTO email_bodies (id, raw) VALUES (9, CAST('Subject: Hi' AS BLOB));
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at, body_id)
            VALUES ('em_1', 'acc_1', 'a@x.example', 'b@y.example', 'Hi', 'm1', ')" +
                         old_token + R"(', 5, 5, 5, 9);
        INSERT INTO recipients (email_id, account_id, address, domain, type, updated_at)
            VALUES ('em_1', 'acc_1', 'b@y.example', 'y.example', 'to', 5);)");
    {
        auto s = SqliteStore::open({.path = path, .readers = 1});
        ASSERT_TRUE(s) << s.error().message();
        EXPECT_EQ((*s)->schema_version(), kLatestVersion);
        auto e = run((*s)->find_email_by_return_token(old_token));
        ASSERT_TRUE(e) << e.error().message();
        EXPECT_EQ(e->id, "em_1");
        ASSERT_EQ(e->recipients.size(), 1u) << "the recipients stayed";
        EXPECT_EQ(*run((*s)->email_raw("acc_1", "em_1")), "Subject: Hi");
        EXPECT_FALSE(run((*s)->find_email_by_return_token(std::string(26, 'z'))));
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_NE(
        query_one(db, "SELECT sql FROM sqlite_schema WHERE name = 'emails'").find("WITHOUT ROWID"),
        std::string::npos);
    EXPECT_EQ(query_one(db,
                        "SELECT COUNT(*) FROM sqlite_schema WHERE tbl_name = 'emails' AND "
                        "type = 'index' AND sql IS NULL"),
              "0")
        << "no automatic index (unique return tokens) is left";
    EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_one(db, "PRAGMA foreign_key_check"), "");
    // Deleting the email takes its recipients (a foreign key until version 10, a trigger since).
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA foreign_keys=ON; DELETE FROM emails WHERE id = 'em_1'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM recipients"), "0");
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM email_bodies"), "0");
    sqlite3_close(db);
}

// Version 10 finds an email's recipients by the range of their ids, which the email row
// holds: the recipients of a version-9 database are found again (and only their own), a
// search by recipient still finds its email, a new email's recipients are its own, and
// deleting an email deletes exactly its recipients, with no index of recipients by email and
// no foreign key from recipients to emails left.
TEST_F(SqliteStoreTest, RecipientsAreFoundByTheirRange) {
    const auto path = (dir_ / "v9.db").string();
    make_database_at(path, 9, R"(
        INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'acme', 1);
        INSERT INTO domains (id, account_id, name, token, created_at, updated_at)
            VALUES ('dom_1', 'acc_1', 'x.example', 'tok1', 1, 1);
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at)
            VALUES ('em_1', 'acc_1', 'a@x.example', 'b@y.example', 'One', 'm1', 't1', 5, 5, 5),
                   ('em_2', 'acc_1', 'a@x.example', 'd@y.example', 'Two', 'm2', 't2', 6, 6, 6),
                   ('em_3', 'acc_1', 'a@x.example', 'e@y.example', 'None', 'm3', 't3', 7, 7, 7);
        INSERT INTO recipients (id, email_id, account_id, address, domain, type, updated_at)
            VALUES (1, 'em_1', 'acc_1', 'b@y.example', 'y.example', 'to', 5),
                   (2, 'em_1', 'acc_1', 'c@y.example', 'y.example', 'cc', 5),
                   (3, 'em_2', 'acc_1', 'd@y.example', 'y.example', 'to', 6);)");
    {
        auto s = SqliteStore::open({.path = path, .readers = 1});
        ASSERT_TRUE(s) << s.error().message();
        EXPECT_EQ((*s)->schema_version(), kLatestVersion);
        auto one = run((*s)->find_email("acc_1", "em_1"));
        ASSERT_TRUE(one) << one.error().message();
        ASSERT_EQ(one->recipients.size(), 2u);
        EXPECT_EQ(one->recipients[0].address, "b@y.example");
        EXPECT_EQ(one->recipients[1].address, "c@y.example");
        auto two = run((*s)->find_email("acc_1", "em_2"));
        ASSERT_TRUE(two);
        ASSERT_EQ(two->recipients.size(), 1u);
        EXPECT_EQ(two->recipients[0].address, "d@y.example");
        auto none = run((*s)->find_email("acc_1", "em_3"));  // had none, has none
        ASSERT_TRUE(none);
        EXPECT_TRUE(none->recipients.empty());
        auto found = run((*s)->list_emails({.account_id = "acc_1", .limit = 10, .search = "c@y"}));
        ASSERT_TRUE(found);
        ASSERT_EQ(found->items.size(), 1u);
        EXPECT_EQ(found->items[0].id, "em_1");
        // A new email: its recipients come after the others, and are its own.
        auto n = email_of("acc_1", "dom_1");
        const auto id = n.email.id;
        ASSERT_TRUE(run((*s)->create_email(std::move(n))));
        auto fresh = run((*s)->find_email("acc_1", id));
        ASSERT_TRUE(fresh);
        ASSERT_EQ(fresh->recipients.size(), 1u);
        EXPECT_EQ(fresh->recipients[0].id, 4);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'recipients_email'"),
              "0");
    EXPECT_EQ(query_one(db,
                        "SELECT COUNT(*) FROM pragma_foreign_key_list('recipients') "
                        "WHERE \"table\" = 'emails'"),
              "0");
    EXPECT_EQ(query_one(db,
                        "SELECT first_recipient_id || '-' || last_recipient_id FROM emails "
                        "WHERE id = 'em_1'"),
              "1-2");
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA foreign_keys=ON; DELETE FROM emails WHERE id = 'em_1'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(query_one(db, "SELECT group_concat(id) FROM (SELECT id FROM recipients ORDER BY id)"),
              "3,4");
    sqlite3_close(db);
}

// Version 14 keeps each account's number of emails and inbound emails: counted at the
// migration from the rows there, added to by each insert, counted down by a deletion; a list
// without a filter answers it as its total.
TEST_F(SqliteStoreTest, Version14KeepsTheCountsOfTheLists) {
    const auto path = (dir_ / "v13.db").string();
    make_database_at(path, 13, std::string(kOneEmail) + R"(
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at)
            VALUES ('em_2', 'acc_1', 'a@x.example', 'c@y.example', 'Two', 'm2', 't2', 6, 6, 6);
        INSERT INTO inbound_emails (id, account_id, from_email, to_address, subject, raw,
                                    received_at)
            VALUES ('in_1', 'acc_1', 'f@z.example', 'me@x.example', 'In', 'raw', 7);
        INSERT INTO domains (id, account_id, name, token, created_at, updated_at)
            VALUES ('dom_1', 'acc_1', 'x.example', 'tok1', 1, 1);)");
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(query_at(path, "SELECT n FROM email_counts WHERE account_id = 'acc_1'"), "2");
    EXPECT_EQ(query_at(path, "SELECT n FROM inbound_counts WHERE account_id = 'acc_1'"), "1");
    EXPECT_EQ(run((*s)->list_emails({.account_id = "acc_1", .limit = 1}))->total, 2);
    EXPECT_EQ(run((*s)->list_envelopes({.account_id = "acc_1", .limit = 1}))->total, 2);
    EXPECT_EQ(run((*s)->list_inbound({.account_id = "acc_1", .limit = 1}))->total, 1);
    ASSERT_TRUE(run((*s)->create_email(email_of("acc_1", "dom_1"))));
    EXPECT_EQ(run((*s)->list_emails({.account_id = "acc_1", .limit = 1}))->total, 3);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DELETE FROM emails WHERE id = 'em_2'", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    EXPECT_EQ(run((*s)->list_emails({.account_id = "acc_1", .limit = 10}))->total, 2);
    EXPECT_EQ(run((*s)->list_emails({.account_id = "acc_1", .limit = 10}))->items.size(), 2u);
}

// A version-9 database whose recipients of one email are not consecutive (edited by hand)
// cannot be read by ranges: the migration stops, and leaves the database as it was.
TEST_F(SqliteStoreTest, RecipientsOutOfRangeStopTheMigration) {
    const auto path = (dir_ / "v9gap.db").string();
    make_database_at(path, 9, std::string(kOneEmail) + R"(
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at)
            VALUES ('em_2', 'acc_1', 'a@x.example', 'd@y.example', 'Two', 'm2', 't2', 6, 6, 6);
        INSERT INTO recipients (id, email_id, account_id, address, domain, type, updated_at)
            VALUES (1, 'em_1', 'acc_1', 'b@y.example', 'y.example', 'to', 5),
                   (2, 'em_2', 'acc_1', 'd@y.example', 'y.example', 'to', 6),
                   (3, 'em_1', 'acc_1', 'c@y.example', 'y.example', 'cc', 5);)");
    auto s = SqliteStore::open({.path = path, .readers = 1});
    ASSERT_FALSE(s);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(query_one(db, "PRAGMA user_version"), "9");
    EXPECT_EQ(query_one(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'recipients_email'"),
              "1");
    sqlite3_close(db);
}

// Version 11 keeps emails by (account_id, id), with no index by creation time: a version-10
// database's emails are all there, each account's listed newest first in the order of their
// ids, date bounds pick the same ones as before, and what finds an email by its id alone (a
// return token, a tracked open) finds it whichever account it is in.
TEST_F(SqliteStoreTest, EmailsAreKeptByAccountAndId) {
    const auto path = (dir_ / "v10.db").string();
    const UnixMs t0 = 1'900'000'000'000;
    std::vector<std::string> ids;  // acc_1's at t0, t0+10, t0+20; acc_2's at t0+15
    for (UnixMs t : {t0, t0 + 10, t0 + 20, t0 + 15}) ids.push_back(new_id("em_", t));
    auto row = [&](int i, const char* account, UnixMs t, int recipient) {
        const auto n = std::to_string(i), at = std::to_string(t), r = std::to_string(recipient);
        return "('" + ids[i] + "', '" + account + "', 'a@x.example', 'b@y.example', 'S" + n +
               "', 'm" + n + "', '" + ids[i].substr(3) + "abcdefghij01234" + n + "', " + at + ", " +
               at + ", " + at + ", " + r + ", " + r + ", " + r + ")";
    };
    make_database_at(path, 10,
                     R"(
        INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'acme', 1), ('acc_2', 'b', 1);
        INSERT INTO email_bodies (id, raw) VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'x');
        INSERT INTO recipients (id, email_id, account_id, address, domain, type, updated_at)
            VALUES (1, ')" +
                         ids[0] + R"(', 'acc_1', 'b@y.example', 'y.example', 'to', 5),
                   (2, ')" +
                         ids[1] + R"(', 'acc_1', 'b@y.example', 'y.example', 'to', 5),
                   (3, ')" +
                         ids[2] + R"(', 'acc_1', 'b@y.example', 'y.example', 'to', 5),
                   (4, ')" +
                         ids[3] + R"(', 'acc_2', 'b@y.example', 'y.example', 'to', 5);
        INSERT INTO emails (id, account_id, from_email, to_display, subject, message_id,
                            return_token, created_at, queued_at, updated_at, body_id,
                            first_recipient_id, last_recipient_id)
            VALUES )" + row(0, "acc_1", t0, 1) +
                         ", " + row(1, "acc_1", t0 + 10, 2) + ", " + row(2, "acc_1", t0 + 20, 3) +
                         ", " + row(3, "acc_2", t0 + 15, 4) + ";");
    {
        auto s = SqliteStore::open({.path = path, .readers = 1});
        ASSERT_TRUE(s) << s.error().message();
        EXPECT_EQ((*s)->schema_version(), kLatestVersion);
        auto all = run((*s)->list_emails({.account_id = "acc_1", .limit = 10}));
        ASSERT_TRUE(all) << all.error().message();
        EXPECT_EQ(all->total, 3);
        ASSERT_EQ(all->items.size(), 3u);
        EXPECT_EQ(all->items[0].id, ids[2]);
        EXPECT_EQ(all->items[1].id, ids[1]);
        EXPECT_EQ(all->items[2].id, ids[0]);
        auto asc = run((*s)->list_emails(
            {.account_id = "acc_1", .limit = 1, .order = SortOrder::asc, .start = t0 + 1}));
        ASSERT_TRUE(asc);
        EXPECT_EQ(asc->total, 2);
        ASSERT_EQ(asc->items.size(), 1u);
        EXPECT_EQ(asc->items[0].id, ids[1]);
        auto bounded = run((*s)->list_emails(
            {.account_id = "acc_1", .limit = 10, .start = t0 + 10, .end = t0 + 10}));
        ASSERT_TRUE(bounded);
        EXPECT_EQ(bounded->total, 1);
        ASSERT_EQ(bounded->items.size(), 1u);
        EXPECT_EQ(bounded->items[0].id, ids[1]);
        auto other = run((*s)->list_emails({.account_id = "acc_2", .limit = 10}));
        ASSERT_TRUE(other);
        ASSERT_EQ(other->items.size(), 1u);
        EXPECT_EQ(other->items[0].id, ids[3]);
        EXPECT_EQ(run((*s)->find_email("acc_1", ids[3])).error(), errc::not_found);
        // By its id alone: the other account's email, by its return token and by an open.
        auto bounced = run((*s)->find_email_by_return_token(ids[3].substr(3) + "abcdefghij012343"));
        ASSERT_TRUE(bounced) << bounced.error().message();
        EXPECT_EQ(bounced->id, ids[3]);
        EXPECT_EQ(bounced->account_id, "acc_2");
        auto open = [&](const store::Email& e) {
            return std::optional(domain::engage(e, domain::Engagement::open, "{}", t0 + 99));
        };
        ASSERT_TRUE(run((*s)->change_email("", ids[3], false, open)));
        auto opened = run((*s)->find_email("acc_2", ids[3]));
        ASSERT_TRUE(opened);
        EXPECT_EQ(opened->opened_at, t0 + 99);
        EXPECT_EQ(run((*s)->change_email("", new_id("em_", t0), false, open)).error(),
                  errc::not_found);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_one(db,
                        "SELECT group_concat(name) FROM (SELECT name FROM "
                        "pragma_table_info('emails') WHERE pk > 0 ORDER BY pk)"),
              "account_id,id");
    EXPECT_EQ(
        query_one(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'emails_account_created'"),
        "0");
    // An email's body and recipients still go with it.
    ASSERT_EQ(sqlite3_exec(db, ("DELETE FROM emails WHERE id = '" + ids[1] + "'").c_str(), nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(query_one(db, "SELECT group_concat(id) FROM (SELECT id FROM recipients ORDER BY id)"),
              "1,3,4");
    EXPECT_EQ(
        query_one(db, "SELECT group_concat(raw) FROM (SELECT raw FROM email_bodies ORDER BY id)"),
        "one,three,x");
    sqlite3_close(db);
}

// A write nobody waits for (a log entry) goes with the lazy writes of the next moment,
// not with the next awaited write; it is committed shortly after all the same.
TEST_F(SqliteStoreTest, LazyWritesAreCommittedShortlyAfter) {
    auto acc = make_account("acme");
    auto entry = [&](int i) {
        return LogEntry{.id = new_id("log_", 10 + i),
                        .account_id = acc.id,
                        .created_at = 10 + i,
                        .method = "GET",
                        .url = "/",
                        .status = 200};
    };
    store_->append_log(entry(1));
    ASSERT_TRUE(run(store_->create_account({.id = new_id("acc_", 2), .name = "other"})));
    store_->append_log(entry(2));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (run(store_->list_logs({.account_id = acc.id}))->total < 2 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(run(store_->list_logs({.account_id = acc.id}))->total, 2);
}

TEST_F(SqliteStoreTest, WritesAfterCloseAreRefused) {
    store_->close();
    auto r = run(store_->create_account({.id = new_id("acc_", 1), .name = "late"}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::closed);
}

}  // namespace
}  // namespace posthorn::store::sqlite
