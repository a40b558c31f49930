// mail/domain_name.hpp — domain names as users type them, made canonical: IDNA2008
// (RFC 5891, via libidn2) to A-labels, lower case, then the host-name rules of RFC 1123 §2.1
// and RFC 5321 §4.1.2 (LDH labels of 1–63 octets, 253 in all, at least two labels, a TLD
// that is not all digits, so no IP address passes). A trailing dot is refused: these names
// are typed into forms, where the dot is a typo. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace posthorn::mail {

// The canonical form ("bücher.example" → "xn--bcher-kva.example"), or why the name is bad.
struct BadDomain {
    std::string reason;
};
std::variant<std::string, BadDomain> normalize_domain(std::string_view input);

}  // namespace posthorn::mail
