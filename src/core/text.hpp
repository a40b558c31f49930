// core/text.hpp — small ASCII text helpers shared by the modules (protocol keywords, DNS
// names, header names and e-mail domains compare case-insensitively in ASCII only).
#pragma once

#include <string>
#include <string_view>

namespace posthorn::core {

// `s` with A–Z turned into a–z; every other byte as it is (UTF-8 stays intact).
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace posthorn::core
