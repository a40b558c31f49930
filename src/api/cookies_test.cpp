#include "api/cookies.hpp"

#include <gtest/gtest.h>

namespace posthorn::api {
namespace {

TEST(Cookies, TheSessionCookieIsFoundAmongOthers) {
    EXPECT_EQ(cookie_value("posthorn_session=abc", kSessionCookie), "abc");
    EXPECT_EQ(cookie_value("a=1; posthorn_session=abc; b=2", kSessionCookie), "abc");
    EXPECT_EQ(cookie_value("a=1;posthorn_session=abc", kSessionCookie), "abc");
    EXPECT_EQ(cookie_value("  posthorn_session = \"abc\" ", kSessionCookie), "abc");
    EXPECT_EQ(cookie_value("posthorn_session=abc; posthorn_session=def", kSessionCookie), "abc")
        << "the first one";
}

TEST(Cookies, OthersAndEmptyValuesAreNotTheSession) {
    EXPECT_FALSE(cookie_value("", kSessionCookie));
    EXPECT_FALSE(cookie_value("posthorn_sessionx=abc", kSessionCookie));
    EXPECT_FALSE(cookie_value("xposthorn_session=abc", kSessionCookie));
    EXPECT_FALSE(cookie_value("posthorn_session", kSessionCookie));
    EXPECT_FALSE(cookie_value("posthorn_session=", kSessionCookie));
    EXPECT_FALSE(cookie_value("posthorn_session=\"\"", kSessionCookie));
    EXPECT_FALSE(cookie_value(";;;", kSessionCookie));
    EXPECT_FALSE(cookie_value("Posthorn_Session=abc", kSessionCookie)) << "names are exact";
}

TEST(Cookies, SetCookieCarriesTheFlags) {
    EXPECT_EQ(session_set_cookie("abc", 43200, false),
              "posthorn_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200");
    EXPECT_EQ(session_set_cookie("abc", 60, true),
              "posthorn_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure");
    EXPECT_EQ(session_set_cookie("", 0, false),
              "posthorn_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

TEST(Cookies, ChangesNeedTheSessionsCsrfToken) {
    const store::DashboardSession s{.csrf_token = "token-1"};
    http::Request req;
    for (const char* m : {"GET", "HEAD", "OPTIONS"}) {
        req.method = m;
        EXPECT_FALSE(csrf_refusal(req, s)) << m << ": reads need none";
    }
    for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) {
        req.method = m;
        req.headers.clear();
        auto refusal = csrf_refusal(req, s);
        ASSERT_TRUE(refusal) << m;
        EXPECT_EQ(refusal->status, 403u);
        EXPECT_NE(refusal->body.find("\"CSRF_TOKEN_INVALID\""), std::string::npos);
        req.headers = {{"x-csrf-token", "token-2"}};
        EXPECT_TRUE(csrf_refusal(req, s)) << m << ": another token";
        req.headers = {{"x-csrf-token", "token-"}};
        EXPECT_TRUE(csrf_refusal(req, s)) << m << ": a prefix";
        req.headers = {{"x-csrf-token", ""}};
        EXPECT_TRUE(csrf_refusal(req, s)) << m << ": empty";
        req.headers = {{"x-csrf-token", "token-1"}};
        EXPECT_FALSE(csrf_refusal(req, s)) << m << ": the session's";
    }
}

}  // namespace
}  // namespace posthorn::api
