#include "core/text.hpp"

#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <string>

namespace posthorn::core {
namespace {

TEST(Text, AsciiLowerLeavesOtherBytesAlone) {
    EXPECT_EQ(ascii_lower("MiXeD-Case.EXAMPLE"), "mixed-case.example");
    EXPECT_EQ(ascii_lower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");  // ÉTÉ: only the T
}

TEST(Text, AsciiIequalsFoldsOnlyAToZ) {
    EXPECT_TRUE(ascii_iequals("X-Track-Opens", "x-track-OPENS"));
    EXPECT_TRUE(ascii_iequals("", ""));
    EXPECT_FALSE(ascii_iequals("From", "Fro"));
    EXPECT_FALSE(ascii_iequals("a@b", "a@c"));
    EXPECT_FALSE(ascii_iequals("\xC3\x89", "\xC3\xA9"));  // É and é: not ASCII, not folded
    EXPECT_FALSE(ascii_iequals("[", "{"));                // 0x5B and 0x7B differ by 0x20 too
}

TEST(Text, IsAsciiFindsAHighByteAnywhere) {
    EXPECT_TRUE(is_ascii(""));
    std::string s(100, 'a');
    EXPECT_TRUE(is_ascii(s));
    for (std::size_t i = 0; i < s.size(); ++i) {  // in the 8-byte words and in the tail
        std::string t = s;
        t[i] = static_cast<char>(0x80 + i % 0x80);
        EXPECT_FALSE(is_ascii(t)) << i;
        EXPECT_FALSE(is_ascii(std::string_view(t).substr(i))) << i;
        EXPECT_TRUE(is_ascii(std::string_view(t).substr(0, i))) << i;
    }
}

// The answer of POST /v1/emails is written with append_json_string as Boost.JSON would
// serialize it: every byte alone, and runs of plain text between escapes.
TEST(Text, AppendJsonStringEscapesAsBoostJsonDoes) {
    auto ours = [](std::string_view s) {
        std::string out = "x";
        append_json_string(out, s);
        return out;
    };
    auto boosts = [](std::string_view s) {
        return "x" + boost::json::serialize(boost::json::string(s));  // appended: "x" stays
    };
    for (int b = 0; b < 256; ++b) {
        const std::string s(1, static_cast<char>(b));
        EXPECT_EQ(ours(s), boosts(s)) << "byte " << b;
    }
    for (std::string_view s :
         {"", "plain", "Ann \"A\" <a@b.example>", "back\\slash", "tab\tnew\nline\r\n",
          "\x01\x1f\x7f", "caf\xC3\xA9 \xE2\x82\xAC", "\"\"", "end\\"})
        EXPECT_EQ(ours(s), boosts(s)) << s;
    EXPECT_EQ(ours("a\"b\n\x01"), R"(x"a\"b\n\u0001")");
    // Every byte at every place of a string long enough to be read eight bytes at a time.
    for (int b = 0; b < 256; ++b)
        for (std::size_t at = 0; at < 21; ++at) {
            std::string s = "The quick brown fox.";
            s.insert(at, 1, static_cast<char>(b));
            EXPECT_EQ(ours(s), boosts(s)) << "byte " << b << " at " << at;
        }
}

TEST(Text, ByteSetHoldsExactlyItsBytes) {
    constexpr ByteSet set(std::string_view("\r\n\0\xff<", 5));
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        const bool member = c == '\r' || c == '\n' || c == '\0' || b == 0xff || c == '<';
        EXPECT_EQ(set.has(c), member) << "byte " << b;
        EXPECT_EQ(set.any_in(std::string("ab") + c + "cd"), member) << "byte " << b;
    }
    EXPECT_FALSE(set.any_in(""));
    EXPECT_TRUE(set.any_in("line\r"));
    static_assert(ByteSet("ab").has('a') && !ByteSet("ab").has('c'));
}

TEST(Text, TrimBlanksDropsSpacesAndTabsAtTheEndsOnly) {
    EXPECT_EQ(trim_blanks(" \t a b\t "), "a b");
    EXPECT_EQ(trim_blanks("\r\nx\r\n"), "\r\nx\r\n");
    EXPECT_EQ(trim_blanks(" \t "), "");
    EXPECT_EQ(trim_blanks(""), "");
}

TEST(Text, HtmlEscapeWritesTheFiveSpecialCharactersAsReferences) {
    EXPECT_EQ(html_escape(R"(<a href="x?a=1&b='2'">)"),
              "&lt;a href=&quot;x?a=1&amp;b=&#39;2&#39;&quot;&gt;");
    EXPECT_EQ(html_escape("Grüße, plain"), "Grüße, plain");
    EXPECT_EQ(html_escape(""), "");
}

}  // namespace
}  // namespace posthorn::core
