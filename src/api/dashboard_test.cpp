#include "api/dashboard.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

TEST(Dashboard, HashedAssetNamesAreCachedForAYear) {
    EXPECT_TRUE(is_hashed_asset_name("app-3F2A9C1B.js"));
    EXPECT_TRUE(is_hashed_asset_name("chunk.5b1c0f9e2d.css"));
    EXPECT_TRUE(is_hashed_asset_name("index-DkT9x2Lq.js"));
    EXPECT_FALSE(is_hashed_asset_name("app.js")) << "no hash";
    EXPECT_FALSE(is_hashed_asset_name("app-abcdefgh.js")) << "a word, not a hash";
    EXPECT_FALSE(is_hashed_asset_name("app-1234567.js")) << "too short";
    EXPECT_FALSE(is_hashed_asset_name("3F2A9C1B")) << "no extension";
    EXPECT_FALSE(is_hashed_asset_name(".3F2A9C1B"));
    EXPECT_FALSE(is_hashed_asset_name("app-3F2A_9C1B.js"));
}

TEST(Dashboard, OwnsItsPathsOnly) {
    EXPECT_TRUE(is_dashboard_path("/"));
    EXPECT_TRUE(is_dashboard_path("/assets/app.js"));
    EXPECT_TRUE(is_dashboard_path("/dashboard/session"));
    EXPECT_TRUE(is_dashboard_path("/dashboard"));
    EXPECT_FALSE(is_dashboard_path("/v1/emails"));
    EXPECT_FALSE(is_dashboard_path("/healthz"));
    EXPECT_FALSE(is_dashboard_path("/assets"));
    EXPECT_FALSE(is_dashboard_path("/dashboards"));
    EXPECT_FALSE(is_dashboard_path("/t/o/x"));
}

TEST(Dashboard, EveryAnswerCarriesTheStrictHeaders) {
    http::Response res;
    add_dashboard_headers(res);
    auto header = [&](std::string_view name) {
        for (const auto& [n, v] : res.headers)
            if (n == name) return v;
        return std::string();
    };
    EXPECT_EQ(header("Content-Security-Policy"),
              "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
              "font-src 'self'; connect-src 'self'; frame-src 'self'; base-uri 'none'; "
              "form-action 'self'; frame-ancestors 'none'");
    EXPECT_EQ(header("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(header("Referrer-Policy"), "no-referrer");
    EXPECT_EQ(header("X-Frame-Options"), "DENY");
}

}  // namespace
}  // namespace posthorn::api
