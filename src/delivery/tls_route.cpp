#include "delivery/tls_route.hpp"

#include <map>

#include "core/log.hpp"

namespace posthorn::delivery {

asio::awaitable<std::vector<Target>> with_tls(dns::Resolver& resolver, TlsInputs in,
                                              std::string domain, std::vector<Target> targets) {
    std::optional<StsPolicy> sts;
    if (!in.relay && in.setting != TlsSetting::off && in.sts)
        sts = co_await in.sts->policy_for(domain);
    // One look-up per host (a host has several addresses, each a target).
    std::map<std::string, HostTls> of_host;
    for (auto& t : targets) {
        auto it = of_host.find(t.host);
        if (it == of_host.end()) {
            Dane dane;
            if (!in.relay && in.setting != TlsSetting::off && in.dane) {
                auto answer =
                    co_await resolver.tlsa("_" + std::to_string(in.port) + "._tcp." + t.host);
                dane = dane_of(answer);
            }
            it = of_host.emplace(t.host, host_tls(in.setting, sts, dane, t.host)).first;
            if (!it->second.refuse.empty())
                log::warn("delivery: {} for {}: {}", t.host, domain, it->second.refuse);
        }
        t.tls = it->second;
    }
    co_return targets;
}

domain::TlsOutcome session_tls(const HostTls& tls, const smtp::Client& client, bool plain_retry) {
    domain::TlsOutcome out{.policy = std::string(to_string(tls.policy))};
    if (plain_retry) {
        out.failure = "the TLS handshake failed; delivered in plain text";
    } else if (client.tls_active() && client.peer()) {
        const auto& peer = *client.peer();
        out.version = peer.version;
        out.verified = tls.check && peer.verified;
        if (tls.check && !peer.verified) out.failure = "certificate: " + peer.failure;
    } else if (tls.check) {
        // Only a policy that checks says so (MTA-STS testing); plain text is no failure of
        // opportunistic TLS, and `version` null says it anyway.
        out.failure = "the server does not offer STARTTLS";
    }
    if (!tls.report.empty()) out.failure += (out.failure.empty() ? "" : "; ") + tls.report;
    return out;
}

domain::TlsOutcome failed_tls(const HostTls& tls, const smtp::Client* client, std::string why) {
    domain::TlsOutcome out{.policy = std::string(to_string(tls.policy)), .failure = std::move(why)};
    if (client && client->peer()) out.version = client->peer()->version;
    return out;
}

}  // namespace posthorn::delivery
