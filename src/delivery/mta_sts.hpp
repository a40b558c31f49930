// delivery/mta_sts.hpp — the parts of SMTP MTA Strict Transport Security (RFC 8461) that read
// untrusted text: the `_mta-sts` TXT record (§3.1), the policy file served at
// https://mta-sts.<domain>/.well-known/mta-sts.txt (§3.2), and the matching of an MX host
// against the policy's `mx` patterns (§4.1). Fetching and caching the policy is
// delivery/sts_policies.hpp's job; what a policy makes of a connection, tls_policy.hpp's.
// Pure; thread-safe. Fuzzed by tests/fuzz/mta_sts_policy_fuzz.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace posthorn::delivery {

enum class StsMode : std::uint8_t { enforce, testing, none };

struct StsPolicy {
    StsMode mode = StsMode::none;
    std::vector<std::string> mx;  // patterns, lower-case, no trailing dot: "mx.example.net",
                                  // "*.example.net"
    std::int64_t max_age_s = 0;   // seconds, 0 .. 31557600 (§3.2)
};

inline constexpr std::int64_t kStsMaxAgeLimit = 31'557'600;   // RFC 8461 §3.2: about a year
inline constexpr std::size_t kStsMaxPolicyBytes = 64 * 1024;  // we read no more than this

// The id of a `v=STSv1; id=…;` TXT record (§3.1); nullopt when the text is not one (it
// does not start with "v=STSv1", or has no valid id: 1 to 32 letters and digits).
std::optional<std::string> parse_sts_record(std::string_view txt);

// The id of the one STSv1 record among a name's TXT records: records that do not start
// with "v=STSv1;" are ignored; none, or more than one, or an invalid one, is nullopt (§3.1).
std::optional<std::string> sts_record_id(const std::vector<std::string>& txts);

struct StsParse {
    std::optional<StsPolicy> policy;
    std::string error;  // why there is none: "no max_age", "mode: unknown value 'x'", ...
};

// A policy file (§3.2): "key: value" lines ending in CRLF or LF; `version` must be STSv1,
// `mode` enforce|testing|none, `max_age` a whole number of seconds within the limit, and
// at least one `mx` unless the mode is none. Unknown keys are ignored (§3.2: for future
// extensions); of a key other than mx given twice, the first counts.
StsParse parse_sts_policy(std::string_view body);

// Whether `host` (an MX name, any case, with or without a trailing dot) matches `pattern`
// (§4.1): equal, or, for "*.example.net", the pattern's suffix after exactly one more label
// ("mx.example.net" yes; "a.mx.example.net" and "example.net" no).
bool mx_matches(std::string_view pattern, std::string_view host);

// Whether any of the policy's patterns matches `host`.
bool mx_allowed(const StsPolicy& policy, std::string_view host);

std::string_view to_string(StsMode mode);

}  // namespace posthorn::delivery
