#include "domain/sending_domain.hpp"

#include <cctype>

#include "core/text.hpp"

namespace posthorn::domain {

SendCheck may_send_from(DomainStatus status, bool sending) {
    if (status != DomainStatus::verified) return SendCheck::not_verified;
    return sending ? SendCheck::ok : SendCheck::sending_disabled;
}

bool receives_mail(DomainStatus status, bool inbound) {
    return status == DomainStatus::verified && inbound;
}

VerificationOutcome verify(const Verification& v) {
    VerificationOutcome out;
    if (v.verified == v.required) {
        out.status = DomainStatus::verified;
    } else if (v.background && v.before == DomainStatus::verified) {
        out.status = DomainStatus::failed;  // records a verified domain had are gone
    } else if (v.verified == 0) {
        out.status = DomainStatus::failed;
    } else {
        out.status = DomainStatus::pending;
        if (v.now - v.first_verify_at.value_or(v.now) >= v.give_up_after_ms)
            out.status = DomainStatus::failed;
    }
    if (out.status == DomainStatus::pending) out.next_check_at = v.now + v.pending_recheck_ms;
    if (out.status == DomainStatus::verified) out.next_check_at = v.now + v.verified_recheck_ms;
    out.first_verify_at = v.first_verify_at.value_or(v.now);
    out.verified_at = v.verified_at;
    if (out.status == DomainStatus::verified && !out.verified_at) out.verified_at = v.now;
    if (out.status != v.before) {
        if (out.status == DomainStatus::verified) out.event = EventKind::domain_verified;
        if (out.status == DomainStatus::failed) out.event = EventKind::domain_failed;
    }
    return out;
}

std::string rotation_selector(std::string_view active) { return active == "ph1" ? "ph2" : "ph1"; }

namespace {

std::string without_space(std::string_view s) {
    std::string out;
    for (char c : s)
        if (std::isspace(static_cast<unsigned char>(c)) == 0) out.push_back(c);
    return out;
}

// The value of tag `name` in a tag=value list (RFC 6376 §3.2), whitespace removed; none
// when absent.
std::optional<std::string> tag_value(std::string_view record, std::string_view name) {
    std::size_t pos = 0;
    while (pos <= record.size()) {
        const auto end = std::min(record.find(';', pos), record.size());
        const auto spec = record.substr(pos, end - pos);
        const auto eq = spec.find('=');
        if (eq != std::string_view::npos && without_space(spec.substr(0, eq)) == name)
            return without_space(spec.substr(eq + 1));
        pos = end + 1;
    }
    return std::nullopt;
}

}  // namespace

bool serves_dkim_key(const std::vector<std::string>& txts, std::string_view public_key) {
    const auto want = without_space(public_key);
    if (want.empty()) return false;
    for (const auto& t : txts) {
        const auto v = tag_value(t, "v");
        if (v && *v != "DKIM1") continue;  // v=, when present, must be DKIM1 and first
        const auto p = tag_value(t, "p");
        if (p && *p == want) return true;
    }
    return false;
}

std::string tracking_base(std::string_view public_url, std::string_view label,
                          std::string_view domain, bool tracking_verified) {
    if (!tracking_verified) return std::string(public_url);
    const auto colon = public_url.find("://");
    const auto scheme = colon == std::string_view::npos ? "https" : public_url.substr(0, colon);
    return std::string(scheme) + "://" + std::string(label) + "." + std::string(domain);
}

std::optional<std::pair<std::string, std::string>> tracking_host_parts(std::string_view host) {
    if (host.empty() || host.front() == '[') return std::nullopt;  // an IPv6 literal
    if (const auto colon = host.rfind(':'); colon != std::string_view::npos)
        host = host.substr(0, colon);
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    std::string lower;
    bool all_digits_and_dots = true;
    for (char c : host) {
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        if (std::isdigit(static_cast<unsigned char>(c)) == 0 && c != '.')
            all_digits_and_dots = false;
    }
    const auto dot = lower.find('.');
    if (all_digits_and_dots || dot == std::string::npos || dot == 0 ||
        lower.find('.', dot + 1) == std::string::npos)
        return std::nullopt;
    return std::pair{lower.substr(0, dot), lower.substr(dot + 1)};
}

std::optional<UnixMs> rotate_keys_made_before(int rotate_days, UnixMs now) {
    if (rotate_days <= 0) return std::nullopt;
    return now - static_cast<UnixMs>(rotate_days) * 86'400'000;
}

std::optional<std::string> bad_host_label(std::string_view label, std::string_view domain) {
    constexpr std::size_t kMaxLabel = 63, kMaxName = 253;
    if (label.empty() || label.size() > kMaxLabel) return "must be 1 to 63 characters";
    for (char c : label)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return "only lower-case letters, digits and hyphens are allowed (one DNS label)";
    if (label.front() == '-' || label.back() == '-') return "must not begin or end with a hyphen";
    if (!domain.empty() && label.size() + 1 + domain.size() > kMaxName)
        return "the host <label>." + std::string(domain) + " would be longer than 253 characters";
    return std::nullopt;
}

std::string envelope_domain(std::string_view domain, std::string_view label,
                            bool return_path_verified) {
    if (!return_path_verified || domain.empty() || label.empty()) return {};
    return std::string(label) + "." + std::string(domain);
}

bool bounce_host_matches(std::string_view host, std::string_view email_return_path,
                         std::string_view smtp_hostname) {
    if (core::ascii_iequals(host, smtp_hostname)) return true;
    return !email_return_path.empty() && core::ascii_iequals(host, email_return_path);
}

}  // namespace posthorn::domain
