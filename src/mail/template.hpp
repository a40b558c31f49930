// mail/template.hpp — stored templates rendered into an email's subject, HTML and text
// (Mustache, https://mustache.github.io/mustache.5.html; docs/templates.md). The library
// (kainjow/mustache, Debian libkainjow-mustache-dev) stays in template.cpp.
//
// Rendering is strict: a name the template looks up while it renders and that neither the
// send's variables nor the template's defaults give (at any scope: a name looked up inside
// a section for an item that lacks it is searched in the outer scopes too) is an error that
// names it. A section's name counts as used (give false or [] to leave it out); the names
// inside a section that is not rendered do not. Values: strings as they are, numbers as
// JSON writes them, true/false, null (false), objects and arrays (sections and dotted
// names). In the HTML `{{name}}` is HTML-escaped and `{{{name}}}` is not; the subject and
// the text are never escaped. Partials and lambdas are not supported. Pure; thread-safe.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace posthorn::mail {

// The most a part may render to (a section repeats its text once per item of a list).
inline constexpr std::size_t kMaxRenderedBytes = 4 * 1024 * 1024;

// A template's three parts, each in Mustache syntax; a part that is not there renders as
// not there.
struct TemplateParts {
    std::string subject;
    std::optional<std::string> html;
    std::optional<std::string> text;
};

// What a template answers: the email's subject and bodies.
struct RenderedParts {
    std::string subject;
    std::optional<std::string> html;
    std::optional<std::string> text;
};

// The names a template used that were given nowhere, in the order of first use (subject,
// then html, then text).
struct MissingVariables {
    std::vector<std::string> names;
};

// A part that does not parse, or could not render: "<part>: <the library's message>".
struct TemplateError {
    std::string message;
};

// The first part of `parts` that does not parse (as a TemplateError's message), or none.
// A partial tag ({{> name}}) is refused here too.
std::optional<std::string> template_syntax_error(const TemplateParts& parts);

// Renders every part with `variables` over `defaults` (a name the send gives replaces the
// default of the same name whole).
std::variant<RenderedParts, MissingVariables, TemplateError> render_template(
    const TemplateParts& parts, const boost::json::object& defaults,
    const boost::json::object& variables);

}  // namespace posthorn::mail
