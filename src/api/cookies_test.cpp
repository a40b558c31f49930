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

}  // namespace
}  // namespace posthorn::api
