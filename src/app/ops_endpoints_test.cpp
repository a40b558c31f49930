#include "app/ops_endpoints.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/block_on.hpp"
#include "core/metrics.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::app {
namespace {

// A store whose reachability the test sets (as a PostgreSQL store's flips when its
// connection goes), above a real SQLite store for the rest.
class Health final : public store::StoreHealth {
  public:
    bool reachable() const noexcept override { return up; }
    bool up = true;
};

class OpsEndpointsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("ph_ops_test_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        auto s = store::sqlite::SqliteStore::open(
            {.path = (dir_ / "posthorn.db").string(), .search_index = false});
        ASSERT_TRUE(s) << s.error().message();
        store_ = std::move(*s);
    }
    void TearDown() override {
        store_.reset();
        std::filesystem::remove_all(dir_);
    }

    OpsEndpoints make(OpsOptions o = {.trusted = {*core::parse_network("127.0.0.0/8")}}) {
        return OpsEndpoints(std::move(o),
                            {.health = health_, .webhooks = *store_, .queue = *store_}, clock_,
                            readiness_);
    }

    static http::Response get(OpsEndpoints& ops, std::string path, std::string ip,
                              std::string auth = {}) {
        http::Request req;
        req.method = "GET";
        EXPECT_TRUE(req.set_target(std::move(path)));
        req.remote_ip = std::move(ip);
        if (!auth.empty()) req.headers.emplace_back("authorization", std::move(auth));
        return block_on(ops.handle(std::move(req)));
    }

    Health health_;
    core::SystemClock clock_;
    Readiness readiness_;
    std::filesystem::path dir_;
    std::unique_ptr<store::sqlite::SqliteStore> store_;
};

TEST_F(OpsEndpointsTest, ReadyOnlyWhileServingWithItsStore) {
    auto ops = make();
    EXPECT_TRUE(OpsEndpoints::owns("/readyz"));
    EXPECT_TRUE(OpsEndpoints::owns("/metrics"));
    EXPECT_FALSE(OpsEndpoints::owns("/healthz"));
    auto starting = get(ops, "/readyz", "192.0.2.1");  // no network check on /readyz
    EXPECT_EQ(starting.status, 503u);
    EXPECT_EQ(starting.body, R"({"status":"starting"})");
    readiness_.set(Readiness::State::serving);
    auto ready = get(ops, "/readyz", "192.0.2.1");
    EXPECT_EQ(ready.status, 200u);
    EXPECT_EQ(ready.body, R"({"status":"ready"})");
    health_.up = false;
    EXPECT_EQ(get(ops, "/readyz", "127.0.0.1").body, R"({"status":"store_unavailable"})");
    health_.up = true;
    readiness_.set(Readiness::State::draining);
    auto draining = get(ops, "/readyz", "127.0.0.1");
    EXPECT_EQ(draining.status, 503u);
    EXPECT_EQ(draining.body, R"({"status":"draining"})");
}

TEST_F(OpsEndpointsTest, MetricsForTrustedNetworksOrTheToken) {
    auto open = make({.trusted = {*core::parse_network("10.0.0.0/8")}, .token = "s3cret-token"});
    EXPECT_EQ(get(open, "/metrics", "127.0.0.1").status, 403u);
    EXPECT_EQ(get(open, "/metrics", "not an address").status, 403u);
    EXPECT_EQ(get(open, "/metrics", "127.0.0.1", "Bearer s3cret-toke").status, 403u);
    EXPECT_EQ(get(open, "/metrics", "127.0.0.1", "Basic s3cret-token").status, 403u);
    EXPECT_EQ(get(open, "/metrics", "127.0.0.1", "Bearer s3cret-token").status, 200u);
    auto inside = get(open, "/metrics", "10.1.2.3");
    EXPECT_EQ(inside.status, 200u);
    EXPECT_EQ(inside.content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_NE(inside.body.find("\nposthorn_webhook_backlog 0\n"), std::string::npos);
    EXPECT_NE(inside.body.find("\nposthorn_queue_recipients{state=\"held\"} 0\n"),
              std::string::npos);
    EXPECT_NE(inside.body.find("\nposthorn_queue_oldest_age_seconds 0\n"), std::string::npos);
    EXPECT_NE(inside.body.find("posthorn_build_info{version=\""), std::string::npos);
    EXPECT_NE(inside.body.find("\nprocess_open_fds "), std::string::npos);

    auto none = make({.trusted = {}});  // no network, no token: nobody
    EXPECT_EQ(get(none, "/metrics", "127.0.0.1", "Bearer ").status, 403u);
    auto off = make({.metrics_enabled = false, .trusted = {*core::parse_network("127.0.0.1")}});
    EXPECT_EQ(get(off, "/metrics", "127.0.0.1").status, 404u);
}

}  // namespace
}  // namespace posthorn::app
