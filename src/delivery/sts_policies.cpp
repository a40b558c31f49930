#include "delivery/sts_policies.hpp"

#include "core/log.hpp"
#include "core/text.hpp"
#include "dns/errors.hpp"

namespace posthorn::delivery {

StsPolicies::StsPolicies(dns::Resolver& resolver, PolicyFetcher& fetcher, const core::Clock& clock,
                         std::uint16_t port)
    : resolver_(resolver), fetcher_(fetcher), clock_(clock), port_(port) {}

std::optional<StsPolicy> StsPolicies::cached(const std::string& domain, UnixMs now) {
    auto it = cache_.find(domain);
    if (it == cache_.end()) return std::nullopt;
    if (it->second.until <= now) {
        cache_.erase(it);
        return std::nullopt;
    }
    if (it->second.policy.mode == StsMode::none) return std::nullopt;
    return it->second.policy;
}

asio::awaitable<std::optional<StsPolicy>> StsPolicies::policy_for(std::string domain) {
    domain = core::ascii_lower(domain);
    const auto now = clock_.now_ms();
    auto txt = co_await resolver_.txt("_mta-sts." + domain);
    std::optional<std::string> id;
    if (txt) id = sts_record_id(*txt);
    if (!id) {
        // §5.1: no (valid) record: the cached policy, if any, still holds.
        if (!txt && !dns::is_not_found(txt.error()))
            log::info("delivery: MTA-STS record of {}: {}", domain, txt.error().message());
        co_return cached(domain, now);
    }
    if (auto it = cache_.find(domain);
        it != cache_.end() && it->second.id == *id && it->second.until > now)
        co_return cached(domain, now);
    auto fetched = co_await fetch(domain, *id);
    if (fetched) co_return fetched->mode == StsMode::none ? std::nullopt : fetched;
    co_return cached(domain, clock_.now_ms());  // §5.1: a failed refresh keeps the old one
}

asio::awaitable<std::optional<StsPolicy>> StsPolicies::fetch(std::string domain, std::string id) {
    const std::string host = "mta-sts." + domain;
    auto addresses = co_await resolver_.addresses(host);
    if (!addresses) {
        log::warn("delivery: MTA-STS policy of {}: {}: {}", domain, host,
                  addresses.error().message());
        co_return std::nullopt;
    }
    auto r = co_await fetcher_.fetch(host, port_, std::move(*addresses));
    std::string why;
    if (!r.status)
        why = r.error;
    else if (*r.status != 200)  // §3.3: redirects are not followed, anything but 200 fails
        why = "HTTP status " + std::to_string(*r.status);
    else if (!core::ascii_lower(r.content_type).starts_with("text/plain"))  // §3.2
        why = "the media type is '" + r.content_type + "', not text/plain";
    StsParse parsed;
    if (why.empty()) {
        parsed = parse_sts_policy(r.body);
        if (!parsed.policy) why = "the policy does not parse: " + parsed.error;
    }
    if (!why.empty()) {
        log::warn("delivery: MTA-STS policy of {} (id {}): {}", domain, id, why);
        co_return std::nullopt;
    }
    log::info("delivery: MTA-STS policy of {} (id {}): mode {}, max_age {} s", domain, id,
              to_string(parsed.policy->mode), parsed.policy->max_age_s);
    cache_[domain] = Cached{.policy = *parsed.policy,
                            .id = std::move(id),
                            .until = clock_.now_ms() + parsed.policy->max_age_s * 1000};
    co_return parsed.policy;
}

}  // namespace posthorn::delivery
