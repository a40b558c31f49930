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

// Received and Feedback-ID are posthorn's own (one of each on every message, issue 30).
TEST(SendRequest, TraceAndFeedbackHeadersAreTheServices) {
    for (const char* name : {"Received", "feedback-id", "Message-ID", "Content-Type"})
        EXPECT_EQ(refusal({{"headers", {{name, "x"}}}}),
                  std::string("headers: ") + name + " is set by the service and cannot be given");
    EXPECT_EQ(refusal({{"headers", {{"X-Feedback", "x"}}}}), "");
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

TEST(SendRequest, TagsAndMetadataAreReadAndChecked) {
    json::object body{{"from", "a@example.com"},
                      {"to", "b@example.net"},
                      {"subject", "Hi"},
                      {"text", "hello"},
                      {"tags", json::array{{{"name", "campaign"}, {"value", "spring-24"}},
                                           {{"name", "tier_1"}, {"value", "A"}}}},
                      {"metadata", json::parse(R"({"order": {"id": 42}, "x": [1, 2]})")}};
    auto r = parse_send_request(body, SendLimits{});
    ASSERT_TRUE(std::holds_alternative<SendRequest>(r));
    const auto& labels = std::get<SendRequest>(r).labels;
    ASSERT_EQ(labels.tags.size(), 2u);
    EXPECT_EQ(labels.tags[0], (domain::Tag{.name = "campaign", .value = "spring-24"}));
    EXPECT_EQ(labels.tags[1].name, "tier_1");
    EXPECT_EQ(labels.metadata_json, R"({"order":{"id":42},"x":[1,2]})");  // compact

    EXPECT_EQ(refusal({{"tags", nullptr}, {"metadata", nullptr}}), "");
    EXPECT_EQ(refusal({{"tags", json::array{}}}), "");
    EXPECT_EQ(refusal({{"tags", "campaign:spring"}}),
              "tags must be an array of {name, value} objects");
    EXPECT_EQ(refusal({{"tags", json::array{"x"}}}), "tags[0] must be an object {name, value}");
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}}}}}),
              "tags[0].value is required and must be a string");
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", 1}}}}}),
              "tags[0].value is required and must be a string");
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", "b"}, {"x", "c"}}}}}),
              "tags[0]: unknown field 'x'");
    const std::string part = " must be 1 to 256 ASCII letters, digits, '_' or '-'";
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a b"}, {"value", "c"}}}}}),
              "tags[0].name" + part);
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", ""}}}}}),
              "tags[0].value" + part);
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", "caf\xc3\xa9"}}}}}),
              "tags[0].value" + part);
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", "b"}},
                                            {{"name", "a:b"}, {"value", "c"}}}}}),
              "tags[1].name" + part);
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", std::string(256, 'n')}, {"value", "v"}}}}}),
              "");
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", std::string(257, 'n')}, {"value", "v"}}}}}),
              "tags[0].name" + part);
    EXPECT_EQ(refusal({{"tags", json::array{{{"name", "a"}, {"value", "1"}},
                                            {{"name", "a"}, {"value", "2"}}}}}),
              "tags: the tag name 'a' is given twice (a name may appear once)");
    json::array eleven;
    for (int i = 0; i < 11; ++i)
        eleven.push_back(json::object{{"name", "t" + std::to_string(i)}, {"value", "v"}});
    EXPECT_EQ(refusal({{"tags", eleven}}), "tags holds 11 tags; an email takes at most 10");
    eleven.pop_back();
    EXPECT_EQ(refusal({{"tags", eleven}}), "");

    EXPECT_EQ(refusal({{"metadata", "text"}}), "metadata must be a JSON object");
    EXPECT_EQ(refusal({{"metadata", json::array{1}}}), "metadata must be a JSON object");
    // 2048 bytes serialized: {"k":"…"} is 8 bytes around the value.
    EXPECT_EQ(refusal({{"metadata", json::object{{"k", std::string(2040, 'x')}}}}), "");
    EXPECT_EQ(refusal({{"metadata", json::object{{"k", std::string(2041, 'x')}}}}),
              "metadata is 2049 bytes as serialized JSON; the limit is 2048");
}

// A send may name a template instead of subject, html and text, never with them.
TEST(SendRequest, ATemplateTakesThePlaceOfSubjectHtmlAndText) {
    json::object body{{"from", "a@example.com"},
                      {"to", "b@example.net"},
                      {"template", "welcome"},
                      {"variables", {{"name", "Ana"}, {"items", json::array{1, 2}}}}};
    auto r = parse_send_request(body, SendLimits{});
    ASSERT_TRUE(std::holds_alternative<SendRequest>(r));
    const auto& req = std::get<SendRequest>(r);
    ASSERT_TRUE(req.template_ref);
    EXPECT_EQ(req.template_ref->ref, "welcome");
    EXPECT_EQ(req.template_ref->variables.at("name").as_string(), "Ana");
    EXPECT_TRUE(req.message.subject.empty()) << "filled by apply_template";

    body.erase("variables");
    auto bare = parse_send_request(body, SendLimits{});
    ASSERT_TRUE(std::holds_alternative<SendRequest>(bare));
    EXPECT_TRUE(std::get<SendRequest>(bare).template_ref->variables.empty());

    EXPECT_EQ(refusal({{"template", "welcome"}}),
              "template and subject cannot both be given (the template renders subject, html "
              "and text)");
    EXPECT_EQ(refusal({{"variables", json::object{}}}), "variables are given only with a template");
    body["variables"] = "x";
    auto bad = parse_send_request(body, SendLimits{});
    ASSERT_TRUE(std::holds_alternative<http::Response>(bad));
    EXPECT_NE(std::get<http::Response>(bad).body.find("variables must be an object"),
              std::string::npos);
    body["variables"] = json::object{};
    body["template"] = "";
    EXPECT_TRUE(std::holds_alternative<http::Response>(parse_send_request(body, SendLimits{})));
}

TEST(SendRequest, CheckContentNamesTheRenderedField) {
    mail::MessageSpec m;
    m.subject = "a\nb";
    m.text = "t";
    auto e = check_content(m, "the rendered ");
    ASSERT_TRUE(e);
    EXPECT_NE(e->body.find("the rendered subject must not contain line breaks"), std::string::npos);
    m.subject = "ok";
    m.html = "";
    EXPECT_FALSE(check_content(m, "the rendered "));
    EXPECT_FALSE(m.html) << "an empty body is dropped";
    m.text = "";
    e = check_content(m, "the rendered ");
    ASSERT_TRUE(e);
    EXPECT_NE(e->body.find("the rendered html and text are both empty"), std::string::npos);
}

}  // namespace
}  // namespace posthorn::api
