#include "api/templates.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

#include "core/id.hpp"
#include "mail/template.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

constexpr std::string_view kIdPrefix = "tpl_";
constexpr std::size_t kMaxNameChars = 100;
constexpr std::size_t kMaxSubjectBytes = 2000;         // before rendering; rendered: 255 characters
constexpr std::size_t kMaxPartBytes = 512 * 1024;      // html and text, each
constexpr std::size_t kMaxVariablesBytes = 64 * 1024;  // the defaults, as JSON

std::size_t utf8_chars(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// The fields of a POST or PATCH body, each as given (html, text: null removes the part).
struct TemplateFields {
    std::optional<std::string> name;
    std::optional<std::string> subject;
    std::optional<std::optional<std::string>> html;
    std::optional<std::optional<std::string>> text;
    std::optional<std::string> variables_json;
};

std::variant<TemplateFields, std::string> read_fields(const json::value& body) {
    if (!body.is_object()) return std::string("body must be a JSON object");
    const auto& o = body.as_object();
    static constexpr std::array<std::string_view, 5> kFields = {"name", "subject", "html", "text",
                                                                "variables"};
    for (const auto& [k, v] : o)
        if (std::find(kFields.begin(), kFields.end(), std::string_view(k)) == kFields.end())
            return "unknown field '" + std::string(k) + "'";
    TemplateFields f;
    if (const auto* v = o.if_contains("name")) {
        if (!v->is_string() || v->as_string().empty() ||
            utf8_chars(v->as_string()) > kMaxNameChars || has_control(v->as_string()) ||
            v->as_string().find('/') != json::string::npos)
            return std::string(
                "name must be a string of 1 to 100 characters without control "
                "characters or '/' (a name stands for the id in a path)");
        if (std::string_view(v->as_string()).starts_with(kIdPrefix))
            return std::string("name must not start with \"tpl_\" (the prefix of template ids)");
        f.name = std::string(v->as_string());
    }
    if (const auto* v = o.if_contains("subject")) {
        if (!v->is_string() || v->as_string().empty() || v->as_string().size() > kMaxSubjectBytes)
            return "subject must be a string of 1 to " + std::to_string(kMaxSubjectBytes) +
                   " bytes";
        if (v->as_string().find_first_of("\r\n") != json::string::npos)
            return std::string("subject must not contain line breaks");
        f.subject = std::string(v->as_string());
    }
    for (const char* part : {"html", "text"}) {
        const auto* v = o.if_contains(part);
        if (!v) continue;
        auto& field = std::string_view(part) == "html" ? f.html : f.text;
        if (v->is_null() || (v->is_string() && v->as_string().empty())) {
            field = std::optional<std::string>();
            continue;
        }
        if (!v->is_string()) return std::string(part) + " must be a string or null";
        if (v->as_string().size() > kMaxPartBytes)
            return std::string(part) + " is larger than " + std::to_string(kMaxPartBytes) +
                   " bytes";
        if (v->as_string().find('\0') != json::string::npos)
            return std::string(part) + " must not contain NUL characters";
        field = std::optional<std::string>(std::string(v->as_string()));
    }
    if (const auto* v = o.if_contains("variables"); v && !v->is_null()) {
        if (!v->is_object()) return std::string("variables must be an object (the defaults)");
        auto text = json::serialize(*v);
        if (text.size() > kMaxVariablesBytes)
            return "variables are larger than " + std::to_string(kMaxVariablesBytes) +
                   " bytes as JSON";
        f.variables_json = std::move(text);
    } else if (v) {
        f.variables_json = "{}";
    }
    return f;
}

json::object variables_of(const std::string& stored) {
    error_code ec;
    auto v = json::parse(stored, ec);
    if (ec || !v.is_object()) return {};  // written by us as an object: never
    return std::move(v.as_object());
}

mail::TemplateParts parts_of(const store::Template& t) {
    return {.subject = t.subject, .html = t.html, .text = t.text};
}

// What a stored template must be: at least one body, and parts that parse.
std::optional<std::string> template_error(const store::Template& t) {
    if (!t.html && !t.text) return std::string("html or text is required");
    return mail::template_syntax_error(parts_of(t));
}

json::value opt(const std::optional<std::string>& s) {
    return s ? json::value(*s) : json::value(nullptr);
}

json::object to_json(const store::Template& t) {
    return {{"id", t.id},
            {"name", t.name},
            {"subject", t.subject},
            {"html", opt(t.html)},
            {"text", opt(t.text)},
            {"variables", variables_of(t.variables_json)},
            {"created_at", format_iso8601(t.created_at)},
            {"updated_at", format_iso8601(t.updated_at)}};
}

http::Response not_found_or_error(const error_code& ec, std::string_view what) {
    if (ec == store::errc::not_found) return detail::not_found("template not found");
    return detail::internal_error(what, ec);
}

http::Response name_taken(const std::string& name) {
    return http::error_response(409, "CONFLICT",
                                "the account has a template named '" + name + "' already");
}

// The account's template `ref` names: its id, or its name.
asio::awaitable<Result<store::Template>> find(const Deps& deps, std::string account_id,
                                              std::string ref) {
    if (std::string_view(ref).starts_with(kIdPrefix))
        co_return co_await deps.templates.find_template(std::move(account_id), std::move(ref));
    co_return co_await deps.templates.find_template_by_name(std::move(account_id), std::move(ref));
}

std::string missing_message(const std::string& name, const std::vector<std::string>& names) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
    return "template '" + name + "' uses " + (names.size() == 1 ? "variable " : "variables ") +
           list + ", given neither by the send's variables nor as a default";
}

// The template rendered with `variables`, or the answer to give.
std::variant<mail::RenderedParts, http::Response> render(const store::Template& t,
                                                         const json::object& variables) {
    const auto defaults = variables_of(t.variables_json);
    auto r = mail::render_template(parts_of(t), defaults, variables);
    if (auto* m = std::get_if<mail::MissingVariables>(&r))
        return http::error_response(400, "TEMPLATE_VARIABLE_MISSING",
                                    missing_message(t.name, m->names));
    if (auto* e = std::get_if<mail::TemplateError>(&r))
        return detail::validation_error("template '" + t.name + "': " + e->message);
    return std::get<mail::RenderedParts>(std::move(r));
}

}  // namespace

asio::awaitable<http::Response> create_template(Context ctx) {
    auto read = read_fields(ctx.body);
    if (auto* bad = std::get_if<std::string>(&read)) co_return detail::validation_error(*bad);
    auto& f = std::get<TemplateFields>(read);
    if (!f.name) co_return detail::validation_error("name is required");
    if (!f.subject) co_return detail::validation_error("subject is required");
    const auto now = ctx.deps.clock.now_ms();
    store::Template t{.id = new_id(kIdPrefix, now),
                      .account_id = ctx.account_id,
                      .name = std::move(*f.name),
                      .subject = std::move(*f.subject),
                      .html = f.html.value_or(std::nullopt),
                      .text = f.text.value_or(std::nullopt),
                      .variables_json = f.variables_json.value_or("{}"),
                      .created_at = now,
                      .updated_at = now};
    if (auto e = template_error(t)) co_return detail::validation_error(*e);
    auto body = to_json(t);
    auto name = t.name;
    auto r = co_await ctx.deps.templates.create_template(std::move(t));
    if (!r) {
        if (r.error() == store::errc::conflict) co_return name_taken(name);
        co_return detail::internal_error("create the template", r.error());
    }
    co_return detail::json(201, body);
}

asio::awaitable<http::Response> list_templates(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sort_order"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::ListQuery query{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    auto page = co_await ctx.deps.templates.list_templates(std::move(query));
    if (!page) co_return detail::internal_error("list templates", page.error());
    json::array data;
    for (const auto& t : page->items) data.push_back(to_json(t));
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<http::Response> get_template(Context ctx) {
    auto account = ctx.account_id;
    auto ref = detail::param(ctx, "id");
    auto t = co_await find(ctx.deps, std::move(account), std::move(ref));
    if (!t) co_return not_found_or_error(t.error(), "read the template");
    co_return detail::json(200, to_json(*t));
}

asio::awaitable<http::Response> update_template(Context ctx) {
    auto read = read_fields(ctx.body);
    if (auto* bad = std::get_if<std::string>(&read)) co_return detail::validation_error(*bad);
    auto& f = std::get<TemplateFields>(read);
    auto account = ctx.account_id;
    auto ref = detail::param(ctx, "id");
    auto found = co_await find(ctx.deps, std::move(account), std::move(ref));
    if (!found) co_return not_found_or_error(found.error(), "read the template");
    store::Template t = std::move(*found);
    if (f.name) t.name = std::move(*f.name);
    if (f.subject) t.subject = std::move(*f.subject);
    if (f.html) t.html = std::move(*f.html);
    if (f.text) t.text = std::move(*f.text);
    if (f.variables_json) t.variables_json = std::move(*f.variables_json);
    t.updated_at = ctx.deps.clock.now_ms();
    if (auto e = template_error(t)) co_return detail::validation_error(*e);
    auto name = t.name;
    auto updated = co_await ctx.deps.templates.update_template(std::move(t));
    if (!updated) {
        if (updated.error() == store::errc::conflict) co_return name_taken(name);
        co_return not_found_or_error(updated.error(), "update the template");
    }
    co_return detail::json(200, to_json(*updated));
}

asio::awaitable<http::Response> delete_template(Context ctx) {
    auto account = ctx.account_id;
    auto ref = detail::param(ctx, "id");
    auto found = co_await find(ctx.deps, account, std::move(ref));
    if (!found) co_return not_found_or_error(found.error(), "read the template");
    auto id = found->id;
    auto r = co_await ctx.deps.templates.delete_template(std::move(account), id);
    if (!r) co_return not_found_or_error(r.error(), "delete the template");
    co_return detail::json(200, json::object{{"id", id}, {"deleted", true}});
}

asio::awaitable<http::Response> render_template_preview(Context ctx) {
    json::object variables;
    if (!ctx.body.is_null()) {
        if (!ctx.body.is_object()) co_return detail::validation_error("body must be a JSON object");
        for (const auto& [k, v] : ctx.body.as_object())
            if (k != "variables")
                co_return detail::validation_error("unknown field '" + std::string(k) + "'");
        if (const auto* v = ctx.body.as_object().if_contains("variables"); v && !v->is_null()) {
            if (!v->is_object()) co_return detail::validation_error("variables must be an object");
            variables = v->as_object();
        }
    }
    auto account = ctx.account_id;
    auto ref = detail::param(ctx, "id");
    auto t = co_await find(ctx.deps, std::move(account), std::move(ref));
    if (!t) co_return not_found_or_error(t.error(), "read the template");
    auto rendered = render(*t, variables);
    if (auto* res = std::get_if<http::Response>(&rendered)) co_return std::move(*res);
    const auto& r = std::get<mail::RenderedParts>(rendered);
    co_return detail::json(
        200,
        json::object{
            {"id", t->id}, {"subject", r.subject}, {"html", opt(r.html)}, {"text", opt(r.text)}});
}

asio::awaitable<std::variant<SendRequest, http::Response>> apply_template(const Deps& deps,
                                                                          std::string account_id,
                                                                          SendRequest req) {
    if (!req.template_ref) co_return std::move(req);
    auto ref = req.template_ref->ref;
    auto t = co_await find(deps, std::move(account_id), ref);
    if (!t) {
        if (t.error() == store::errc::not_found)
            co_return detail::not_found("template '" + ref + "' not found");
        co_return detail::internal_error("read the template", t.error());
    }
    auto rendered = render(*t, req.template_ref->variables);
    if (auto* res = std::get_if<http::Response>(&rendered)) co_return std::move(*res);
    auto& r = std::get<mail::RenderedParts>(rendered);
    auto& m = req.message;
    m.subject = std::move(r.subject);
    m.html = std::move(r.html);
    m.text = std::move(r.text);
    if (auto e = check_content(m, "the rendered ")) {
        auto res = std::move(*e);
        co_return std::move(res);
    }
    co_return std::move(req);
}

}  // namespace posthorn::api
