// webhooks/dispatcher.hpp — delivers the event outbox to the webhooks (DESIGN §8).
//
// Events wait in the store's outbox. The dispatcher routes them: the domain's rule
// (domain/events.hpp, webhooks_for) names the webhooks each goes to, and the store writes
// one pending delivery for each and marks the event routed, in one transaction
// (WebhookStore::route_events). It claims due deliveries under a lease, posts each one —
// body `{type, created_at, data}` (domain::event_body), signed per Standard Webhooks
// (webhooks/signature.hpp) — through the HttpClient, and records every attempt. A 2xx ends a
// delivery; anything else is retried after retry_schedule_s[n] and given up after the last. A crash
// mid-attempt leaves the lease, lifted at the next start: the event is sent again (at least once;
// the webhook-id is the event id, stable across retries, so that receivers can drop duplicates).
// Runs on one executor.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/clock.hpp"
#include "store/store.hpp"
#include "webhooks/http_client.hpp"

namespace posthorn::webhooks {

struct Options {
    std::vector<int> retry_schedule_s{10, 60, 600, 3600, 21600, 86400};
    int max_in_flight = 64;                // attempts at once
    std::chrono::milliseconds poll{1000};  // how often due deliveries are looked for
    std::chrono::seconds lease{120};       // longer than an attempt can last
    std::string node_id = "local";
};

class Dispatcher {
  public:
    Dispatcher(asio::any_io_executor ex, store::WebhookStore& store, const core::Clock& clock,
               HttpClient& client, Options options);
    ~Dispatcher();

    asio::awaitable<void> run();
    // New events are waiting: route them now rather than at the next poll. Any thread.
    void wake();
    // Attempts in flight finish; no new ones start. Any thread.
    void stop();
    int in_flight() const;  // any thread

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::webhooks
