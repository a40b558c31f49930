#include "app/serve.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>

#include <thread>

#include "api/v1.hpp"
#include "app/store_open.hpp"
#include "core/clock.hpp"
#include "core/io_pool.hpp"
#include "core/log.hpp"
#include "http/server.hpp"

namespace posthorn::app {
namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(30);
constexpr auto kRetentionEvery = std::chrono::hours(1);
constexpr std::int64_t kDayMs = 86'400'000;

// Deletes request-log entries older than retention.logs_days, at start and then hourly.
asio::awaitable<void> retention_loop(store::Store& store, const core::Clock& clock, int days) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        const auto cutoff = clock.now_ms() - days * kDayMs;
        if (auto n = co_await store.delete_logs_before(cutoff); !n)
            log::warn("log retention: {}", n.error().message());
        else if (*n > 0)
            log::info("log retention: deleted {} entries older than {} days", *n, days);
        timer.expires_after(kRetentionEvery);
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
    }
}

// On the first signal: stop accepting, let requests in flight finish (up to the grace
// period), then stop the main loop. serve() flushes the store afterwards.
asio::awaitable<void> shutdown_on_signal(asio::signal_set& signals, http::Server& server,
                                         asio::io_context& main) {
    auto [ec, sig] = co_await signals.async_wait(use_nothrow_awaitable);
    if (ec) co_return;
    log::info("signal {}: stopping (a second signal stops at once)", sig);
    // A second signal cuts the grace period short.
    signals.async_wait([&main](error_code again, int) {
        if (again) return;
        log::warn("second signal: stopping now");
        main.stop();
    });
    server.stop();
    asio::steady_timer poll(co_await asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + kShutdownGrace;
    while (server.connections() > 0 && std::chrono::steady_clock::now() < deadline) {
        poll.expires_after(std::chrono::milliseconds(20));
        co_await poll.async_wait(use_nothrow_awaitable);
    }
    if (server.connections() > 0)
        log::warn("{} connections still open after the grace period", server.connections());
    main.stop();
}

}  // namespace

int serve(const Config& config) {
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    auto store = open_store(config, cores);
    if (!store) return 1;

    core::SystemClock clock;
    api::V1 v1({.store = **store, .clock = clock});
    core::IoPool pool(cores);

    error_code ec;
    const auto address = asio::ip::make_address(config.http.listen.host, ec);
    http::Server server(
        pool,
        {.listen = {address, config.http.listen.port}, .body_limit = config.http_body_limit()},
        [&v1](http::Request req) { return v1.handle(std::move(req)); });
    auto bound = server.start();
    if (!bound) {
        log::error("cannot listen on {}: {}", config.http.listen.to_string(),
                   bound.error().message());
        (*store)->close();
        return 1;
    }
    pool.start();
    log::info("posthorn serving: http on {}:{} ({} threads), database {}",
              bound->address().to_string(), bound->port(), cores, config.database.url);

    asio::io_context main;
    asio::signal_set signals(main, SIGINT, SIGTERM);
    asio::co_spawn(main, shutdown_on_signal(signals, server, main), asio::detached);
    asio::co_spawn(main, retention_loop(**store, clock, config.retention.logs_days),
                   asio::detached);
    main.run();

    // The network is quiet: make every pending write durable, then stop the threads.
    (*store)->close();
    pool.stop();
    log::info("posthorn stopped");
    return 0;
}

}  // namespace posthorn::app
