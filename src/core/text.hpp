// core/text.hpp — small text helpers shared by the modules: ASCII case (protocol keywords,
// DNS names, header names and e-mail domains compare case-insensitively in ASCII only),
// blanks at the ends of a header value, HTML escaping and JSON string literals.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// `a` and `b` equal but for the case of A–Z (no copy, unlike comparing ascii_lower()s).
inline bool ascii_iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// A set of bytes, for scanning text for any of them with one table lookup a byte, where
// std::string_view::find_first_of calls memchr over the set for every byte of the text.
class ByteSet {
  public:
    constexpr explicit ByteSet(std::string_view bytes) {
        for (const char c : bytes) {
            const auto b = static_cast<unsigned char>(c);
            bits_[b >> 6] |= std::uint64_t{1} << (b & 63);
        }
    }
    constexpr bool has(char c) const {
        const auto b = static_cast<unsigned char>(c);
        return ((bits_[b >> 6] >> (b & 63)) & 1) != 0;
    }
    // Whether any byte of `s` is in the set.
    constexpr bool any_in(std::string_view s) const {
        for (const char c : s)
            if (has(c)) return true;
        return false;
    }
    // Whether every byte of `s` is in the set.
    constexpr bool all_in(std::string_view s) const {
        for (const char c : s)
            if (!has(c)) return false;
        return true;
    }

  private:
    std::uint64_t bits_[4] = {};
};

// `s` without the spaces and tabs at either end (HTTP's optional whitespace around a header
// value or a cookie pair, RFC 9110 §5.6.3).
inline std::string_view trim_blanks(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// `s` with &, <, >, " and ' written as character references: safe as HTML text and inside
// a quoted attribute value.
inline std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
}

// True when no byte of `s` has the high bit set: eight bytes at a time (a message body
// is scanned this way before it is sent, so this is on the delivery path).
inline bool is_ascii(std::string_view s) {
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t any = 0;
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        any |= w;
    }
    for (; n > 0; ++p, --n) any |= static_cast<unsigned char>(*p);
    return (any & 0x8080808080808080ULL) == 0;
}

// Appends `s` as a JSON string, quotes included, escaped as Boost.JSON's serializer escapes
// it (\" \\ \b \f \n \r \t, other control characters \u00xx; every other byte as it
// is), so that a JSON text written piece by piece (the answer of a send, an event's data)
// is the same as one serialized from a json::object, without building the object first.
inline void append_json_string(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    // Eight bytes at a time while none of them needs an escape: a byte below 0x20, '"' or
    // '\\' (the "has a byte less than n" and "has a zero byte" tests of Bit Twiddling Hacks,
    // exact for the word as a whole).
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
    auto plain_word = [](std::uint64_t w) {
        const std::uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
        const std::uint64_t below_space = (w - kOnes * 0x20) & ~w;
        return ((below_space | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash)) &
                kHighs) == 0;
    };
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    std::size_t plain = 0;  // start of the run not yet copied
    for (std::size_t i = 0; i < s.size();) {
        if (s.size() - i >= 8) {
            std::uint64_t w;
            std::memcpy(&w, s.data() + i, 8);
            if (plain_word(w)) {
                i += 8;
                continue;
            }
        }
        const std::size_t end = std::min(s.size(), i + 8);
        for (; i < end; ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            out.append(s.data() + plain, i - plain);
            plain = i + 1;
            const char short_form = c == '"' || c == '\\' ? static_cast<char>(c)
                                    : c == '\b'           ? 'b'
                                    : c == '\f'           ? 'f'
                                    : c == '\n'           ? 'n'
                                    : c == '\r'           ? 'r'
                                    : c == '\t'           ? 't'
                                                          : '\0';
            out += '\\';
            if (short_form) {
                out += short_form;
            } else {
                out += "u00";
                out += kHex[c >> 4];
                out += kHex[c & 0xF];
            }
        }
    }
    out.append(s.data() + plain, s.size() - plain);
    out += '"';
}

// `s` as a JSON string, quotes included (append_json_string).
inline std::string json_string(std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
}

}  // namespace posthorn::core
