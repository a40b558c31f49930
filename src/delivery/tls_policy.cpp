#include "delivery/tls_policy.hpp"

#include "dns/errors.hpp"

namespace posthorn::delivery {

std::string_view to_string(TlsPolicy policy) {
    switch (policy) {
        case TlsPolicy::none:
            return "none";
        case TlsPolicy::opportunistic:
            return "opportunistic";
        case TlsPolicy::required:
            return "required";
        case TlsPolicy::verify:
            return "verify";
        case TlsPolicy::mta_sts:
            return "mta-sts";
        case TlsPolicy::dane:
            return "dane";
    }
    return "none";
}

Dane dane_of(const Result<dns::TlsaAnswer>& answer) {
    if (answer) {
        if (!answer->authenticated || answer->records.empty()) return {};
        return {.state = Dane::State::secure, .records = answer->records};
    }
    const auto& ec = answer.error();
    if (ec == dns::errc::servfail || ec == dns::errc::timeout)
        return {.state = Dane::State::failed, .error = ec.message()};
    return {};
}

std::string HostTls::key() const {
    std::string k(to_string(policy));
    if (require_verified) k += "!";
    return k;
}

namespace {

HostTls from_setting(TlsSetting setting, const std::string& host) {
    switch (setting) {
        case TlsSetting::off:
            return {.policy = TlsPolicy::none, .mode = smtp::TlsMode::off};
        case TlsSetting::opportunistic:
            return {.policy = TlsPolicy::opportunistic,
                    .mode = smtp::TlsMode::opportunistic,
                    .plain_fallback = true};
        case TlsSetting::required:
            return {.policy = TlsPolicy::required, .mode = smtp::TlsMode::required};
        case TlsSetting::verify:
            break;
    }
    return {.policy = TlsPolicy::verify,
            .mode = smtp::TlsMode::required,
            .check = crypto::PeerCheck{.names = {host}},
            .require_verified = true};
}

crypto::Tlsa to_crypto(const dns::TlsaRecord& r) {
    return {
        .usage = r.usage, .selector = r.selector, .matching_type = r.matching_type, .data = r.data};
}

}  // namespace

HostTls host_tls(TlsSetting setting, const std::optional<StsPolicy>& sts, const Dane& dane,
                 const std::string& host) {
    // The operator turned TLS off: no policy applies (docs/delivery.md).
    if (setting == TlsSetting::off) return from_setting(setting, host);
    if (dane.state == Dane::State::failed)
        return {.policy = TlsPolicy::dane,
                .mode = smtp::TlsMode::required,
                .refuse = "the TLSA look-up of " + host + " failed (" + dane.error +
                          "): DANE cannot be ruled out (RFC 7672 §2.2)"};
    if (dane.state == Dane::State::secure) {
        // RFC 7672 §3.1.3: PKIX-TA(0) and PKIX-EE(1) are unusable for SMTP. With no usable
        // record left, TLS is still mandatory, only not authenticated.
        crypto::PeerCheck check{.dane_name = host};
        for (const auto& r : dane.records)
            if (r.usage == 2 || r.usage == 3) check.tlsa.push_back(to_crypto(r));
        HostTls t{.policy = TlsPolicy::dane, .mode = smtp::TlsMode::required};
        if (!check.tlsa.empty()) {
            t.check = std::move(check);
            t.require_verified = true;
        }
        return t;
    }
    if (sts && sts->mode == StsMode::enforce) {
        // RFC 8461 §4.1, §5: only to a listed MX, and only with a certificate valid for it.
        if (!mx_allowed(*sts, host))
            return {.policy = TlsPolicy::mta_sts,
                    .mode = smtp::TlsMode::required,
                    .refuse = host + " is not an MX host of the domain's MTA-STS policy"};
        return {.policy = TlsPolicy::mta_sts,
                .mode = smtp::TlsMode::required,
                .check = crypto::PeerCheck{.names = {host}},
                .require_verified = true};
    }
    if (sts && sts->mode == StsMode::testing) {
        // RFC 8461 §5: deliver as without a policy, and report what would have failed.
        auto t = from_setting(setting, host);
        t.policy = TlsPolicy::mta_sts;
        if (t.mode == smtp::TlsMode::off) t.mode = smtp::TlsMode::opportunistic;
        if (!t.check) t.check = crypto::PeerCheck{.names = {host}};
        if (!mx_allowed(*sts, host))
            t.report = host + " is not an MX host of the domain's MTA-STS policy (testing)";
        return t;
    }
    return from_setting(setting, host);
}

}  // namespace posthorn::delivery
