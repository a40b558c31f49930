// The contract of a domain's custom tracking host (docs/tracking.md): its label is stored
// with the domain, changed with its records, and the domains of a tracking host are found in
// every account, on every node once changed.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

Domain tracked_domain(const Account& a, const std::string& name, UnixMs at,
                      const std::string& token) {
    return Domain{.id = id_at("dom_", at),
                  .account_id = a.id,
                  .name = name,
                  .token = token,
                  .records_json = R"({"tracking":{"host":"links"}})",
                  .created_at = at,
                  .updated_at = at};
}

TEST_P(StoreContract, TrackingLabelsAreStoredAndChanged) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    auto d = tracked_domain(a, "mail.example.com", kT0, "tok-1");
    ASSERT_TRUE(run(store().create_domain(d, {})));
    auto other = tracked_domain(b, "mail.example.com", kT0 + 1, "tok-2");
    other.tracking_label = "go";
    ASSERT_TRUE(run(store().create_domain(other, {})));
    EXPECT_EQ(run(store().find_domain_by_id(a.id, d.id))->tracking_label, "links") << "default";
    EXPECT_EQ(run(store().find_domain_by_id(b.id, other.id))->tracking_label, "go");

    auto& node = another_node();
    auto links = run(node.tracking_domains("links", "mail.example.com"));
    ASSERT_TRUE(links) << links.error().message();
    ASSERT_EQ(links->size(), 1u);
    EXPECT_EQ((*links)[0].id, d.id);
    EXPECT_EQ((*links)[0].records_json, R"({"tracking":{"host":"links"}})");
    auto go = run(store().tracking_domains("go", "mail.example.com"));
    ASSERT_EQ(go->size(), 1u) << "another account's, found too";
    EXPECT_EQ((*go)[0].account_id, b.id);
    EXPECT_TRUE(run(store().tracking_domains("links", "other.example.com"))->empty());

    // A new label comes with its records; other settings stay.
    ASSERT_TRUE(run(store().update_domain_settings(
        a.id, d.id,
        {.tracking_label = "go", .records_json = std::string(R"({"tracking":{"host":"go"}})")},
        kT0 + 10)));
    auto got = run(store().find_domain_by_id(a.id, d.id));
    EXPECT_EQ(got->tracking_label, "go");
    EXPECT_EQ(got->records_json, R"({"tracking":{"host":"go"}})");
    EXPECT_TRUE(got->sending);
    ASSERT_TRUE(run(store().update_domain_settings(a.id, d.id, {.inbound = true}, kT0 + 20)));
    got = run(store().find_domain_by_id(a.id, d.id));
    EXPECT_EQ(got->tracking_label, "go") << "unset: kept";
    EXPECT_EQ(got->records_json, R"({"tracking":{"host":"go"}})");
    EXPECT_EQ(run(store().tracking_domains("go", "mail.example.com"))->size(), 2u);
    EXPECT_TRUE(soon([&] {
        return run(node.tracking_domains("links", "mail.example.com"))->empty() &&
               run(node.tracking_domains("go", "mail.example.com"))->size() == 2;
    })) << "another node within moments";
}

}  // namespace
}  // namespace posthorn::store::contract
