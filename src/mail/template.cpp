#include "mail/template.hpp"

#include <fmt/format.h>
#include <kainjow/mustache.hpp>

#include <algorithm>

namespace posthorn::mail {

namespace mustache = kainjow::mustache;
namespace json = boost::json;

namespace {

using Data = mustache::data;

// JSON → the library's data. Numbers become their text; null is false (Mustache's falsy).
Data to_data(const json::value& v) {
    switch (v.kind()) {
        case json::kind::string:
            return Data(std::string(v.get_string()));
        case json::kind::int64:
            return Data(std::to_string(v.get_int64()));
        case json::kind::uint64:
            return Data(std::to_string(v.get_uint64()));
        case json::kind::double_:
            return Data(fmt::format("{}", v.get_double()));
        case json::kind::bool_:
            return Data(v.get_bool());
        case json::kind::null:
            return Data(false);
        case json::kind::array: {
            Data list(Data::type::list);
            for (const auto& el : v.get_array()) list.push_back(to_data(el));
            return list;
        }
        case json::kind::object: {
            Data obj(Data::type::object);
            for (const auto& [k, el] : v.get_object()) obj.set(std::string(k), to_data(el));
            return obj;
        }
    }
    return Data(false);
}

// The library's own context (scopes searched innermost first, dotted names), recording each
// name it finds in no scope, and each partial asked for.
class RecordingContext final : public mustache::basic_context<std::string> {
  public:
    explicit RecordingContext(const Data* root) : inner_(root) {}

    void push(const Data* data) override { inner_.push(data); }
    void pop() override { inner_.pop(); }

    const Data* get(const std::string& name) const override {
        const auto* found = inner_.get(name);
        if (found == nullptr && std::find(missing_.begin(), missing_.end(), name) == missing_.end())
            missing_.push_back(name);
        return found;
    }

    const Data* get_partial(const std::string& /*name*/) const override {
        partial_asked_ = true;
        return nullptr;
    }

    [[nodiscard]] const std::vector<std::string>& missing() const { return missing_; }
    [[nodiscard]] bool partial_asked() const { return partial_asked_; }

  private:
    mustache::context<std::string> inner_;
    mutable std::vector<std::string> missing_;
    mutable bool partial_asked_ = false;
};

std::string no_escape(const std::string& s) { return s; }

// Where a part renders to: stops taking text past kMaxRenderedBytes, so that a section over
// a long list of a large part cannot make gigabytes (the render still walks the rest).
struct CappedSink {
    std::string out;
    bool over = false;
    CappedSink& operator<<(const std::string& s) {
        if (over || out.size() + s.size() > kMaxRenderedBytes)
            over = true;
        else
            out += s;
        return *this;
    }
};

// "{{" then optional blanks then ">": a partial, with the default delimiters.
bool has_partial_tag(const std::string& s) {
    for (auto at = s.find("{{"); at != std::string::npos; at = s.find("{{", at + 2)) {
        auto i = at + 2;
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        if (i < s.size() && s[i] == '>') return true;
    }
    return false;
}

struct Part {
    const char* name;
    const std::string* source;
    bool html;
};

std::vector<Part> parts_of(const TemplateParts& parts) {
    std::vector<Part> out{{"subject", &parts.subject, false}};
    if (parts.html) out.push_back({"html", &*parts.html, true});
    if (parts.text) out.push_back({"text", &*parts.text, false});
    return out;
}

}  // namespace

std::optional<std::string> template_syntax_error(const TemplateParts& parts) {
    for (const auto& p : parts_of(parts)) {
        mustache::mustache tmpl(*p.source);
        if (!tmpl.is_valid()) return std::string(p.name) + ": " + tmpl.error_message();
        if (has_partial_tag(*p.source))
            return std::string(p.name) + ": partials ({{> name}}) are not supported";
    }
    return std::nullopt;
}

std::variant<RenderedParts, MissingVariables, TemplateError> render_template(
    const TemplateParts& parts, const json::object& defaults, const json::object& variables) {
    json::object merged = defaults;
    for (const auto& [k, v] : variables) merged[k] = v;
    const Data root = to_data(merged);

    RenderedParts out;
    MissingVariables missing;
    for (const auto& p : parts_of(parts)) {
        mustache::mustache tmpl(*p.source);
        if (!tmpl.is_valid())
            return TemplateError{std::string(p.name) + ": " + tmpl.error_message()};
        if (!p.html) tmpl.set_custom_escape(&no_escape);
        RecordingContext ctx(&root);
        CappedSink sink;
        tmpl.render(ctx, sink);
        if (sink.over)
            return TemplateError{std::string(p.name) + ": the rendered " + p.name +
                                 " is larger than " + std::to_string(kMaxRenderedBytes) + " bytes"};
        auto rendered = std::move(sink.out);
        if (!tmpl.is_valid())
            return TemplateError{std::string(p.name) + ": " + tmpl.error_message()};
        if (ctx.partial_asked())
            return TemplateError{std::string(p.name) + ": partials are not supported"};
        for (const auto& n : ctx.missing())
            if (std::find(missing.names.begin(), missing.names.end(), n) == missing.names.end())
                missing.names.push_back(n);
        if (p.source == &parts.subject)
            out.subject = std::move(rendered);
        else if (p.html)
            out.html = std::move(rendered);
        else
            out.text = std::move(rendered);
    }
    if (!missing.names.empty()) return missing;
    return out;
}

}  // namespace posthorn::mail
