// store/detail/tag_codec.hpp — an email's tags as one text column of its row (emails.tags),
// shared by the back ends and by `posthorn store copy`, which carries the column as it is:
// "name=value" per tag, one a line, in the order given; '%', '=' and a line break inside a
// name or a value written %25, %3D and %0A, so that any text reads back as it was. The
// row's column is what an email is read with; the email_tags table beside it is what a
// tag filter searches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::store::detail {

inline void append_tag_part(std::string& out, std::string_view s) {
    for (const char c : s) {
        if (c == '%')
            out += "%25";
        else if (c == '=')
            out += "%3D";
        else if (c == '\n')
            out += "%0A";
        else
            out += c;
    }
}

inline std::string encode_tags(const std::vector<domain::Tag>& tags) {
    std::string out;
    for (const auto& t : tags) {
        if (!out.empty()) out += '\n';
        append_tag_part(out, t.name);
        out += '=';
        append_tag_part(out, t.value);
    }
    return out;
}

inline std::string decode_tag_part(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            const auto code = s.substr(i + 1, 2);
            if (code == "25" || code == "3D" || code == "0A") {
                out += code == "25" ? '%' : code == "3D" ? '=' : '\n';
                i += 2;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

inline std::vector<domain::Tag> decode_tags(std::string_view s) {
    std::vector<domain::Tag> out;
    while (!s.empty()) {
        const auto end = s.find('\n');
        const auto line = s.substr(0, end);
        const auto eq = line.find('=');
        out.push_back(domain::Tag{.name = decode_tag_part(line.substr(0, eq)),
                                  .value = eq == std::string_view::npos
                                               ? std::string()
                                               : decode_tag_part(line.substr(eq + 1))});
        if (end == std::string_view::npos) break;
        s.remove_prefix(end + 1);
    }
    return out;
}

}  // namespace posthorn::store::detail
