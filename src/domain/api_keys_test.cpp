#include "domain/api_keys.hpp"

#include <gtest/gtest.h>

namespace posthorn::domain {
namespace {

ApiKey key(std::string id, KeyPermission p, std::optional<UnixMs> revoked = std::nullopt) {
    return ApiKey{.id = std::move(id), .revoked_at = revoked, .permission = p};
}

TEST(ApiKeys, PermissionsHaveNames) {
    EXPECT_EQ(name(KeyPermission::full), "full");
    EXPECT_EQ(name(KeyPermission::sending), "sending");
    EXPECT_EQ(key_permission("sending"), KeyPermission::sending);
    EXPECT_EQ(key_permission("full"), KeyPermission::full);
    EXPECT_FALSE(key_permission("Full"));
    EXPECT_FALSE(key_permission(""));
}

TEST(ApiKeys, ASendingKeyOnlySendsAndReadsWhatItSent) {
    const auto full = key("key_f", KeyPermission::full);
    const auto sending = key("key_s", KeyPermission::sending);
    for (auto need : {KeyNeed::send, KeyNeed::read_sent_mail, KeyNeed::full})
        EXPECT_FALSE(key_lacks(full, need, "manage domains"));
    EXPECT_FALSE(key_lacks(sending, KeyNeed::send, "x"));
    EXPECT_FALSE(key_lacks(sending, KeyNeed::read_sent_mail, "x"));
    auto why = key_lacks(sending, KeyNeed::full, "manage domains");
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("may only send email"), std::string::npos) << *why;
    EXPECT_NE(why->find("a full-access key is needed to manage domains"), std::string::npos)
        << *why;

    EXPECT_TRUE(may_read_email(full, "key_other"));
    EXPECT_TRUE(may_read_email(full, ""));
    EXPECT_TRUE(may_read_email(sending, "key_s"));
    EXPECT_FALSE(may_read_email(sending, "key_other"));
    EXPECT_FALSE(may_read_email(sending, "")) << "an email no key is known to have sent";
}

TEST(ApiKeys, ADomainKeySendsOnlyFromItsDomain) {
    auto k = key("key_s", KeyPermission::sending);
    EXPECT_TRUE(key_may_send_from(k, "dom_a"));
    k.domain_id = "dom_a";
    EXPECT_TRUE(key_may_send_from(k, "dom_a"));
    EXPECT_FALSE(key_may_send_from(k, "dom_b"));
    k.permission = KeyPermission::full;
    EXPECT_FALSE(key_may_send_from(k, "dom_b")) << "a full key tied to a domain too";
}

TEST(ApiKeys, TheLastFullKeyStays) {
    const auto a = key("key_a", KeyPermission::full);
    const auto b = key("key_b", KeyPermission::full);
    const auto s = key("key_s", KeyPermission::sending);
    const auto gone = key("key_g", KeyPermission::full, 5);
    EXPECT_FALSE(revocation_refusal(a, {a, b, s})) << "another full key stays";
    EXPECT_FALSE(revocation_refusal(s, {a, s})) << "a sending key may go";
    EXPECT_FALSE(revocation_refusal(s, {s})) << "even the account's only key, if not full";
    auto why = revocation_refusal(a, {a, s, gone});
    ASSERT_TRUE(why) << "a sending key and a revoked full key do not count";
    EXPECT_NE(why->find("last full-access key"), std::string::npos) << *why;
    EXPECT_TRUE(revocation_refusal(a, {a}));
    EXPECT_FALSE(revocation_refusal(gone, {gone})) << "revoking a revoked key changes nothing";
}

}  // namespace
}  // namespace posthorn::domain
