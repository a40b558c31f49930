#include "api/send_request.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>

namespace posthorn::api {
namespace {

namespace json = boost::json;

// The message of the 400 that `fields` (added to a valid send) is refused with, or "" when
// the request is accepted.
std::string refusal(const json::object& fields) {
    json::object body{
        {"from", "a@example.com"}, {"to", "b@example.net"}, {"subject", "Hi"}, {"text", "hello"}};
    for (const auto& [k, v] : fields) body[k] = v;
    auto r = parse_send_request(body, SendLimits{});
    const auto* res = std::get_if<http::Response>(&r);
    if (!res) return "";
    EXPECT_EQ(res->status, 400u) << res->body;
    return std::string(json::parse(res->body).as_object().at("message").as_string());
}

TEST(SendRequest, ANulInAHeaderValueIsCalledAControlCharacterNotALineBreak) {
    EXPECT_EQ(refusal({{"headers", {{"X-A", std::string("a\0b", 3)}}}}),
              "headers: the value of X-A must not contain control characters (it holds U+0000 "
              "NUL; of U+0000-U+001F and U+007F only the tab is allowed)");
    EXPECT_EQ(refusal({{"headers", {{"X-A", "a\x1b[0mb"}}}}),
              "headers: the value of X-A must not contain control characters (it holds U+001B "
              "ESC; of U+0000-U+001F and U+007F only the tab is allowed)");
    EXPECT_NE(refusal({{"headers", {{"X-A", "a\x7f"}}}}).find("U+007F DEL"), std::string::npos);
    EXPECT_EQ(refusal({{"headers", {{"X-A", "a\r\nBcc: v@example.org"}}}}),
              "headers: the value of X-A must not contain line breaks");
    EXPECT_EQ(refusal({{"headers", {{"X-A", "a\nb"}}}}),
              "headers: the value of X-A must not contain line breaks");
    EXPECT_EQ(refusal({{"headers", {{"X-A", "tab\there, UTF-8 \xc3\xa9"}}}}), "");
}

TEST(SendRequest, HeaderNamesSubjectAndFilenamesSayWhatIsWrong) {
    EXPECT_EQ(refusal({{"headers", {{std::string("X-\0A", 4), "v"}}}}).rfind("headers: '", 0), 0u);
    EXPECT_NE(refusal({{"headers", {{"Bad Name", "v"}}}}).find("is not a header name (1 to 76"),
              std::string::npos);
    EXPECT_EQ(refusal({{"subject", std::string("a\0b", 3)}}),
              "subject must not contain control characters (it holds U+0000 NUL; of "
              "U+0000-U+001F and U+007F only the tab is allowed)");
    EXPECT_EQ(refusal({{"subject", "a\r\nb"}}), "subject must not contain line breaks");
    EXPECT_EQ(refusal({{"attachments",
                        json::array{{{"filename", std::string("a\0.txt", 6)}, {"content", ""}}}}}),
              "attachments[0].filename must not contain control characters (it holds U+0000 "
              "NUL; of U+0000-U+001F and U+007F only the tab is allowed)");
    EXPECT_EQ(refusal({{"attachments", json::array{{{"filename", "a\".txt"}, {"content", ""}}}}}),
              "attachments[0]: names must not contain line breaks or quotes");
}

}  // namespace
}  // namespace posthorn::api
