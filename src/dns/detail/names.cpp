#include "dns/detail/names.hpp"

namespace posthorn::dns::detail {

std::string canonical_name(std::string_view name) {
    std::string out{name};
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (!out.empty() && out.back() == '.') {
        // "a\." ends in an escaped dot, which is part of the label, not the root.
        std::size_t backslashes = 0;
        for (std::size_t i = out.size() - 1; i > 0 && out[i - 1] == '\\'; --i) ++backslashes;
        if (backslashes % 2 == 0) out.pop_back();
    }
    return out;
}

bool is_bad_query_name(std::string_view name) noexcept {
    return name.empty() || name.find('\0') != std::string_view::npos;
}

}  // namespace posthorn::dns::detail
