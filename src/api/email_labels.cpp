#include "api/email_labels.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "core/result.hpp"
#include "core/text.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

bool tag_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

// The count and the names' uniqueness (each tag was checked as it was read).
std::optional<std::string> check_tag_list(const std::vector<domain::Tag>& tags,
                                          std::string_view what) {
    if (tags.size() > kMaxTags)
        return std::string(what) + " holds " + std::to_string(tags.size()) +
               " tags; an email takes at most " + std::to_string(kMaxTags);
    for (std::size_t i = 0; i < tags.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (tags[i].name == tags[j].name)
                return std::string(what) + ": the tag name '" + tags[i].name +
                       "' is given twice (a name may appear once)";
    return std::nullopt;
}

std::optional<std::string> read_metadata(const json::value& v, std::string_view what,
                                         std::string& out) {
    if (!v.is_object()) return std::string(what) + " must be a JSON object";
    out = json::serialize(v);
    if (out.size() > kMaxMetadataBytes)
        return std::string(what) + " is " + std::to_string(out.size()) +
               " bytes as serialized JSON; the limit is " + std::to_string(kMaxMetadataBytes);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> tag_part_error(std::string_view what, std::string_view s) {
    if (s.empty() || s.size() > kMaxTagPartBytes ||
        !std::all_of(s.begin(), s.end(), [](unsigned char c) { return tag_char(c); }))
        return std::string(what) + " must be 1 to " + std::to_string(kMaxTagPartBytes) +
               " ASCII letters, digits, '_' or '-'";
    return std::nullopt;
}

std::optional<std::string> read_json_labels(const json::value* tags, const json::value* metadata,
                                            EmailLabels& out) {
    if (tags && !tags->is_null()) {
        if (!tags->is_array()) return "tags must be an array of {name, value} objects";
        std::size_t i = 0;
        for (const auto& el : tags->get_array()) {
            const auto where = "tags[" + std::to_string(i++) + "]";
            if (!el.is_object()) return where + " must be an object {name, value}";
            const auto& o = el.get_object();
            for (const auto& [k, v] : o)
                if (k != "name" && k != "value")
                    return where + ": unknown field '" + std::string(k) + "'";
            domain::Tag tag;
            for (const auto* part : {"name", "value"}) {
                const auto* v = o.if_contains(part);
                const auto field = where + "." + part;
                if (!v || !v->is_string()) return field + " is required and must be a string";
                if (auto e = tag_part_error(field, v->get_string())) return e;
                (std::string_view(part) == "name" ? tag.name : tag.value) =
                    std::string(v->get_string());
            }
            out.tags.push_back(std::move(tag));
        }
        if (auto e = check_tag_list(out.tags, "tags")) return e;
    }
    if (metadata && !metadata->is_null())
        if (auto e = read_metadata(*metadata, "metadata", out.metadata_json)) return e;
    return std::nullopt;
}

std::optional<std::string> read_header_labels(
    const std::vector<std::pair<std::string, std::string>>& headers, EmailLabels& out) {
    bool metadata_seen = false;
    for (const auto& [name, raw] : headers) {
        const auto value = trim(raw);
        if (core::ascii_iequals(name, kTagHeader)) {
            const auto eq = value.find('=');
            if (eq == std::string_view::npos)
                return std::string(kTagHeader) + " must be name=value (one tag a header)";
            domain::Tag tag{.name = std::string(trim(value.substr(0, eq))),
                            .value = std::string(trim(value.substr(eq + 1)))};
            if (auto e = tag_part_error(std::string(kTagHeader) + " name", tag.name)) return e;
            if (auto e = tag_part_error(std::string(kTagHeader) + " value", tag.value)) return e;
            out.tags.push_back(std::move(tag));
        } else if (core::ascii_iequals(name, kMetadataHeader)) {
            if (metadata_seen) return std::string(kMetadataHeader) + " is given more than once";
            metadata_seen = true;
            error_code ec;
            const auto v = json::parse(value, ec);
            if (ec) return std::string(kMetadataHeader) + " is not valid JSON: " + ec.message();
            if (auto e = read_metadata(v, kMetadataHeader, out.metadata_json)) return e;
        }
    }
    return check_tag_list(out.tags, std::string(kTagHeader) + " headers");
}

}  // namespace posthorn::api
