// The contract of an email's tags and metadata: kept as they were given (the tags in their
// order, any text in them read back as it was), read with the email wherever it is read
// (find_email, the list, the email change_email hands to the rules), and the list's status
// and tag filters: any of the statuses, every one of the tags, the account's emails only,
// the total counted with the filter.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EmailStatus;

std::vector<std::string> ids_of(const Page<Email>& page) {
    std::vector<std::string> out;
    for (const auto& e : page.items) out.push_back(e.id);
    return out;
}

TEST_P(StoreContract, TagsAndMetadataAreKeptAsGiven) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n = new_email(acc, d, 1, kT0);
    // In their order, not sorted; the codec's own characters and a line break read back.
    n.email.tags = {{.name = "zeta", .value = "1"},
                    {.name = "alpha", .value = "a=b%3D"},
                    {.name = "odd\nname", .value = "%"}};
    n.email.metadata_json = R"({"order":{"id":42,"items":["a","b"]},"note":"\u00e9"})";
    const auto id = create(n);
    const auto plain = create(new_email(acc, d, 1, kT0 + 1));

    auto e = find(acc.id, id);
    EXPECT_EQ(e.tags, n.email.tags);
    EXPECT_EQ(e.metadata_json, n.email.metadata_json);
    auto none = find(acc.id, plain);
    EXPECT_TRUE(none.tags.empty());
    EXPECT_EQ(none.metadata_json, "");

    // In the list too.
    auto page = run(store().list_emails({.account_id = acc.id}));
    ASSERT_TRUE(page) << page.error().message();
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_EQ(page->items[1].id, id);
    EXPECT_EQ(page->items[1].tags, n.email.tags);
    EXPECT_EQ(page->items[1].metadata_json, n.email.metadata_json);
    EXPECT_TRUE(page->items[0].tags.empty());

    // And in the email the rules are handed (the events are made from it).
    auto seen = std::make_shared<Email>();
    EmailDecision look = [seen](const Email& current) -> std::optional<EmailChange> {
        *seen = current;
        return std::nullopt;
    };
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, look)));
    EXPECT_EQ(seen->tags, n.email.tags);
    EXPECT_EQ(seen->metadata_json, n.email.metadata_json);
    ASSERT_TRUE(run(store().change_email("", id, false, look)));  // by id alone (tracking)
    EXPECT_EQ(seen->tags, n.email.tags);
}

TEST_P(StoreContract, ListFiltersByStatusAndTags) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a);
    auto tagged = [&](UnixMs at, std::vector<Tag> tags) {
        auto n = new_email(a, da, 1, at);
        n.email.tags = std::move(tags);
        return create(std::move(n));
    };
    const Tag spring{.name = "campaign", .value = "spring"};
    const Tag autumn{.name = "campaign", .value = "autumn"};
    const Tag gold{.name = "tier", .value = "gold"};
    const auto e0 = tagged(kT0, {spring, gold});
    const auto e1 = tagged(kT0 + 10, {spring});
    const auto e2 = tagged(kT0 + 20, {autumn, gold});
    const auto e3 = tagged(kT0 + 30, {});
    // Account B's email carries the same tag: never in A's list.
    auto nb = new_email(b, make_domain(b), 1, kT0 + 15);
    nb.email.tags = {spring};
    create(std::move(nb));

    // e1 delivered, e2 bounced (the rules decide; the store writes).
    auto finish = [&](const std::string& id, int code) {
        const auto e = find(a.id, id);
        domain::Outcomes o{
            .recipients = {answered(e.recipients.at(0), code,
                                    code < 300 ? "250 ok" : "550 5.1.1 no such", kT0 + kMinute)},
            .at = kT0 + kMinute};
        ASSERT_TRUE(run(store().change_email(a.id, id, true, apply(o))));
    };
    finish(e1, 250);
    finish(e2, 550);
    ASSERT_EQ(find(a.id, e1).status, EmailStatus::delivered);
    ASSERT_EQ(find(a.id, e2).status, EmailStatus::bounced);

    auto list = [&](SearchQuery q) {
        q.account_id = a.id;
        auto page = run(store().list_emails(q));
        EXPECT_TRUE(page) << page.error().message();
        return page ? *page : Page<Email>{};
    };
    using V = std::vector<std::string>;

    auto p = list({.tags = {spring}});
    EXPECT_EQ(ids_of(p), (V{e1, e0}));
    EXPECT_EQ(p.total, 2);
    p = list({.tags = {gold}});
    EXPECT_EQ(ids_of(p), (V{e2, e0}));
    p = list({.tags = {spring, gold}});  // every tag
    EXPECT_EQ(ids_of(p), (V{e0}));
    EXPECT_EQ(p.total, 1);
    p = list({.tags = {{.name = "campaign", .value = "winter"}}});
    EXPECT_TRUE(p.items.empty());
    EXPECT_EQ(p.total, 0);
    p = list({.tags = {{.name = "spring", .value = "campaign"}}});  // name and value apart
    EXPECT_TRUE(p.items.empty());

    p = list({.statuses = {EmailStatus::queued}});
    EXPECT_EQ(ids_of(p), (V{e3, e0}));
    EXPECT_EQ(p.total, 2);
    p = list({.statuses = {EmailStatus::delivered, EmailStatus::bounced}});  // any of them
    EXPECT_EQ(ids_of(p), (V{e2, e1}));
    p = list({.statuses = {EmailStatus::complained}});
    EXPECT_TRUE(p.items.empty());
    EXPECT_EQ(p.total, 0);

    // With each other and with the other filters, ordering and paging.
    p = list({.statuses = {EmailStatus::queued}, .tags = {gold}});
    EXPECT_EQ(ids_of(p), (V{e0}));
    p = list({.order = SortOrder::asc, .tags = {gold}});
    EXPECT_EQ(ids_of(p), (V{e0, e2}));
    p = list({.page = 2, .limit = 1, .tags = {gold}});
    EXPECT_EQ(ids_of(p), (V{e0}));
    EXPECT_EQ(p.total, 2);
    p = list({.start = kT0 + 5, .tags = {spring}});
    EXPECT_EQ(ids_of(p), (V{e1}));
    p = list({.page = 1, .limit = 10, .sort_by = "to_email", .tags = {gold}});
    EXPECT_EQ(p.items.size(), 2u);
    p = list({.search = "r0@", .statuses = {EmailStatus::delivered}});
    EXPECT_EQ(ids_of(p), (V{e1}));
}

}  // namespace
}  // namespace posthorn::store::contract
