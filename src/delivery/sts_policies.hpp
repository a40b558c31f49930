// delivery/sts_policies.hpp — the MTA-STS policies of recipient domains (RFC 8461 §3, §5.1):
// looks up `_mta-sts.<domain>` TXT, fetches https://mta-sts.<domain>/.well-known/mta-sts.txt
// through a PolicyFetcher when the record's id is not the cached policy's, and keeps each
// policy in memory for its max_age (so a restart fetches again; nodes do not share them).
// A domain whose record went away keeps its unexpired cached policy (§5.1: an attacker who
// strips the TXT record must not turn enforcement off); a fetch that fails falls back on the
// cached policy too, or on none.
//
// Not thread-safe: call from one executor (the delivery's).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "core/asio.hpp"
#include "core/clock.hpp"
#include "delivery/mta_sts.hpp"
#include "dns/resolver.hpp"

namespace posthorn::delivery {

struct FetchResult {
    std::optional<int> status;  // the HTTP status; none when no answer came
    std::string content_type;
    std::string body;
    std::string error;  // why there was no answer
};

// Fetches a policy over HTTPS with the certificate verified for the host (§3.3), no
// redirects followed; `addresses` are where `host` resolved (so the fetch uses our DNS).
// A seam (CONVENTIONS §9): app wires libcurl's client in; tests give a fake.
class PolicyFetcher {
  public:
    virtual ~PolicyFetcher() = default;
    virtual asio::awaitable<FetchResult> fetch(std::string host, std::uint16_t port,
                                               std::vector<asio::ip::address> addresses) = 0;
};

class StsPolicies {
  public:
    // `port`: delivery.mta_sts_port (443 but in tests).
    StsPolicies(dns::Resolver& resolver, PolicyFetcher& fetcher, const core::Clock& clock,
                std::uint16_t port = 443);

    // The domain's policy now; nullopt when it has none (or mode none).
    asio::awaitable<std::optional<StsPolicy>> policy_for(std::string domain);

  private:
    struct Cached {
        StsPolicy policy;
        std::string id;
        UnixMs until = 0;
    };
    asio::awaitable<std::optional<StsPolicy>> fetch(std::string domain, std::string id);
    std::optional<StsPolicy> cached(const std::string& domain, UnixMs now);

    dns::Resolver& resolver_;
    PolicyFetcher& fetcher_;
    const core::Clock& clock_;
    std::uint16_t port_;
    std::map<std::string, Cached> cache_;
};

}  // namespace posthorn::delivery
