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

TEST(EventBody, CarriesTypeTimeAndData) {
    EXPECT_EQ(event_body("domain.verified", 1795255200123, R"({"domain":"a.example"})"),
              R"({"type":"domain.verified","created_at":"2026-11-21T10:00:00.123Z",)"
              R"("data":{"domain":"a.example"}})");
    EXPECT_EQ(event_body("email.sent", 0, ""),
              R"({"type":"email.sent","created_at":"1970-01-01T00:00:00.000Z","data":{}})");
}

}  // namespace
}  // namespace posthorn::webhooks
