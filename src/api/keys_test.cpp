#include "api/keys.hpp"

#include <gtest/gtest.h>

#include <set>

namespace posthorn::api {
namespace {

TEST(ApiKeys, AreWellFormedAndHashedNotStored) {
    auto k = generate_api_key();
    EXPECT_TRUE(looks_like_api_key(k.key)) << k.key;
    EXPECT_EQ(k.key.rfind(k.prefix, 0), 0u);
    EXPECT_EQ(k.hash.size(), 64u);
    EXPECT_EQ(k.hash, hash_api_key(k.key));
    EXPECT_EQ(k.hash.find(k.key.substr(3)), std::string::npos);
}

TEST(ApiKeys, DoNotRepeat) {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(generate_api_key().key).second);
}

TEST(ApiKeys, ShapeCheckRefusesLookalikes) {
    EXPECT_FALSE(looks_like_api_key(""));
    EXPECT_FALSE(looks_like_api_key("ph_"));
    EXPECT_FALSE(looks_like_api_key("sk_0123456789abcdefghjkmnpqrstvwxyz"));
    EXPECT_FALSE(looks_like_api_key("ph_0123456789ABCDEFGHJKMNPQRSTVWXYZ"));
    EXPECT_TRUE(looks_like_api_key("ph_0123456789abcdefghjkmnpqrstvwxyz"));
}

TEST(ApiKeys, BearerTokenIsReadFromTheAuthorizationValue) {
    const std::string key = generate_api_key().key;
    for (const auto& v : {"Bearer " + key, "bearer " + key, "BEARER " + key, " \tBearer " + key,
                          "Bearer   " + key + " \t", "Bearer \t" + key})
        EXPECT_EQ(bearer_token(v), key) << v;
    EXPECT_EQ(bearer_token("Bearer a b"), "a b");  // one token: looks_like_api_key refuses it
    for (const char* v : {"", "Bearer", "Bearer ", "Bearer  \t ", "Bearer\tph_x",
                          "Basic dXNlcjpwYXNz", "Bearerph_x", "Token ph_x", "Beare r ph_x"})
        EXPECT_EQ(bearer_token(v), std::nullopt) << v;
}

}  // namespace
}  // namespace posthorn::api
