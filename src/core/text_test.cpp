#include "core/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace posthorn::core {
namespace {

TEST(Text, AsciiLowerLeavesOtherBytesAlone) {
    EXPECT_EQ(ascii_lower("MiXeD-Case.EXAMPLE"), "mixed-case.example");
    EXPECT_EQ(ascii_lower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");  // ÉTÉ: only the T
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

}  // namespace
}  // namespace posthorn::core
