#include "domain/sending_domain.hpp"

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

std::optional<std::string> bad_return_path_label(std::string_view label, std::string_view domain) {
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
