#include <gtest/gtest.h>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <string>

#include "api/detail/json_body.hpp"

namespace posthorn::api {
namespace {

namespace json = boost::json;

// parse_json_body must give what boost::json::parse gives: the same value, with its keys
// in the same order, or the same error.
void expect_as_boost(const std::string& text) {
    SCOPED_TRACE(text.substr(0, 80));
    error_code want_ec;
    const json::value want = json::parse(text, want_ec);
    error_code ec;
    json::value got;
    detail::parse_json_body(text, got, ec);
    EXPECT_EQ(ec, want_ec) << ec.message() << " / " << want_ec.message();
    EXPECT_EQ(got, want);
    EXPECT_EQ(json::serialize(got), json::serialize(want));
}

std::string nested(int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') + "1" +
           std::string(static_cast<std::size_t>(depth), ']');
}

TEST(JsonBody, ValidDocumentsAreTheValuesBoostJsonMakes) {
    for (
        const char* text : {
            R"({"from":"A <a@b.example>","to":["x@y.example"],"subject":"Hi","text":"l1\nl2\r\n\tend\"q\\ \/ é \u00e9 \ud83d\ude00"})",
            R"({"n":0,"i":-42,"big":9223372036854775807,"u":18446744073709551615,"neg":-9223372036854775808})",
            R"({"f":1.5,"e":-2.5e-3,"z":-0.0,"t":true,"f2":false,"nil":null,"empty":{},"list":[]})",
            R"(  [1, "two", {"three": [3]}, null]  )",
            R"("just a string")",
            R"(17)",
            R"({"a":1,"b":2,"a":3})",  // a repeated key: its first place, its last value
            R"({"headers":{"X-A":"1","X-A":"2"},"tags":[{"k":1,"k":2}]})",
            R"({"big":18446744073709551616,"neg":-9223372036854775809})",  // beyond 64 bits
            R"({"inf":1e400,"tiny":1.5e-400})",
            R"({"nul":"a\u0000b"})",
        })
        expect_as_boost(text);
    expect_as_boost(nested(15));
    expect_as_boost(nested(16));
    expect_as_boost(nested(17));
    expect_as_boost(nested(32));
    std::string large = R"({"text":")";
    for (int i = 0; i < 20000; ++i) large += "line\\n";
    large += R"("})";
    expect_as_boost(large);  // beyond the fast path's 64 KiB
}

TEST(JsonBody, InvalidDocumentsGetBoostJsonsErrors) {
    for (const char* text : {
             "{bad",
             "{",
             "}",
             "[1,]",
             R"({"a":1,})",
             R"({"a" 1})",
             R"({'a':1})",
             "nul",
             "tru",
             R"(["\ud800"])",
             R"(["\udc00x"])",
             "[\"a\tb\"]",
             "[\"\x01\"]",
             "[\"\xff\"]",
             "[\"\xc3\"]",
             R"({"a":1} x)",
             "[1] [2]",
             "01",
             "-",
             "1.",
             ".5",
             "1e",
             "+1",
             "[NaN]",
             "[Infinity]",
             R"(// c
{})",
             "\xef\xbb\xbf{}",
             "{\"a\":\"\\x\"}",
             "[\"\\u12\"]",
             "\x00",
         })
        expect_as_boost(text);
    expect_as_boost(nested(33));
    expect_as_boost(nested(100));
    expect_as_boost(std::string("[1]\0", 4));
}

TEST(JsonBody, TheValueIsMadeWithTheTargetsStorage) {
    json::monotonic_resource mr;
    json::storage_ptr sp(&mr);
    json::value v(sp);
    error_code ec;
    detail::parse_json_body(R"({"a":["x","a string longer than fourteen characters"]})", v, ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(v.storage().get(), &mr);
    EXPECT_EQ(v.at("a").storage().get(), &mr);
    EXPECT_EQ(v.at("a").at(1).storage().get(), &mr);
}

TEST(JsonLimits, CountsValuesKeysAndDepthOutsideStrings) {
    const detail::JsonLimits limits{.max_values = 3, .max_keys = 2, .max_depth = 2};
    EXPECT_EQ(detail::exceeds_json_limits("[1,2,3]", limits), std::nullopt);
    EXPECT_EQ(detail::exceeds_json_limits("[1,2,3,4]", limits),
              "the body has more than 3 JSON values");
    EXPECT_EQ(detail::exceeds_json_limits(R"({"a":1,"b":2})", limits), std::nullopt);
    EXPECT_EQ(detail::exceeds_json_limits(R"({"a":1,"b":2,"c":3})", limits),
              "an object in the body has more than 2 keys");
    // Keys are counted per object: two objects of two keys each are within the bound.
    EXPECT_EQ(detail::exceeds_json_limits(R"([{"a":1,"b":2},{"a":1,"b":2}])",
                                          {.max_values = 10, .max_keys = 2, .max_depth = 2}),
              std::nullopt);
    EXPECT_EQ(detail::exceeds_json_limits("[[]]", limits), std::nullopt);
    EXPECT_EQ(detail::exceeds_json_limits("[[[]]]", limits),
              "the body nests arrays and objects more than 2 deep");
}

TEST(JsonLimits, StringsAreSkippedWhateverTheirEscapes) {
    const detail::JsonLimits limits{.max_values = 1, .max_keys = 1, .max_depth = 1};
    // Separators and brackets inside strings count for nothing, also after an escaped quote.
    EXPECT_EQ(detail::exceeds_json_limits(R"(["a,b:[[{", "x"])", limits),
              "the body has more than 1 JSON values");
    EXPECT_EQ(detail::exceeds_json_limits(R"(["a\",[[,,]]"])", limits), std::nullopt);
    // An even run of backslashes does not escape the quote: what follows is structure.
    EXPECT_EQ(detail::exceeds_json_limits(R"(["a\\" [] ])", limits),
              "the body nests arrays and objects more than 1 deep");
    // Unterminated, or not JSON at all: no verdict (the parser refuses it).
    EXPECT_EQ(detail::exceeds_json_limits(R"(["abc)", limits), std::nullopt);
    EXPECT_EQ(detail::exceeds_json_limits("", limits), std::nullopt);
}

}  // namespace
}  // namespace posthorn::api
