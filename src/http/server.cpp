#include "http/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/write.hpp>

#include "core/accept.hpp"
#include "core/listen.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/proxy_protocol.hpp"
#include "core/text.hpp"
#include "http/detail/request_parser.hpp"

namespace posthorn::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

using detail::RequestParser;

namespace {

constexpr std::size_t kHeaderLimit = 16 * 1024;
constexpr std::chrono::seconds kLingerTime{2};

// The methods a request is counted under (posthorn_http_requests_total); any other is
// "other", as is an answer given before a method was read.
constexpr std::array<std::string_view, 8> kMethods{"GET",   "HEAD",   "POST",    "PUT",
                                                   "PATCH", "DELETE", "OPTIONS", "other"};
constexpr std::size_t kCodes = 500;  // 100-599

std::size_t method_index(std::string_view method) {
    const auto* it = std::find(kMethods.begin(), kMethods.end() - 1, method);
    return static_cast<std::size_t>(it - kMethods.begin());
}

metrics::NumberedCounter requests_total("posthorn_http_requests_total",
                                        "HTTP requests answered, by method and status code.",
                                        kMethods.size() * kCodes, [](std::size_t i) {
                                            return fmt::format(R"(method="{}",code="{}")",
                                                               kMethods[i / kCodes],
                                                               100 + i % kCodes);
                                        });
metrics::Histogram request_seconds(
    "posthorn_http_request_duration_seconds",
    "Time from a request's head read to its answer written, in seconds.",
    metrics::latency_bounds());

struct Conn {
    explicit Conn(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    // Written on the connection's own context; read also on the acceptor's, which picks
    // the connection to close when the listener is full.
    std::atomic<bool> busy{false};  // a request is read or answered
    std::atomic<std::chrono::steady_clock::time_point> idle_since{
        std::chrono::steady_clock::now()};  // when it last began to wait
    std::atomic<bool> closing{false};       // picked to make room
    std::string client;                     // core::client_of its address; set before it counts
    // The request being answered, for the metrics: its method (kMethods) and when its head
    // was read.
    std::size_t method = kMethods.size() - 1;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

bool is_parse_error(const error_code& ec) {
    return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
           ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

Response too_large(std::size_t limit) {
    return error_response(
        413, "PAYLOAD_TOO_LARGE",
        "request body is larger than the limit of " + std::to_string(limit) + " bytes");
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Impl> {
    Impl(core::IoPool& p, Options o, Handler h)
        : pool(p), options(std::move(o)), handler(std::move(h)), acceptor(p.context(0)) {}

    asio::awaitable<void> accept_loop();
    asio::awaitable<void> room();
    bool make_room();
    asio::awaitable<void> session(std::shared_ptr<Conn> conn);
    asio::awaitable<void> send(Conn& conn, Response res, unsigned version, bool keep_alive,
                               bool head = false);
    asio::awaitable<void> linger(Conn& conn);
    asio::awaitable<Admission> admit(Request& request);

    core::IoPool& pool;
    Options options;
    Handler handler;
    tcp::acceptor acceptor;
    std::atomic<bool> stopping{false};
    core::Connections<Conn> conns;
    core::ClientLimits limits{options.limits};
    std::chrono::steady_clock::time_point last_full_warning;  // the acceptor's context only
};

asio::awaitable<void> Server::Impl::accept_loop() {
    return core::accept_connections(
        shared_from_this(), acceptor, pool, stopping, conns, "http",
        [](tcp::socket socket) { return std::make_shared<Conn>(std::move(socket)); },
        [this](std::shared_ptr<Conn> conn) { return session(std::move(conn)); },
        [this] { return room(); });
}

// Returns once there is room for one more connection. While the listener is full and a
// newcomer waits in the kernel's listen queue, the connection that has waited longest for
// its next request is closed (an idle keep-alive connection, or one that has not finished
// sending its request's head: slowloris's), one at a time; when every connection is in the
// middle of a request, nothing is closed and the newcomer waits for one to end.
asio::awaitable<void> Server::Impl::room() {
    using namespace std::chrono_literals;
    if (conns.size() < options.limits.max_connections) co_return;
    auto [ec] = co_await acceptor.async_wait(tcp::acceptor::wait_read, use_nothrow_awaitable);
    if (ec) co_return;  // closed: the accept that follows says so
    while (!stopping && conns.size() >= options.limits.max_connections) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_full_warning >= 60s) {
            last_full_warning = now;
            log::warn(
                "http: {} connections open, the limit (http.max_connections): closing "
                "the longest idle ones to make room",
                conns.size());
        }
        const bool freeing = make_room();
        asio::steady_timer wait(acceptor.get_executor(), freeing ? 1ms : 10ms);
        co_await wait.async_wait(use_nothrow_awaitable);
    }
}

// Picks the connection idle the longest and has it closed on its own context, unless the
// ones already picked and still closing are enough. True while some are closing. A picked
// connection whose next request came first stays (busy, it no longer counts as closing;
// idle again, it can be picked again).
bool Server::Impl::make_room() {
    // The busiest client's longest idle connection, if it has one waiting; else anyone's.
    const auto busiest = limits.room_from(0);
    std::shared_ptr<Conn> oldest, theirs;
    std::size_t open = 0, picked = 0;
    conns.each([&](const std::shared_ptr<Conn>& c) {
        ++open;
        if (c->busy) return;
        if (c->closing) {
            ++picked;
            return;
        }
        const auto since = c->idle_since.load();
        if (!oldest || since < oldest->idle_since.load()) oldest = c;
        if (busiest && c->client == *busiest && (!theirs || since < theirs->idle_since.load()))
            theirs = c;
    });
    if (theirs) oldest = theirs;
    if (open - picked < options.limits.max_connections || !oldest) return picked > 0;
    oldest->closing = true;
    asio::post(oldest->stream.get_executor(), [oldest] {
        if (!oldest->busy) oldest->stream.cancel();
    });
    return true;
}

// The response head is written here and goes out with the body in one gathered write:
// through Beast's message and serializer, writing an answer took more instructions than
// making it. A header value never carries a line break (it would end the header early):
// CR and LF are dropped from values, as browsers drop them from URLs. The answer to a HEAD
// request has the head of the answer to a GET and no body (RFC 9110 §9.3.2).
asio::awaitable<void> Server::Impl::send(Conn& conn, Response res, unsigned version,
                                         bool keep_alive, bool head) {
    const bool bodiless = res.status / 100 == 1 || res.status == 204 || res.status == 304;
    if (res.status >= 100 && res.status < 100 + kCodes)
        requests_total.inc(conn.method * kCodes + (res.status - 100));
    struct Observe {
        const Conn& conn;
        ~Observe() { request_seconds.observe(std::chrono::steady_clock::now() - conn.started); }
    } observe{conn};
    std::string out;
    out.reserve(192);
    out.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ")
        .append(std::to_string(res.status))
        .append(" ")
        .append(bhttp::obsolete_reason(static_cast<bhttp::status>(res.status)))
        .append("\r\nServer: posthorn\r\n");
    auto field = [&out](std::string_view name, std::string_view value) {
        out.append(name).append(": ");
        for (char c : value)
            if (c != '\r' && c != '\n') out += c;
        out.append("\r\n");
    };
    if (!res.content_type.empty()) field("Content-Type", res.content_type);
    for (const auto& [name, value] : res.headers) field(name, value);
    if (!bodiless) field("Content-Length", std::to_string(res.body.size()));
    if (version == 10 && keep_alive) field("Connection", "keep-alive");
    if (version != 10 && !keep_alive) field("Connection", "close");
    out.append("\r\n");
    const std::array<asio::const_buffer, 2> buffers{
        asio::buffer(out), bodiless || head ? asio::const_buffer() : asio::buffer(res.body)};
    // Written at once when the socket takes it all, as it nearly always does (the socket is
    // in non-blocking mode: a full one answers would_block at once); through async_write,
    // even a write done at once completes by a post to the context. The rest, if any, waits
    // for room under the request timeout.
    beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(buffers);
    if (conn.stream.socket().non_blocking()) {
        error_code ec;
        rest.consume(asio::write(conn.stream.socket(), buffers, ec));
        if (ec && ec != asio::error::would_block) co_return;  // the next read sees it too
        if (beast::buffer_bytes(rest) == 0) co_return;
    }
    conn.stream.expires_after(options.request_timeout);
    co_await asio::async_write(conn.stream, rest, use_nothrow_awaitable);
}

// After refusing a request whose body is still arriving, read and drop what the client
// sends for a moment, so that it sees our answer rather than a reset.
asio::awaitable<void> Server::Impl::linger(Conn& conn) {
    error_code ec;
    conn.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    conn.stream.expires_after(kLingerTime);
    std::array<char, 16384> sink{};
    for (;;) {
        auto [rec, n] =
            co_await conn.stream.async_read_some(asio::buffer(sink), use_nothrow_awaitable);
        if (rec) break;
    }
}

// The admission check's answer, its body limit never above the server's; a check that
// throws refuses the request with a 500.
asio::awaitable<Admission> Server::Impl::admit(Request& request) {
    if (!options.admit) co_return Admission{.body_limit = options.body_limit};
    Admission admission;
    bool failed = false;
    try {
        admission = co_await options.admit(request);
    } catch (const std::exception& e) {
        log::error("http admission check threw: {}", e.what());
        failed = true;
    }
    if (failed) admission.refusal = error_response(500, "INTERNAL_ERROR", "internal error");
    admission.body_limit = std::min(admission.body_limit, options.body_limit);
    co_return admission;
}

asio::awaitable<void> Server::Impl::session(std::shared_ptr<Conn> conn) {
    // Beast reads as much as the buffer has room for, 512 bytes at first: with room for
    // 16 KB, a request with a small body comes in one read instead of four or five.
    beast::flat_buffer buffer;
    buffer.reserve(16 * 1024);
    auto& socket = conn->stream.socket();
    error_code ec;
    auto client = co_await core::client_endpoint(socket, options.proxy_protocol,
                                                 options.limits.trusted, "http");
    if (!client) co_return;
    const auto& peer = *client;
    const std::string ip = peer.address().to_string();
    // room() made room before the accept: a full listener here is one over by a moment.
    auto place = limits.take(peer.address(), std::chrono::steady_clock::now());
    if (place.full) place = limits.take(peer.address(), std::chrono::steady_clock::now(), true);
    conn->client = place.client;
    if (!place.taken()) {
        auto res = error_response(429, "RATE_LIMITED", std::string(place.refusal));
        res.headers.emplace_back("Retry-After", "60");
        co_await send(*conn, std::move(res), 11, false);
        co_await linger(*conn);
        socket.close(ec);
        co_return;
    }
    socket.non_blocking(true, ec);  // for send()'s write at once; else async

    while (!stopping) {
        RequestParser parser;
        parser.header_limit(kHeaderLimit);
        parser.body_limit(options.body_limit);

        conn->idle_since = std::chrono::steady_clock::now();
        conn->closing = false;
        conn->busy = false;
        conn->stream.expires_after(limits.near_full() ? options.busy_idle_timeout
                                                      : options.idle_timeout);
        auto [hec, hn] =
            co_await bhttp::async_read_header(conn->stream, buffer, parser, use_nothrow_awaitable);
        conn->busy = true;
        conn->started = std::chrono::steady_clock::now();
        conn->method = hec ? kMethods.size() - 1 : method_index(parser.request.method);
        if (hec == bhttp::error::body_limit) {  // Content-Length over the limit
            auto res = too_large(options.body_limit);
            co_await send(*conn, std::move(res), 11, false);
            co_await linger(*conn);
            break;
        }
        if (hec) {
            std::optional<Response> refusal;
            if (hec == bhttp::error::header_limit)
                refusal = error_response(431, "VALIDATION_ERROR", "request headers are too large");
            else if (is_parse_error(hec))
                refusal = error_response(400, "VALIDATION_ERROR",
                                         "malformed HTTP request: " + hec.message());
            if (refusal) {
                // The rest of an oversized or broken header may still be on its way: drop
                // it for a moment, so that the client reads our answer, not a reset.
                co_await send(*conn, std::move(*refusal), 11, false);
                co_await linger(*conn);
            }
            break;
        }
        const unsigned version = parser.version;
        auto& request = parser.request;
        if (!request.set_target(std::move(request.target))) {
            co_await send(*conn,
                          error_response(400, "VALIDATION_ERROR", "malformed request target"),
                          version, false);
            co_await linger(*conn);
            break;
        }
        request.remote_ip = ip;
        auto admission = co_await admit(request);
        if (admission.refusal) {
            // The body, if one was due, is never read: the connection ends after the answer.
            const bool body_due = !parser.is_done();
            const bool again = parser.keep_alive() && !body_due && !stopping;
            co_await send(*conn, std::move(*admission.refusal), version, again, parser.head);
            if (body_due) co_await linger(*conn);
            if (!again) break;
            continue;
        }
        if (auto len = parser.content_length(); len && *len > admission.body_limit) {
            auto res = too_large(admission.body_limit);
            co_await send(*conn, std::move(res), version, false);
            co_await linger(*conn);
            break;
        }
        parser.body_limit(admission.body_limit);
        if (parser.expect_continue) {
            bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, version};
            co_await bhttp::async_write(conn->stream, cont, use_nothrow_awaitable);
        }
        // What of the body came with the header is parsed here, from the buffer: through
        // async_read, even a body read whole already completes by a post to the context.
        error_code bec;
        while (!parser.is_done() && buffer.size() > 0) {
            const auto used = parser.put(buffer.data(), bec);
            buffer.consume(used);
            if (bec == bhttp::error::need_more) bec = {};
            if (bec || used == 0) break;
        }
        if (!bec && !parser.is_done()) {
            conn->stream.expires_after(options.request_timeout);
            auto [rec, rn] =
                co_await bhttp::async_read(conn->stream, buffer, parser, use_nothrow_awaitable);
            bec = rec;
        }
        if (bec == bhttp::error::body_limit) {
            auto res = too_large(admission.body_limit);
            co_await send(*conn, std::move(res), version, false);
            co_await linger(*conn);
            break;
        }
        if (bec) {
            if (is_parse_error(bec)) {
                auto refusal = error_response(400, "VALIDATION_ERROR",
                                              "malformed HTTP request: " + bec.message());
                co_await send(*conn, std::move(refusal), version, false);
            }
            break;
        }
        const bool keep_alive = parser.keep_alive();
        const bool head = parser.head;
        Response res;
        bool failed = false;
        try {
            res = co_await handler(std::move(request));
        } catch (const std::exception& e) {
            log::error("http handler threw: {}", e.what());
            failed = true;
        }
        if (failed) res = error_response(500, "INTERNAL_ERROR", "internal error");
        const bool again = keep_alive && !stopping;
        co_await send(*conn, std::move(res), version, again, head);
        if (!again) break;
    }
    conn->stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    conn->stream.close();
}

Server::Server(core::IoPool& pool, Options options, Handler handler)
    : impl_(std::make_shared<Impl>(pool, std::move(options), std::move(handler))) {}

// stop() posts to the acceptor's and the sessions' executors: Asio throws there only for an
// empty executor (never here) or when out of memory, and then terminating is right.
// NOLINTNEXTLINE(bugprone-exception-escape)
Server::~Server() { stop(); }

Result<tcp::endpoint> Server::start() {
    auto bound = core::open_listener(impl_->acceptor, impl_->options.listen);
    if (!bound) return bound;
    asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(), asio::detached);
    return bound;
}

void Server::stop() {
    if (impl_->stopping.exchange(true)) return;
    asio::post(impl_->acceptor.get_executor(), [impl = impl_] {
        error_code ec;
        impl->acceptor.close(ec);
    });
    impl_->conns.each([](const std::shared_ptr<Conn>& conn) {
        asio::post(conn->stream.get_executor(), [conn] {
            if (!conn->busy) conn->stream.cancel();
        });
    });
}

std::size_t Server::connections() const { return impl_->conns.size(); }

}  // namespace posthorn::http
