// store/pg/detail/testing/test_databases.hpp — databases for the PostgreSQL tests
// (*_pgtest.cpp). The server is named by PH_TEST_PG_DSN (a URL whose database is one the tests
// may connect to, e.g. postgres); tools/pg_test_server.py starts one and sets it (ctest's
// contract.pg does). Without it the tests skip, unless PH_TEST_PG_REQUIRED is set (as under
// ctest), when they fail: a test that was to run against PostgreSQL never passes by not
// running. Test code only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "store/pg/detail/conn.hpp"

namespace posthorn::store::pg::testing {

// The server's URL, or nullopt (with a test failure when it is required).
inline std::optional<std::string> server_url() {
    if (const char* dsn = std::getenv("PH_TEST_PG_DSN"); dsn && *dsn) return std::string(dsn);
    if (std::getenv("PH_TEST_PG_REQUIRED"))
        ADD_FAILURE() << "PH_TEST_PG_DSN is not set: no PostgreSQL server to test against "
                         "(tools/pg_test_server.py run -- <test> starts one)";
    return std::nullopt;
}

// `url` (postgresql://…/DB?…) with its database replaced by `name`.
inline std::string with_database(const std::string& url, const std::string& name) {
    const auto scheme = url.find("://");
    const auto start = scheme == std::string::npos ? 0 : scheme + 3;
    const auto query = url.find('?', start);
    const auto path = url.find('/', start);
    const auto host_end = std::min(path, query);
    std::string out = url.substr(0, host_end == std::string::npos ? url.size() : host_end);
    out += "/" + name;
    if (query != std::string::npos) out += url.substr(query);
    return out;
}

// Runs `sql` on the server's own database (CREATE/DROP DATABASE).
inline bool admin(const std::string& sql) {
    auto url = server_url();
    if (!url) return false;
    auto c = detail::Conn::open(*url);
    if (!c) return false;
    auto r = c->run(sql.c_str());
    EXPECT_TRUE(r) << sql;
    return static_cast<bool>(r);
}

// A new, empty database (or a copy of `from`) of a name no other test process uses, dropped
// (with every connection to it) when this goes.
class TestDatabase {
  public:
    static std::unique_ptr<TestDatabase> make(const std::string& from = "") {
        static std::atomic<int> counter{0};
        auto url = server_url();
        if (!url) return nullptr;
        auto name = "ph_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
        std::string sql = "CREATE DATABASE " + name;
        if (!from.empty()) sql += " TEMPLATE " + from;
        if (!admin(sql)) return nullptr;
        return std::unique_ptr<TestDatabase>(new TestDatabase(std::move(name), *url));
    }
    ~TestDatabase() { (void)admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"); }
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    const std::string& name() const { return name_; }
    const std::string& url() const { return url_; }

  private:
    TestDatabase(std::string name, const std::string& server)
        : name_(std::move(name)), url_(with_database(server, name_)) {}
    std::string name_;
    std::string url_;
};

}  // namespace posthorn::store::pg::testing
