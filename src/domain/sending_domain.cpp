#include "domain/sending_domain.hpp"

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

}  // namespace posthorn::domain
