#include "http/router.hpp"

#include <gtest/gtest.h>

namespace posthorn::http {
namespace {

TEST(Router, MatchesLiteralsAndPlaceholders) {
    Router r;
    const auto list = r.add("GET", "/v1/domains");
    const auto get = r.add("GET", "/v1/domains/{identifier}");
    const auto verify = r.add("POST", "/v1/domains/{identifier}/verify");

    EXPECT_EQ(r.match("GET", "/v1/domains").route, list);
    auto m = r.match("GET", "/v1/domains/example.com");
    ASSERT_EQ(m.route, get);
    ASSERT_EQ(m.params.size(), 1u);
    EXPECT_EQ(m.params[0].first, "identifier");
    EXPECT_EQ(m.params[0].second, "example.com");
    EXPECT_EQ(r.match("POST", "/v1/domains/x/verify").route, verify);
}

TEST(Router, TellsWrongMethodFromUnknownPath) {
    Router r;
    r.add("GET", "/v1/logs");
    r.add("PATCH", "/v1/domains/{id}");
    r.add("GET", "/v1/domains/{id}");

    auto wrong = r.match("DELETE", "/v1/domains/d");
    EXPECT_FALSE(wrong.route);
    EXPECT_TRUE(wrong.path_known);
    EXPECT_EQ(wrong.allowed, "PATCH, GET");

    for (const char* p :
         {"/v1/nothing", "/v1/logs/", "/v1/domains/", "/v1/domains//x", "", "v1/logs"}) {
        auto m = r.match("GET", p);
        EXPECT_FALSE(m.route) << p;
        EXPECT_FALSE(m.path_known) << p;
    }
}

}  // namespace
}  // namespace posthorn::http
