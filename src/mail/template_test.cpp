#include "mail/template.hpp"

#include <gtest/gtest.h>
#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

namespace posthorn::mail {
namespace {

namespace json = boost::json;

json::object obj(std::string_view text) { return json::parse(text).as_object(); }

RenderedParts render_ok(const TemplateParts& parts, std::string_view vars,
                        std::string_view defaults = "{}") {
    auto r = render_template(parts, obj(defaults), obj(vars));
    if (auto* m = std::get_if<MissingVariables>(&r)) {
        ADD_FAILURE() << "missing " << m->names.front();
        return {};
    }
    if (auto* e = std::get_if<TemplateError>(&r)) {
        ADD_FAILURE() << e->message;
        return {};
    }
    return std::get<RenderedParts>(r);
}

TEST(RenderTemplate, EscapesHtmlVariablesOnlyInTheHtmlAndNeverTripleMustaches) {
    const TemplateParts parts{.subject = "Hi {{name}}",
                              .html = "<p>{{name}}</p><div>{{{raw}}}</div>",
                              .text = "Hi {{name}} {{{raw}}}"};
    const auto r = render_ok(parts, R"({"name":"<script>alert('x')</script> & \"q\"",
                                        "raw":"<b>bold</b>"})");
    EXPECT_EQ(r.subject, "Hi <script>alert('x')</script> & \"q\"");
    EXPECT_EQ(r.html,
              "<p>&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;</p>"
              "<div><b>bold</b></div>");
    EXPECT_EQ(r.text, "Hi <script>alert('x')</script> & \"q\" <b>bold</b>");
}

TEST(RenderTemplate, SectionsOverListsObjectsAndBooleansAndInvertedSections) {
    const TemplateParts parts{
        .subject = "Order {{order.id}}",
        .text =
            "{{#items}}- {{name}} x{{qty}} ({{currency}})\n{{/items}}"
            "{{^items}}nothing\n{{/items}}"
            "{{#vip}}VIP{{/vip}}{{^vip}}regular{{/vip}} {{#order}}#{{id}}{{/order}}"};
    const auto r = render_ok(parts, R"({"items":[{"name":"tea","qty":2},{"name":"jam","qty":1.5}],
                                        "vip":false,"order":{"id":42},"currency":"EUR"})");
    EXPECT_EQ(r.subject, "Order 42");
    // "currency" is not in an item: found in the outer scope.
    EXPECT_EQ(r.text, "- tea x2 (EUR)\n- jam x1.5 (EUR)\nregular #42");
    EXPECT_FALSE(r.html);
    const auto empty = render_ok(parts, R"({"items":[],"vip":true,"order":{"id":1}})");
    EXPECT_EQ(empty.text, "nothing\nVIP #1");  // currency unused: no item rendered
}

TEST(RenderTemplate, NamesEveryMissingVariableOnceInOrderOfUse) {
    const TemplateParts parts{
        .subject = "{{a}} {{b.c}}", .html = "{{#list}}{{x}}{{/list}}{{a}}", .text = "{{d}}"};
    auto r = render_template(parts, {}, obj(R"({"b":{"z":1},"list":[{"y":1}]})"));
    ASSERT_TRUE(std::holds_alternative<MissingVariables>(r));
    EXPECT_EQ(std::get<MissingVariables>(r).names,
              (std::vector<std::string>{"a", "b.c", "x", "d"}));
}

TEST(RenderTemplate, DefaultsFillWhatTheSendLacksAndTheSendWins) {
    const TemplateParts parts{.subject = "{{greeting}}, {{name}}", .text = "x"};
    const auto r = render_ok(parts, R"({"name":"Ana"})", R"({"greeting":"Hello","name":"you"})");
    EXPECT_EQ(r.subject, "Hello, Ana");
    EXPECT_EQ(
        render_ok(parts, R"({"greeting":"Hi"})", R"({"greeting":"Hello","name":"you"})").subject,
        "Hi, you");
}

TEST(RenderTemplate, NullIsGivenAndFalse) {
    const TemplateParts parts{.subject = "[{{n}}]{{#n}}yes{{/n}}{{^n}}no{{/n}}", .text = "t"};
    EXPECT_EQ(render_ok(parts, R"({"n":null})").subject, "[]no");
}

TEST(RenderTemplate, KeepsNonLatinTextAsItIs) {
    const TemplateParts parts{
        .subject = "Привет, {{имя}}! 🎉", .html = "<p>{{city}} — 東京</p>", .text = "{{city}}"};
    const auto r = render_ok(parts, R"({"имя":"Мария","city":"Zürich 東京 عربى"})");
    EXPECT_EQ(r.subject, "Привет, Мария! 🎉");
    EXPECT_EQ(r.html, "<p>Zürich 東京 عربى — 東京</p>");
    EXPECT_EQ(r.text, "Zürich 東京 عربى");
}

TEST(RenderTemplate, APartRenderedPastTheCapIsAnError) {
    json::object vars;
    json::array items;
    for (int i = 0; i < 5000; ++i) items.emplace_back(i);
    vars["items"] = std::move(items);
    const TemplateParts parts{.subject = "s",
                              .text = "{{#items}}" + std::string(1024, 'x') + "{{/items}}"};
    auto r = render_template(parts, {}, vars);
    ASSERT_TRUE(std::holds_alternative<TemplateError>(r));
    EXPECT_NE(std::get<TemplateError>(r).message.find("text: the rendered text is larger than"),
              std::string::npos);
}

TEST(TemplateSyntaxError, NamesThePartAndKeepsTheLibrarysMessage) {
    EXPECT_FALSE(template_syntax_error({.subject = "ok {{a}}", .html = "{{#s}}x{{/s}}"}));
    const auto e = template_syntax_error({.subject = "ok", .html = "{{#s}}x", .text = "t"});
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rfind("html: ", 0), 0u) << *e;
    EXPECT_NE(e->find("Unclosed section"), std::string::npos) << *e;
    const auto t = template_syntax_error({.subject = "{{a}", .text = "t"});
    ASSERT_TRUE(t);
    EXPECT_EQ(t->rfind("subject: ", 0), 0u) << *t;
    const auto p = template_syntax_error({.subject = "s", .text = "{{> footer}}"});
    ASSERT_TRUE(p);
    EXPECT_NE(p->find("partials"), std::string::npos);
}

}  // namespace
}  // namespace posthorn::mail
