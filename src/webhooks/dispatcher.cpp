#include "webhooks/dispatcher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>

#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/time.hpp"
#include "domain/events.hpp"
#include "webhooks/signature.hpp"

namespace posthorn::webhooks {

namespace {
constexpr int kRouteBatch = 512;  // events routed in one transaction

metrics::Counter deliveries_total("posthorn_webhook_deliveries_total",
                                  "Webhook calls, by whether the receiver answered 2xx (ok).",
                                  metrics::one_label("result", {"ok", "failed"}));
}  // namespace

struct Dispatcher::Impl : std::enable_shared_from_this<Impl> {
    Impl(asio::any_io_executor e, store::WebhookStore& s, const core::Clock& c, HttpClient& h,
         Options o)
        : ex(std::move(e)), store(s), clock(c), client(h), options(std::move(o)), timer(ex) {}

    asio::awaitable<void> run();
    asio::awaitable<void> attempt(store::DueWebhookDelivery d);

    asio::awaitable<void> route();

    asio::any_io_executor ex;
    store::WebhookStore& store;
    const core::Clock& clock;
    HttpClient& client;
    Options options;
    asio::steady_timer timer;
    std::atomic<bool> stopping{false};
    std::atomic<int> in_flight{0};
};

asio::awaitable<void> Dispatcher::Impl::attempt(store::DueWebhookDelivery d) {
    auto self = shared_from_this();
    const auto body = domain::event_body(d.event_kind, d.event_created_at, d.data_json);
    const auto sent_at = clock.now_ms();
    const auto timestamp = sent_at / 1000;
    // During a rotation's overlap the replaced secret signs too: Standard Webhooks takes
    // several space-separated signatures, and a receiver accepts the call if one matches.
    auto signature = sign(d.secret, d.event_id, timestamp, body);
    if (!d.previous_secret.empty() && d.previous_secret_until && sent_at < *d.previous_secret_until)
        signature += " " + sign(d.previous_secret, d.event_id, timestamp, body);
    HttpRequest req{.url = d.url,
                    .headers = {{"Content-Type", "application/json"},
                                {"webhook-id", d.event_id},
                                {"webhook-timestamp", std::to_string(timestamp)},
                                {"webhook-signature", std::move(signature)}},
                    .body = body};
    auto answer = co_await client.post(std::move(req));
    const auto now = clock.now_ms();
    const int n = d.attempts + 1;
    store::WebhookAttemptResult r{.delivery_id = d.delivery_id,
                                  .attempt = n,
                                  .status_code = answer.status,
                                  .duration_ms = answer.duration_ms,
                                  .at = now};
    if (!answer.error.empty()) r.error = answer.error;
    r.delivered = answer.status && *answer.status >= 200 && *answer.status < 300;
    const auto& schedule = options.retry_schedule_s;
    if (!r.delivered && static_cast<std::size_t>(n) <= schedule.size())
        r.next_attempt_at = now + static_cast<UnixMs>(schedule[n - 1]) * 1000;
    deliveries_total.inc(r.delivered ? 0 : 1);
    // The URL is not logged: its query may hold the receiver's secret.
    if (!r.delivered)
        log::event(log::Level::warn, "webhook delivery failed",
                   {{"webhook_id", d.webhook_id},
                    {"event_id", d.event_id},
                    {"attempt", n},
                    {"http_status", answer.status.value_or(0)},
                    {"error", answer.error},
                    {"duration_ms", answer.duration_ms},
                    {"gives_up", !r.next_attempt_at.has_value()}});
    if (auto w = co_await store.record_webhook_attempt(std::move(r)); !w)
        log::error("webhooks: recording an attempt of {}: {}", d.event_id, w.error().message());
    --in_flight;
    timer.cancel();  // a slot is free
}

// Gives the events waiting in the outbox their deliveries, a batch at a time.
asio::awaitable<void> Dispatcher::Impl::route() {
    for (;;) {
        store::EventRouter router = [](const store::Event& e,
                                       const std::vector<store::Webhook>& all) {
            return domain::webhooks_for(e, all);
        };
        auto n = co_await store.route_events(kRouteBatch, std::move(router));
        if (!n) {
            log::error("webhooks: routing events: {}", n.error().message());
            co_return;
        }
        if (*n < kRouteBatch) co_return;
    }
}

asio::awaitable<void> Dispatcher::Impl::run() {
    auto self = shared_from_this();
    {
        auto owner = options.node_id;
        if (auto n = co_await store.release_webhook_leases(std::move(owner)); n && *n > 0)
            log::info("webhooks: lifted {} leases left by the last run of {}", *n, options.node_id);
    }
    while (!stopping) {
        co_await route();
        const int room = options.max_in_flight - in_flight;
        if (room > 0) {
            const auto now = clock.now_ms();
            const auto lease_until =
                now + std::chrono::duration_cast<std::chrono::milliseconds>(options.lease).count();
            auto owner = options.node_id;
            auto due =
                co_await store.claim_webhook_deliveries(now, room, std::move(owner), lease_until);
            if (!due) {
                log::error("webhooks: claiming due deliveries: {}", due.error().message());
            } else {
                for (auto& d : *due) {
                    ++in_flight;
                    asio::co_spawn(ex, attempt(std::move(d)), asio::detached);
                }
                // A full batch: there may be more due at once.
                if (static_cast<int>(due->size()) == room && in_flight < options.max_in_flight)
                    continue;
            }
        }
        if (stopping) break;
        timer.expires_after(options.poll);
        co_await timer.async_wait(use_nothrow_awaitable);
    }
}

Dispatcher::Dispatcher(asio::any_io_executor ex, store::WebhookStore& store,
                       const core::Clock& clock, HttpClient& client, Options options)
    : impl_(std::make_shared<Impl>(std::move(ex), store, clock, client, std::move(options))) {}

Dispatcher::~Dispatcher() = default;

asio::awaitable<void> Dispatcher::run() { return impl_->run(); }

void Dispatcher::wake() {
    asio::post(impl_->ex, [impl = impl_] { impl->timer.cancel(); });
}

void Dispatcher::stop() {
    impl_->stopping = true;
    asio::post(impl_->ex, [impl = impl_] { impl->timer.cancel(); });
}

int Dispatcher::in_flight() const { return impl_->in_flight; }

}  // namespace posthorn::webhooks
