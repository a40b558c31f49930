#include "mail/tracking.hpp"

#include <gumbo.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "core/text.hpp"

namespace posthorn::mail {
namespace {

struct Edit {
    std::size_t at;
    std::size_t length;
    std::string text;
};

bool is_web_link(std::string_view url) {
    while (!url.empty() && std::isspace(static_cast<unsigned char>(url.front())))
        url.remove_prefix(1);
    auto starts = [&](std::string_view p) {
        return url.size() >= p.size() && core::ascii_iequals(url.substr(0, p.size()), p);
    };
    return starts("http://") || starts("https://");
}

// An <a> that the HTML5 parser made again (it reopens formatting elements that a block
// closed: `<a href=…><p>x<p>y` has the same <a> in both paragraphs) points at the same source
// text as the one written there: `rewritten` holds the hrefs already taken, so that each is
// rewritten once.
void walk(const GumboNode* node, const char* base, const Tracking& t, std::vector<Edit>& edits,
          std::unordered_set<std::size_t>& rewritten, std::optional<std::size_t>& body_end) {
    if (node->type != GUMBO_NODE_ELEMENT) return;
    const GumboElement& el = node->v.element;
    if (el.tag == GUMBO_TAG_A && t.link) {
        if (GumboAttribute* href = gumbo_get_attribute(&el.attributes, "href");
            href && href->original_value.length > 0 && is_web_link(href->value)) {
            const auto at = static_cast<std::size_t>(href->original_value.data - base);
            if (rewritten.insert(at).second)
                edits.push_back({at, href->original_value.length,
                                 "\"" + core::html_escape(t.link(href->value)) + "\""});
        }
    }
    if (el.tag == GUMBO_TAG_BODY && el.original_end_tag.length > 0)
        body_end = static_cast<std::size_t>(el.original_end_tag.data - base);
    for (unsigned i = 0; i < el.children.length; ++i)
        walk(static_cast<const GumboNode*>(el.children.data[i]), base, t, edits, rewritten,
             body_end);
}

// The <meta> elements' charset declarations that are not utf-8 already, as edits.
void charset_edits(const GumboNode* node, const char* base, std::vector<Edit>& edits) {
    if (node->type != GUMBO_NODE_ELEMENT) return;
    const GumboElement& el = node->v.element;
    if (el.tag == GUMBO_TAG_META) {
        const GumboAttribute* charset = gumbo_get_attribute(&el.attributes, "charset");
        const GumboAttribute* equiv = gumbo_get_attribute(&el.attributes, "http-equiv");
        const GumboAttribute* content = gumbo_get_attribute(&el.attributes, "content");
        const GumboAttribute* edited = nullptr;
        if (charset && !core::ascii_iequals(charset->value, "utf-8"))
            edited = charset;
        else if (equiv && content && core::ascii_iequals(equiv->value, "content-type") &&
                 core::ascii_lower(content->value).find("charset=utf-8") == std::string::npos)
            edited = content;
        if (edited && edited->original_value.length > 0)
            edits.push_back({static_cast<std::size_t>(edited->original_value.data - base),
                             edited->original_value.length,
                             edited == charset ? "\"utf-8\"" : "\"text/html; charset=utf-8\""});
    }
    for (unsigned i = 0; i < el.children.length; ++i)
        charset_edits(static_cast<const GumboNode*>(el.children.data[i]), base, edits);
}

std::string apply(std::string source, std::vector<Edit>& edits) {
    // From the back, so that earlier offsets stay right (no edit overlaps another).
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.at > b.at; });
    for (const auto& e : edits) source.replace(e.at, e.length, e.text);
    return source;
}

}  // namespace

std::string declare_utf8(std::string_view html) {
    std::string source(html);
    GumboOutput* out =
        gumbo_parse_with_options(&kGumboDefaultOptions, source.c_str(), source.size());
    std::vector<Edit> edits;
    charset_edits(out->root, source.c_str(), edits);
    gumbo_destroy_output(&kGumboDefaultOptions, out);
    if (edits.empty()) return source;
    return apply(std::move(source), edits);
}

std::string track_html(std::string_view html, const Tracking& t) {
    const std::string source(html);
    GumboOutput* out =
        gumbo_parse_with_options(&kGumboDefaultOptions, source.c_str(), source.size());
    std::vector<Edit> edits;
    std::unordered_set<std::size_t> rewritten;
    std::optional<std::size_t> body_end;
    walk(out->root, source.c_str(), t, edits, rewritten, body_end);
    gumbo_destroy_output(&kGumboDefaultOptions, out);
    if (t.pixel_url) {
        const std::string img = "<img src=\"" + core::html_escape(*t.pixel_url) +
                                R"(" width="1" height="1" alt="" style="display:none">)";
        edits.push_back({body_end.value_or(source.size()), 0, img});
    }
    // The edits are of distinct attribute values and the body's end tag.
    return apply(source, edits);
}

}  // namespace posthorn::mail
