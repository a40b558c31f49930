#include "crypto/hash.hpp"

#include <gtest/gtest.h>

namespace posthorn::crypto {
namespace {

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(to_hex(sha256("")),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(to_hex(sha256("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HmacSha256, Rfc4231Case2) {
    EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(EqualCt, ComparesWholeStrings) {
    EXPECT_TRUE(equal_ct("abc", "abc"));
    EXPECT_FALSE(equal_ct("abc", "abd"));
    EXPECT_FALSE(equal_ct("abc", "abcd"));
    EXPECT_TRUE(equal_ct("", ""));
}

}  // namespace
}  // namespace posthorn::crypto
