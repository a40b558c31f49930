#include "app/ops_endpoints.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <array>
#include <fstream>

#include "api/keys.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/version.hpp"
#include "crypto/hash.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::app {
namespace {

constexpr std::string_view kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

// The process's own figures, as every Prometheus client library exports them.
void append_process(std::string& out) {
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) == 0) {
        const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        metrics::append_header(out, "process_cpu_seconds_total",
                               "Total user and system CPU time spent in seconds.", "counter");
        metrics::append_sample(out, "process_cpu_seconds_total", "", cpu);
    }
    // statm: size resident shared … in pages.
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    if (statm >> pages >> resident) {
        metrics::append_header(out, "process_resident_memory_bytes",
                               "Resident memory size in bytes.", "gauge");
        metrics::append_sample(
            out, "process_resident_memory_bytes", "",
            static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)));
    }
    if (DIR* d = ::opendir("/proc/self/fd")) {
        long n = 0;
        while (const dirent* e = ::readdir(d))  // NOLINT(concurrency-mt-unsafe): own stream
            if (e->d_name[0] != '.') ++n;
        ::closedir(d);
        metrics::append_header(out, "process_open_fds", "Number of open file descriptors.",
                               "gauge");
        metrics::append_sample(out, "process_open_fds", "", static_cast<double>(n - 1));  // ours
    }
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
        metrics::append_header(out, "process_max_fds", "Maximum number of open file descriptors.",
                               "gauge");
        metrics::append_sample(out, "process_max_fds", "", static_cast<double>(lim.rlim_cur));
    }
}

http::Response forbidden() {
    return http::error_response(403, "FORBIDDEN",
                                "GET /metrics is open to metrics.trusted_networks, or with "
                                "Authorization: Bearer <metrics.token>");
}

}  // namespace

OpsEndpoints::OpsEndpoints(OpsOptions options, OpsStores stores, const core::Clock& clock,
                           const Readiness& readiness)
    : options_(std::move(options)), stores_(stores), clock_(clock), readiness_(readiness) {}

bool OpsEndpoints::owns(std::string_view path) noexcept {
    return path == "/metrics" || path == "/readyz";
}

asio::awaitable<http::Response> OpsEndpoints::handle(http::Request req) {
    if (req.method != "GET" && req.method != "HEAD") {
        auto res = http::error_response(405, "METHOD_NOT_ALLOWED", "use GET " + req.path);
        res.headers.emplace_back("Allow", "GET, HEAD");
        co_return res;
    }
    if (req.path == "/readyz") co_return ready();
    co_return co_await metrics(req);
}

http::Response OpsEndpoints::ready() const {
    switch (readiness_.state()) {
        case Readiness::State::starting:
            return {.status = 503, .body = R"({"status":"starting"})"};
        case Readiness::State::draining:
            return {.status = 503, .body = R"({"status":"draining"})"};
        case Readiness::State::serving:
            break;
    }
    if (!stores_.health.reachable())
        return {.status = 503, .body = R"({"status":"store_unavailable"})"};
    return {.status = 200, .body = R"({"status":"ready"})"};
}

bool OpsEndpoints::may_scrape(const http::Request& req) const {
    if (!options_.token.empty()) {
        const auto auth = req.header("authorization");
        const auto token = auth ? api::bearer_token(*auth) : std::nullopt;
        if (token && crypto::equal_ct(*token, options_.token)) return true;
    }
    error_code ec;
    const auto ip = asio::ip::make_address(req.remote_ip, ec);
    if (ec) return false;
    for (const auto& n : options_.trusted)
        if (n.contains(ip)) return true;
    return false;
}

asio::awaitable<http::Response> OpsEndpoints::metrics(const http::Request& req) {
    if (!options_.metrics_enabled)
        co_return http::error_response(404, "NOT_FOUND",
                                       "no route for /metrics (metrics.enabled is false)");
    if (!may_scrape(req)) co_return forbidden();
    std::string out;
    out.reserve(16 * 1024);
    metrics::append_header(out, "posthorn_build_info", "The version of this posthorn.", "gauge");
    metrics::append_sample(out, "posthorn_build_info",
                           "version=\"" + metrics::escape_label(core::version()) + "\"", 1);
    metrics::render_all(out);

    // Read from the store at each scrape: every node of a shared store shows the same
    // figures (aggregate them with max(), not sum()).
    const auto now = clock_.now_ms();
    auto groups = co_await stores_.queue.queue_summary({}, now);
    if (groups) {
        std::array<std::int64_t, domain::kQueueStateNames.size()> by_state{};
        UnixMs oldest = now;
        for (const auto& g : *groups) {
            by_state[static_cast<std::size_t>(g.state)] += g.recipients;
            oldest = std::min(oldest, g.oldest_queued_at);
        }
        metrics::append_header(out, "posthorn_queue_recipients",
                               "Recipients still to be delivered, every account's, by state.",
                               "gauge");
        for (std::size_t i = 0; i < by_state.size(); ++i)
            metrics::append_sample(out, "posthorn_queue_recipients",
                                   "state=\"" + std::string(domain::kQueueStateNames[i]) + "\"",
                                   static_cast<double>(by_state[i]));
        metrics::append_header(out, "posthorn_queue_oldest_age_seconds",
                               "How long the oldest recipient still to be delivered has waited "
                               "since its email was accepted (0: the queue is empty).",
                               "gauge");
        metrics::append_sample(out, "posthorn_queue_oldest_age_seconds", "",
                               static_cast<double>(std::max<UnixMs>(0, now - oldest)) / 1000.0);
    } else {
        log::warn("metrics: reading the queue: {}", groups.error().message());
    }
    auto backlog = co_await stores_.webhooks.webhook_backlog();
    if (backlog) {
        metrics::append_header(out, "posthorn_webhook_backlog",
                               "Webhook deliveries pending (due or waiting for a retry).", "gauge");
        metrics::append_sample(out, "posthorn_webhook_backlog", "", static_cast<double>(*backlog));
    } else {
        log::warn("metrics: reading the webhook backlog: {}", backlog.error().message());
    }
    append_process(out);
    co_return http::Response{
        .status = 200, .body = std::move(out), .content_type = std::string(kTextFormat)};
}

}  // namespace posthorn::app
