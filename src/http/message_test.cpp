#include "http/message.hpp"

#include <gtest/gtest.h>

namespace posthorn::http {
namespace {

// A plain path takes a short way (no parse by Boost.URL): it must give what the parse gives.
TEST(Request, SetTargetKeepsAPlainPathAsItIs) {
    Request r;
    ASSERT_TRUE(r.set_target("/v1/emails/em_01jd-x.y~z"));
    EXPECT_EQ(r.path, "/v1/emails/em_01jd-x.y~z");
    EXPECT_EQ(r.target, "/v1/emails/em_01jd-x.y~z");
    EXPECT_TRUE(r.query.empty());
    ASSERT_TRUE(r.set_target("/"));
    EXPECT_EQ(r.path, "/");
    ASSERT_TRUE(r.set_target("//a"));  // an empty first segment is still origin-form
    EXPECT_EQ(r.path, "//a");
}

TEST(Request, SetTargetDecodesThePathAndTheQuery) {
    Request r;
    ASSERT_TRUE(r.set_target("/v1/emails/%65m_1?limit=2&search=a%20b&flag"));
    EXPECT_EQ(r.path, "/v1/emails/em_1");
    EXPECT_EQ(r.target, "/v1/emails/%65m_1?limit=2&search=a%20b&flag");
    ASSERT_EQ(r.query.size(), 3u);
    EXPECT_EQ(r.param("limit"), "2");
    EXPECT_EQ(r.param("search"), "a b");
    EXPECT_EQ(r.param("flag"), "");
    // A query after a plain path replaces the one before; none leaves none.
    ASSERT_TRUE(r.set_target("/v1/logs"));
    EXPECT_TRUE(r.query.empty());
}

TEST(Request, SetTargetRefusesWhatIsNotOriginForm) {
    Request r;
    ASSERT_TRUE(r.set_target("/v1/logs?limit=1"));
    for (const char* bad : {"", "v1/logs", "*", "http://x.example/v1", "/a%zz", "/a b"}) {
        EXPECT_FALSE(r.set_target(bad)) << bad;
        EXPECT_EQ(r.path, "/v1/logs") << bad;  // left as it was
        EXPECT_EQ(r.param("limit"), "1") << bad;
    }
}

}  // namespace
}  // namespace posthorn::http
