#include "smtp/detail/command.hpp"

#include <cctype>
#include <cstring>

namespace posthorn::smtp::detail {

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::optional<PathArg> parse_path(std::string_view arg, std::string_view keyword) {
    if (arg.size() < keyword.size() || upper(arg.substr(0, keyword.size())) != keyword)
        return std::nullopt;
    arg.remove_prefix(keyword.size());
    while (!arg.empty() && arg.front() == ' ') arg.remove_prefix(1);
    if (arg.empty() || arg.front() != '<') return std::nullopt;
    const auto close = arg.find('>');
    if (close == std::string_view::npos) return std::nullopt;
    PathArg out{std::string(arg.substr(1, close - 1)), {}};
    if (out.path.size() > 254) return std::nullopt;
    for (unsigned char c : out.path)
        if (c <= 0x20 || c == 0x7f || c == '<' || c == '>') return std::nullopt;
    auto rest = arg.substr(close + 1);
    while (!rest.empty()) {
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const auto sp = rest.find(' ');
        if (!rest.empty()) out.params.push_back(upper(rest.substr(0, sp)));
        if (sp == std::string_view::npos) break;
        rest.remove_prefix(sp);
    }
    return out;
}

bool has_bare_cr_or_lf(std::string_view s) {
    // Two memchr scans (whole machine words at a time) instead of a loop over every byte.
    const char* const begin = s.data();
    const char* const end = begin + s.size();
    for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', end - p))); ++p)
        if (p == begin || p[-1] != '\r') return true;
    for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\r', end - p))); ++p)
        if (p + 1 == end || p[1] != '\n') return true;
    return false;
}

// A message without such a line is not touched; otherwise the lines after the first
// stuffed one move down, each line as a whole.
void unstuff(std::string& s) {
    if (s.empty() || (s.front() != '.' && s.find("\n.") == std::string::npos)) return;
    char* const d = s.data();
    const std::size_t n = s.size();
    std::size_t r = 0, w = 0;
    while (r < n) {
        if (d[r] == '.') ++r;  // the stuffed dot
        const auto* eol = static_cast<const char*>(std::memchr(d + r, '\n', n - r));
        const std::size_t next = eol ? static_cast<std::size_t>(eol - d) + 1 : n;
        if (w != r) std::memmove(d + w, d + r, next - r);
        w += next - r;
        r = next;
    }
    s.resize(w);
}

}  // namespace posthorn::smtp::detail
