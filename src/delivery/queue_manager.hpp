// delivery/queue_manager.hpp — the scheduler over the durable queue (DESIGN §7). It claims
// due recipients under a lease, routes their domains (delivery/router.hpp; a route is
// kept a minute), groups them by destination (the MX hosts a route goes to, so domains
// of one provider share it), opens SMTP sessions (several per busy destination, up to the
// limits) and reuses each session for message after message, signs every message with the
// sender domain's active DKIM key, and writes every outcome back before it acknowledges
// anything: what an attempt came to (delivery/attempt.hpp) is decided by the delivery
// policy (domain/delivery_policy.hpp) and applied to the email by its rules
// (domain/email_rules.hpp), which the store writes in one transaction. A crash between a remote 250
// and that write sends the message again after the restart: at least once. Runs on one executor;
// wake() and stop() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/clock.hpp"
#include "delivery/router.hpp"
#include "delivery/sts_policies.hpp"
#include "delivery/tls_policy.hpp"
#include "dns/resolver.hpp"
#include "smtp/client.hpp"
#include "store/store.hpp"

namespace posthorn::delivery {

struct Options {
    std::string hostname = "localhost";  // EHLO name and the host of the return path
    std::uint16_t mx_port = 25;
    std::optional<Relay> relay;
    bool allow_private_targets = false;          // delivery.allow_private_targets (router.hpp)
    TlsSetting tls = TlsSetting::opportunistic;  // delivery.tls (docs/delivery.md, TLS policies)
    std::string tls_ca_file;                     // delivery.tls_ca_file; "": the system's CAs
    // MTA-STS (RFC 8461) policies are fetched through it; none: MTA-STS is not honoured.
    PolicyFetcher* policy_fetcher = nullptr;
    std::uint16_t mta_sts_port = 443;  // delivery.mta_sts_port (tests only)
    bool dane = false;  // DANE (RFC 7672): the resolver is a validating one of ours (dns.servers)
    std::vector<int> retry_schedule_s{60, 300, 1800, 7200, 21600};
    std::chrono::seconds connect_timeout{30};
    std::chrono::seconds command_timeout{300};
    int max_connections = 64;            // sessions open at once, in all
    int max_connections_per_domain = 8;  // sessions open at once to one destination
    int batch = 512;                     // recipients claimed at a time
    int max_rcpt_per_transaction = 100;  // RFC 5321 §4.5.3.1.8's minimum a server must take
    std::chrono::seconds lease{300};     // delivery.lease_s
    std::string master_key;              // unseals the DKIM keys
    std::string node_id = "local";       // owns this node's leases (server.node_id)
};

// Counters for a later /metrics endpoint (monotonic since start).
struct Counters {
    std::atomic<std::uint64_t> delivered{0}, deferred{0}, bounced{0}, failed{0}, blocked{0};
    std::atomic<std::uint64_t> sessions{0}, transactions{0}, connect_failures{0};
};

class QueueManager {
  public:
    // The stores it uses: the queue's claims and leases, the emails (their messages, and
    // the outcomes written to them), the domains (their DKIM keys).
    struct Stores {
        store::QueueStore& queue;
        store::EmailStore& emails;
        store::DomainStore& domains;
    };
    QueueManager(asio::any_io_executor ex, asio::any_io_executor blocking, Stores stores,
                 dns::Resolver& resolver, const core::Clock& clock, Options options);
    ~QueueManager();

    asio::awaitable<void> run();
    void wake();
    // After stop(), sessions finish the transaction in hand and take no more jobs.
    void stop();
    int jobs_in_hand() const;  // taken by a session, outcome not yet recorded; any thread
    const Counters& counters() const;

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::delivery
