// The MTA-STS parsers (delivery/mta_sts.hpp, RFC 8461): the policy file, as an HTTPS server
// of any recipient domain serves it, and the `_mta-sts` TXT record, as its DNS says; and
// the MX pattern matching on what a parsed policy lists.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "delivery/mta_sts.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::delivery;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto parsed = parse_sts_policy(text);
    if (parsed.policy) {
        const auto& p = *parsed.policy;
        // What parses keeps to the RFC's bounds.
        if (p.max_age_s < 0 || p.max_age_s > kStsMaxAgeLimit) __builtin_trap();
        if (p.mode != StsMode::none && p.mx.empty()) __builtin_trap();
        for (const auto& pattern : p.mx) {
            if (pattern.empty()) __builtin_trap();
            // A listed name matches itself; a wildcard matches one label in its place.
            if (pattern.starts_with("*.")) {
                if (!mx_matches(pattern, "x" + pattern.substr(1))) __builtin_trap();
            } else if (!mx_matches(pattern, pattern)) {
                __builtin_trap();
            }
        }
    } else if (parsed.error.empty()) {
        __builtin_trap();
    }
    if (auto id = parse_sts_record(text); id && (id->empty() || id->size() > 32)) __builtin_trap();
    (void)mx_matches(text.substr(0, size / 2), text.substr(size / 2));
    return 0;
}
