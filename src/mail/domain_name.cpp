#include "mail/domain_name.hpp"

#include <idn2.h>

#include "core/text.hpp"

namespace posthorn::mail {
namespace {

constexpr core::ByteSet kLabelChars(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
constexpr core::ByteSet kDigits("0123456789");

}  // namespace

std::variant<std::string, BadDomain> normalize_domain(std::string_view input) {
    if (input.empty()) return BadDomain{"domain is empty"};
    if (input.size() > 1024) return BadDomain{"domain is too long"};
    if (input.back() == '.') return BadDomain{"domain must not end with a dot"};
    for (unsigned char c : input)
        if (c < 0x21 || c == 0x7f)
            return BadDomain{"domain must not contain spaces or control characters"};

    std::string ascii;
    if (core::is_ascii(input)) {
        ascii = core::ascii_lower(input);
    } else {
        char* out = nullptr;
        const std::string in(input);
        const int rc = idn2_to_ascii_8z(in.c_str(), &out, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
        if (rc != IDN2_OK)
            return BadDomain{std::string("not a valid internationalized domain: ") +
                             idn2_strerror(rc)};
        ascii = core::ascii_lower(out);
        idn2_free(out);
    }

    if (ascii.size() > 253) return BadDomain{"domain is longer than 253 characters"};
    std::size_t labels = 0;
    std::size_t start = 0;
    std::string_view last;
    const std::string_view view(ascii);
    while (start <= view.size()) {
        const auto dot = view.find('.', start);
        const auto label = view.substr(
            start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (label.empty()) return BadDomain{"domain has an empty label"};
        if (label.size() > 63) return BadDomain{"a label is longer than 63 characters"};
        if (label.front() == '-' || label.back() == '-')
            return BadDomain{"a label must not start or end with a hyphen"};
        for (char c : label)
            if (!kLabelChars.has(c))
                return BadDomain{std::string("domain contains '") + c +
                                 "': only letters, digits and hyphens are allowed"};
        ++labels;
        last = label;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    if (labels < 2) return BadDomain{"domain needs at least two labels (like example.com)"};
    if (kDigits.all_in(last)) return BadDomain{"an IP address is not a domain"};
    return ascii;
}

}  // namespace posthorn::mail
