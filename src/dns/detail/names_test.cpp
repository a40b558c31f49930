#include "dns/detail/names.hpp"

#include <gtest/gtest.h>

namespace posthorn::dns::detail {
namespace {

TEST(CanonicalName, FoldsAsciiCaseAndDropsTheTrailingDot) {
    EXPECT_EQ(canonical_name("Mail.Example.NET."), "mail.example.net");
    EXPECT_EQ(canonical_name("mail.example.net"), "mail.example.net");
    EXPECT_EQ(canonical_name("."), "");
    EXPECT_EQ(canonical_name(""), "");
    EXPECT_EQ(canonical_name("\xC3\x84.test"), "\xC3\x84.test");  // only ASCII folds
}

TEST(CanonicalName, KeepsAnEscapedTrailingDot) {
    EXPECT_EQ(canonical_name("a\\."), "a\\.");
    EXPECT_EQ(canonical_name("a\\\\."), "a\\\\");
}

TEST(BadQueryName, EmptyOrWithNul) {
    EXPECT_TRUE(is_bad_query_name(""));
    EXPECT_TRUE(is_bad_query_name(std::string_view{"a\0b", 3}));
    EXPECT_FALSE(is_bad_query_name("example.test"));
}

}  // namespace
}  // namespace posthorn::dns::detail
