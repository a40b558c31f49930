// The contract of TemplateStore: templates per account, found by id or by name, listed in
// pages, replaced whole by an update, deleted; a name unique within its account only.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

Template new_template(const Account& account, const std::string& name, UnixMs at) {
    return Template{.id = id_at("tpl_", at),
                    .account_id = account.id,
                    .name = name,
                    .subject = "Hello {{name}}",
                    .html = "<p>Привет, {{name}} — {{{raw}}}</p>",
                    .text = std::nullopt,
                    .variables_json = R"({"name":"you"})",
                    .created_at = at,
                    .updated_at = at};
}

TEST_P(StoreContract, TemplatesAreKeptPerAccountWithUniqueNames) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<Template> made;
    for (int i = 0; i < 3; ++i) {
        auto t = new_template(a, "t" + std::to_string(i), kT0 + 10 * i);
        auto copy = t;
        ASSERT_TRUE(run(store().create_template(std::move(copy))));
        made.push_back(std::move(t));
    }
    const auto other = new_template(b, "t0", kT0);  // the same name in another account
    auto other_copy = other;
    ASSERT_TRUE(run(store().create_template(std::move(other_copy))));
    auto dup = new_template(a, "t1", kT0 + 99);
    EXPECT_EQ(run(store().create_template(std::move(dup))).error(), errc::conflict);

    auto found = run(store().find_template(a.id, made[0].id));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->name, "t0");
    EXPECT_EQ(found->subject, made[0].subject);
    EXPECT_EQ(found->html, made[0].html) << "byte for byte";
    EXPECT_FALSE(found->text);
    EXPECT_EQ(found->variables_json, made[0].variables_json);
    EXPECT_EQ(found->created_at, kT0);
    auto by_name = run(store().find_template_by_name(b.id, "t0"));
    ASSERT_TRUE(by_name) << by_name.error().message();
    EXPECT_EQ(by_name->id, other.id);

    // Another account's template is not there for it.
    EXPECT_EQ(run(store().find_template(b.id, made[0].id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_template_by_name(b.id, "t1")).error(), errc::not_found);
    auto foreign = made[1];
    foreign.account_id = b.id;
    EXPECT_EQ(run(store().update_template(foreign)).error(), errc::not_found);
    EXPECT_EQ(run(store().delete_template(b.id, made[1].id)).error(), errc::not_found);

    auto page = run(store().list_templates({.account_id = a.id, .limit = 2}));
    ASSERT_TRUE(page) << page.error().message();
    EXPECT_EQ(page->total, 3);
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_EQ(page->items[0].id, made[2].id) << "newest first";
    auto asc = run(store().list_templates(
        {.account_id = a.id, .page = 2, .limit = 2, .order = SortOrder::asc}));
    ASSERT_EQ(asc->items.size(), 1u);
    EXPECT_EQ(asc->items[0].id, made[2].id);
    EXPECT_EQ(run(store().list_templates({.account_id = b.id}))->total, 1);

    auto changed = made[1];
    changed.name = "renamed";
    changed.html.reset();
    changed.text = "plain {{x}}";
    changed.variables_json = "{}";
    changed.updated_at = kT0 + 500;
    changed.created_at = kT0 + 9999;  // not written
    auto updated = run(store().update_template(changed));
    ASSERT_TRUE(updated) << updated.error().message();
    EXPECT_EQ(updated->name, "renamed");
    EXPECT_FALSE(updated->html);
    EXPECT_EQ(updated->text, "plain {{x}}");
    EXPECT_EQ(updated->updated_at, kT0 + 500);
    EXPECT_EQ(updated->created_at, made[1].created_at);
    EXPECT_EQ(run(store().find_template_by_name(a.id, "renamed"))->id, made[1].id);
    EXPECT_EQ(run(store().find_template_by_name(a.id, "t1")).error(), errc::not_found);
    auto clash = made[2];
    clash.name = "t0";
    EXPECT_EQ(run(store().update_template(clash)).error(), errc::conflict);
    EXPECT_EQ(run(store().find_template(a.id, made[2].id))->name, "t2") << "unchanged";

    ASSERT_TRUE(run(store().delete_template(a.id, made[0].id)));
    EXPECT_EQ(run(store().find_template(a.id, made[0].id)).error(), errc::not_found);
    EXPECT_EQ(run(store().delete_template(a.id, made[0].id)).error(), errc::not_found);
    EXPECT_EQ(run(store().list_templates({.account_id = a.id}))->total, 2);
    EXPECT_TRUE(run(store().find_template(b.id, other.id))) << "another account's stays";
    // The name of a deleted template is free again.
    auto reused = new_template(a, "t0", kT0 + 600);
    ASSERT_TRUE(run(store().create_template(std::move(reused))));
}

}  // namespace
}  // namespace posthorn::store::contract
