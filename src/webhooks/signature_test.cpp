#include "webhooks/signature.hpp"

#include <gtest/gtest.h>

#include "crypto/keys.hpp"
#include "webhooks/dispatcher.hpp"

namespace posthorn::webhooks {
namespace {

// The example of the Standard Webhooks test suites (secret, id, timestamp and payload),
// with the signature their reference libraries compute for it.
TEST(Signature, MatchesTheStandardWebhooksExample) {
    auto key = crypto::base64_decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    ASSERT_TRUE(key);
    EXPECT_EQ(sign(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})"),
              "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(Signature, DependsOnEveryPart) {
    const std::string key = "0123456789abcdef01234567";
    const auto base = sign(key, "evt_1", 100, "{}");
    EXPECT_NE(base, sign(key, "evt_2", 100, "{}"));
    EXPECT_NE(base, sign(key, "evt_1", 101, "{}"));
    EXPECT_NE(base, sign(key, "evt_1", 100, "{ }"));
    EXPECT_NE(base, sign("another key of 24 bytes!", "evt_1", 100, "{}"));
}

}  // namespace
}  // namespace posthorn::webhooks
