// app/ops_endpoints.hpp — the operator's endpoints on the HTTP listener, beside the API:
// GET /metrics (the Prometheus text format: the counters of core/metrics, and gauges read
// at scrape time — the queue, the webhook backlog, the process) for clients of
// metrics.trusted_networks or presenting `Authorization: Bearer <metrics.token>` (anyone
// else: 403), and GET /readyz (200 while this node takes traffic; 503 while it starts,
// drains, or cannot reach its store). /healthz stays the API's liveness check.
//
// The gauges read from the store (the queue by state, its oldest recipient's age, the
// webhook backlog) are the store's, not this node's: every node of a shared store shows
// the same figures.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "core/client_limits.hpp"
#include "core/clock.hpp"
#include "http/message.hpp"
#include "store/store.hpp"

namespace posthorn::app {

// Whether the node takes traffic: starting until every listener is up, then serving, then
// draining from the first SIGTERM on.
class Readiness {
  public:
    enum class State { starting, serving, draining };
    void set(State s) noexcept { state_.store(s, std::memory_order_relaxed); }
    State state() const noexcept { return state_.load(std::memory_order_relaxed); }

  private:
    std::atomic<State> state_{State::starting};
};

struct OpsOptions {
    bool metrics_enabled = true;         // false: /metrics is 404
    std::vector<core::Network> trusted;  // metrics.trusted_networks
    std::string token;                   // metrics.token; "": none opens /metrics
};

struct OpsStores {
    const store::StoreHealth& health;
    store::WebhookStore& webhooks;
    store::QueueViewStore& queue;
};

class OpsEndpoints {
  public:
    OpsEndpoints(OpsOptions options, OpsStores stores, const core::Clock& clock,
                 const Readiness& readiness);
    // Whether `path` is one of these endpoints.
    static bool owns(std::string_view path) noexcept;
    asio::awaitable<http::Response> handle(http::Request req);

  private:
    asio::awaitable<http::Response> metrics(const http::Request& req);
    http::Response ready() const;
    bool may_scrape(const http::Request& req) const;

    OpsOptions options_;
    OpsStores stores_;
    const core::Clock& clock_;
    const Readiness& readiness_;
};

}  // namespace posthorn::app
