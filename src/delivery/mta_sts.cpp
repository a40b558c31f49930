#include "delivery/mta_sts.hpp"

#include <charconv>

#include "core/text.hpp"

namespace posthorn::delivery {

namespace {

bool is_wsp(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_wsp(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_wsp(s.back())) s.remove_suffix(1);
    return s;
}

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A host name without its trailing dot, lower-case.
std::string host_key(std::string_view s) {
    if (!s.empty() && s.back() == '.') s.remove_suffix(1);
    return core::ascii_lower(s);
}

// RFC 8461 §3.2's mx pattern: a domain name, optionally "*." in front; labels of letters,
// digits and hyphens (A-labels), none empty.
bool valid_mx_pattern(std::string_view p) {
    if (p.starts_with("*.")) p.remove_prefix(2);
    if (!p.empty() && p.back() == '.') p.remove_suffix(1);
    if (p.empty() || p.size() > 253) return false;
    std::size_t label = 0;
    for (char c : p) {
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (is_alnum(c) || c == '-' || c == '_') {
            if (++label > 63) return false;
        } else {
            return false;
        }
    }
    return label > 0;
}

}  // namespace

std::optional<std::string> parse_sts_record(std::string_view txt) {
    // sts-text-record = sts-version 1*(sts-sep sts-field) [sts-sep]; "v" comes first.
    constexpr std::string_view kVersion = "v=STSv1";
    if (!txt.starts_with(kVersion)) return std::nullopt;
    txt.remove_prefix(kVersion.size());
    std::optional<std::string> id;
    bool first = true;
    while (!txt.empty()) {
        const auto semi = txt.find(';');
        // The version must be followed by a separator (";", with optional spaces).
        if (first && (semi == std::string_view::npos || !trim(txt.substr(0, semi)).empty()))
            return std::nullopt;
        const auto field = trim(txt.substr(0, semi));
        txt.remove_prefix(semi == std::string_view::npos ? txt.size() : semi + 1);
        if (first) {
            first = false;
            continue;
        }
        if (field.empty()) {
            // Only a trailing separator may be empty.
            if (!trim(txt).empty()) return std::nullopt;
            break;
        }
        const auto eq = field.find('=');
        if (eq == std::string_view::npos || eq == 0) return std::nullopt;
        const auto name = field.substr(0, eq);
        const auto value = field.substr(eq + 1);
        if (name == "id") {
            if (id || value.empty() || value.size() > 32) return std::nullopt;
            for (char c : value)
                if (!is_alnum(c)) return std::nullopt;
            id = std::string(value);
        } else if (value.empty()) {
            return std::nullopt;  // sts-ext-value = 1*(...)
        }
    }
    return id;
}

std::optional<std::string> sts_record_id(const std::vector<std::string>& txts) {
    std::optional<std::string> found;
    int candidates = 0;
    for (const auto& t : txts) {
        if (!std::string_view(t).starts_with("v=STSv1")) continue;
        ++candidates;
        found = parse_sts_record(t);
    }
    if (candidates != 1) return std::nullopt;
    return found;
}

StsParse parse_sts_policy(std::string_view body) {
    if (body.size() > kStsMaxPolicyBytes) return {.error = "the policy is too large"};
    std::optional<std::string_view> version, mode, max_age;
    StsPolicy policy;
    while (!body.empty()) {
        const auto nl = body.find('\n');
        auto line = body.substr(0, nl);
        body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos)
            return {.error = "a line without ':': '" + std::string(line.substr(0, 64)) + "'"};
        const auto key = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (core::ascii_iequals(key, "version")) {
            if (!version) version = value;
        } else if (core::ascii_iequals(key, "mode")) {
            if (!mode) mode = value;
        } else if (core::ascii_iequals(key, "max_age")) {
            if (!max_age) max_age = value;
        } else if (core::ascii_iequals(key, "mx")) {
            if (!valid_mx_pattern(value))
                return {.error = "mx: not a host name or pattern: '" +
                                 std::string(value.substr(0, 64)) + "'"};
            policy.mx.push_back(host_key(value));
        }
    }
    if (!version || *version != "STSv1") return {.error = "version: not STSv1"};
    if (!mode) return {.error = "no mode"};
    if (core::ascii_iequals(*mode, "enforce"))
        policy.mode = StsMode::enforce;
    else if (core::ascii_iequals(*mode, "testing"))
        policy.mode = StsMode::testing;
    else if (core::ascii_iequals(*mode, "none"))
        policy.mode = StsMode::none;
    else
        return {.error = "mode: unknown value '" + std::string(mode->substr(0, 32)) + "'"};
    if (!max_age) return {.error = "no max_age"};
    // max_age = 1*10DIGIT, at most the limit.
    std::int64_t age = 0;
    const auto* end = max_age->data() + max_age->size();
    const auto [ptr, ec] = std::from_chars(max_age->data(), end, age);
    if (max_age->empty() || max_age->size() > 10 || ec != std::errc{} || ptr != end || age < 0 ||
        age > kStsMaxAgeLimit)
        return {.error = "max_age: not a number of seconds up to 31557600"};
    policy.max_age_s = age;
    if (policy.mx.empty() && policy.mode != StsMode::none) return {.error = "no mx"};
    return {.policy = std::move(policy)};
}

bool mx_matches(std::string_view pattern, std::string_view host) {
    const std::string h = host_key(host);
    const std::string p = host_key(pattern);
    if (!p.starts_with("*.")) return !p.empty() && h == p;
    // "*.example.net": one label, then ".example.net".
    const std::string_view suffix = std::string_view(p).substr(1);  // ".example.net"
    if (h.size() <= suffix.size() || !std::string_view(h).ends_with(suffix)) return false;
    const std::string_view label(h.data(), h.size() - suffix.size());
    return !label.empty() && label.find('.') == std::string_view::npos;
}

bool mx_allowed(const StsPolicy& policy, std::string_view host) {
    for (const auto& p : policy.mx)
        if (mx_matches(p, host)) return true;
    return false;
}

std::string_view to_string(StsMode mode) {
    switch (mode) {
        case StsMode::enforce:
            return "enforce";
        case StsMode::testing:
            return "testing";
        case StsMode::none:
            break;
    }
    return "none";
}

}  // namespace posthorn::delivery
