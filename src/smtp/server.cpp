#include "smtp/server.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/accept.hpp"
#include "core/listen.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/proxy_protocol.hpp"
#include "crypto/keys.hpp"
#include "smtp/detail/command.hpp"

namespace posthorn::smtp {

namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using detail::has_bare_cr_or_lf;
using detail::parse_path;
using detail::unstuff;
using detail::upper;

namespace {

constexpr std::size_t kMaxLine = 1000;  // RFC 5321 §4.5.3.1.6, CRLF included

Reply reply(int code, std::string text) { return Reply{code, {std::move(text)}}; }

std::string on_the_wire(const Reply& r) { return r.verbatim() + "\r\n"; }

// The series of the SMTP families: listener 0 is submission, 1 inbound.
std::size_t listener_index(std::string_view name) { return name == "submission" ? 0 : 1; }

metrics::Counter sessions_total("posthorn_smtp_sessions_total",
                                "SMTP sessions greeted, by listener.",
                                metrics::one_label("listener", {"submission", "inbound"}));
metrics::Counter messages_total(
    "posthorn_smtp_messages_total",
    "Messages sent with DATA, by listener and whether they were accepted (2xx) or not.",
    {R"(listener="submission",result="accepted")", R"(listener="submission",result="rejected")",
     R"(listener="inbound",result="accepted")", R"(listener="inbound",result="rejected")"});

void count_message(std::string_view listener, bool accepted) {
    messages_total.inc(listener_index(listener) * 2 + (accepted ? 0 : 1));
}

// Between an idle deadline's timer and the read it watches.
struct IdleRead {
    bool done = false;     // the read completed
    bool expired = false;  // the timer cancelled it
};

struct Conn {
    Conn(tcp::socket s, boost::asio::ssl::context& ctx)
        : stream(beast::tcp_stream(std::move(s)), ctx) {}
    beast::ssl_stream<beast::tcp_stream> stream;
    // Written on the connection's own context; read also on the others', which pick the
    // session to close when the listener is full.
    std::atomic<bool> busy{false};  // not waiting for the client
    std::atomic<std::chrono::steady_clock::time_point> waiting_since{
        std::chrono::steady_clock::now()};
    std::string client;                // core::client_of its address; set before it counts
    std::atomic<bool> evicted{false};  // closed to make room for another client
    // Between an accepted MAIL and the end of its transaction: a stopping server lets the
    // transaction finish (within the drain's grace period) before it says goodbye.
    std::atomic<bool> in_transaction{false};
};

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Impl> {
    Impl(core::IoPool& p, ServerOptions o, HandlerFactory f)
        : pool(p),
          options(std::move(o)),
          factory(std::move(f)),
          acceptor(p.context(0)),
          no_tls(
              std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server)) {}

    asio::awaitable<void> accept_loop();
    asio::awaitable<void> session(std::shared_ptr<Conn> conn);

    core::IoPool& pool;
    ServerOptions options;
    HandlerFactory factory;
    tcp::acceptor acceptor;
    std::shared_ptr<boost::asio::ssl::context> no_tls;
    std::atomic<bool> stopping{false};
    core::Connections<Conn> conns;

    core::ClientLimits limits{options.limits};

    // Has the longest-waiting session of the busiest client closed, when a newcomer holding
    // fewer is refused for want of room; true when one was picked.
    bool make_room(const std::string& newcomer);
};

namespace {

// One SMTP conversation. Replies are gathered and written when the client has no more
// complete commands waiting (RFC 2920: a pipelining client sends several at once).
class Session {
  public:
    Session(Conn& c, const ServerOptions& o, SessionHandler& h, std::string ip,
            const std::atomic<bool>& stopping, const core::ClientLimits& limits)
        : conn_(c),
          opt_(o),
          handler_(h),
          ip_(std::move(ip)),
          stopping_(stopping),
          limits_(limits) {}

    asio::awaitable<void> run() {
        queue(reply(220, opt_.hostname + " ESMTP posthorn"));
        for (;;) {
            auto line = co_await read_line();
            if (!line) break;  // closed, timed out (answered already), or broken
            if (!co_await command(*line)) break;
        }
        co_await flush();
    }

  private:
    beast::tcp_stream& tcp() { return conn_.stream.next_layer(); }

    void queue(const Reply& r) { out_ += on_the_wire(r); }

    asio::awaitable<bool> flush() {
        if (out_.empty()) co_return true;
        std::string data;
        data.swap(out_);
        tcp().expires_after(opt_.idle_timeout);
        error_code ec;
        std::size_t n = 0;
        if (tls_)
            std::tie(ec, n) =
                co_await asio::async_write(conn_.stream, asio::buffer(data), use_nothrow_awaitable);
        else
            std::tie(ec, n) =
                co_await asio::async_write(tcp(), asio::buffer(data), use_nothrow_awaitable);
        co_return !ec;
    }

    // More bytes appended to `into` (the command buffer, or a message being received);
    // false when the peer is gone or idle too long.
    asio::awaitable<bool> fill(std::string& into) {
        // Once the peer is gone, it stays gone: Asio does not complete a second read after
        // the end of the stream (the socket's state will not change again, so its reactor
        // waits for an edge that never comes), and a session that read on after a client
        // left in the middle of DATA held its connection until the idle timeout.
        if (gone_) co_return false;
        gone_ = true;  // until this read succeeds
        if (!co_await flush()) co_return false;
        if (stopping_ && !in_tx_) co_return co_await shutting_down();
        // One read buffer for the session's life (a TLS record is at most 16 KB; a plain
        // read takes up to 64 KB at once).
        if (chunk_.empty()) chunk_.resize(65536);
        const auto chunk = asio::buffer(chunk_.data(), tls_ ? 16384 : chunk_.size());
        // The idle deadline cancels the read instead of timing it out through the stream:
        // a beast::tcp_stream that times out closes its socket, and the 421 below was never
        // written. `idle` is shared with the timer's handler, which may already be queued
        // when the read completes; it then does nothing.
        tcp().expires_never();
        auto idle = std::make_shared<IdleRead>();
        asio::steady_timer timer(tcp().get_executor(),
                                 limits_.near_full() ? opt_.busy_idle_timeout : opt_.idle_timeout);
        timer.async_wait([idle, &socket = tcp().socket()](error_code e) {
            if (e || idle->done) return;
            idle->expired = true;
            socket.cancel(e);
        });
        conn_.waiting_since = std::chrono::steady_clock::now();
        conn_.busy = false;
        error_code ec;
        std::size_t n = 0;
        if (tls_)
            std::tie(ec, n) = co_await conn_.stream.async_read_some(chunk, use_nothrow_awaitable);
        else
            std::tie(ec, n) = co_await tcp().async_read_some(chunk, use_nothrow_awaitable);
        conn_.busy = true;
        idle->done = true;
        timer.cancel();
        if (idle->expired) {
            queue(reply(421, "4.4.2 " + opt_.hostname + " idle too long, closing"));
            co_await flush();
            co_return false;
        }
        if (ec == asio::error::operation_aborted && conn_.evicted) {
            queue(reply(421, "4.7.0 " + opt_.hostname + " too many connections, closing"));
            co_await flush();
            co_return false;
        }
        if (ec == asio::error::operation_aborted && stopping_ && !in_tx_)
            co_return co_await shutting_down();
        if (ec) co_return false;
        into.append(chunk_.data(), n);
        gone_ = false;
        co_return true;
    }

    // The server is stopping: say so (RFC 5321 §3.8) and end the session.
    asio::awaitable<bool> shutting_down() {
        queue(reply(421, "4.3.2 " + opt_.hostname + " shutting down, try again later"));
        co_await flush();
        co_return false;
    }

    // The next command line, without CRLF. Overlong lines are answered and skipped.
    asio::awaitable<std::optional<std::string>> read_line() {
        for (;;) {
            const auto eol = in_.find('\n');
            if (eol != std::string::npos) {
                std::string line = in_.substr(0, eol);
                in_.erase(0, eol + 1);
                if (skipping_ || line.size() + 1 > kMaxLine) {
                    skipping_ = false;
                    queue(reply(500, "5.5.2 Line too long"));
                    if (!bad()) co_return std::nullopt;
                    continue;
                }
                // A line must end in CRLF, and a CR within it ends no line either (and is
                // never echoed: EHLO's reply repeats its argument).
                if (line.empty() || line.find('\r') != line.size() - 1) {
                    queue(reply(500, "5.5.2 Lines must end in CRLF"));
                    if (!bad()) co_return std::nullopt;
                    continue;
                }
                line.pop_back();
                co_return line;
            }
            if (in_.size() > kMaxLine) {  // no CRLF within the limit: skip to the next one
                in_.clear();
                skipping_ = true;
            }
            if (!co_await fill(in_)) co_return std::nullopt;
        }
    }

    // Counts a bad command; false when there were too many (the session then ends).
    bool bad() {
        if (++bad_ <= opt_.max_bad_commands) return true;
        queue(reply(421, "4.7.0 Too many errors, closing"));
        return false;
    }

    void reset_transaction() {
        in_tx_ = false;
        conn_.in_transaction = false;
        mail_from_.clear();
        rcpts_.clear();
        handler_.on_reset();
    }

    bool auth_allowed() const { return opt_.offer_auth && (tls_ || !opt_.auth_requires_tls); }

    void ehlo_reply(std::string_view arg) {
        // The client's name as it gave it, but no control character goes back in a reply.
        std::string name(arg);
        for (auto& c : name)
            if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') c = '?';
        Reply r{250, {opt_.hostname + " greets " + name}};
        r.lines.emplace_back("PIPELINING");
        r.lines.emplace_back("SIZE " + std::to_string(opt_.max_message_bytes));
        r.lines.emplace_back("8BITMIME");
        r.lines.emplace_back("ENHANCEDSTATUSCODES");
        r.lines.emplace_back("SMTPUTF8");
        if (opt_.tls && !tls_) r.lines.emplace_back("STARTTLS");
        if (auth_allowed()) r.lines.emplace_back("AUTH PLAIN LOGIN");
        queue(r);
    }

    // Reads one line of an AUTH exchange; nullopt if the client went away.
    asio::awaitable<std::optional<std::string>> auth_line(std::string prompt) {
        queue(reply(334, std::move(prompt)));
        co_return co_await read_line();
    }

    asio::awaitable<void> auth(std::string_view arg) {
        if (!opt_.offer_auth) {
            queue(reply(502, "5.5.1 AUTH not available here"));
            co_return;
        }
        if (!tls_ && opt_.auth_requires_tls) {
            queue(reply(538, "5.7.11 Encryption required: use STARTTLS first"));
            co_return;
        }
        if (authed_ || in_tx_) {
            queue(reply(503, "5.5.1 AUTH not allowed now"));
            co_return;
        }
        const auto sp = arg.find(' ');
        const auto mech = upper(arg.substr(0, sp));
        std::optional<std::string> initial;
        if (sp != std::string_view::npos) initial = std::string(arg.substr(sp + 1));
        std::string authzid, user, pass;
        auto decode = [](std::string_view b64) -> std::optional<std::string> {
            auto d = crypto::base64_decode(b64);
            if (!d) return std::nullopt;
            return *d;
        };
        if (mech == "PLAIN") {
            std::optional<std::string> resp = initial;
            if (!resp || *resp == "=") {
                if (!resp)
                    resp = co_await auth_line("");
                else
                    resp = std::string();
                if (!resp) co_return;
            }
            if (*resp == "*") {
                queue(reply(501, "5.0.0 AUTH cancelled"));
                co_return;
            }
            auto d = decode(*resp);
            const auto first = d ? d->find('\0') : std::string::npos;
            const auto second =
                d && first != std::string::npos ? d->find('\0', first + 1) : std::string::npos;
            if (!d || second == std::string::npos) {
                queue(reply(501, "5.5.2 Cannot decode the AUTH PLAIN response"));
                bad();
                co_return;
            }
            authzid = d->substr(0, first);
            user = d->substr(first + 1, second - first - 1);
            pass = d->substr(second + 1);
        } else if (mech == "LOGIN") {
            std::optional<std::string> u = initial;
            if (!u) u = co_await auth_line("VXNlcm5hbWU6");  // "Username:"
            if (!u) co_return;
            auto du = decode(*u);
            if (*u == "*" || !du) {
                queue(reply(
                    501, *u == "*" ? "5.0.0 AUTH cancelled" : "5.5.2 Cannot decode the user name"));
                bad();
                co_return;
            }
            auto p = co_await auth_line("UGFzc3dvcmQ6");  // "Password:"
            if (!p) co_return;
            auto dp = decode(*p);
            if (*p == "*" || !dp) {
                queue(reply(
                    501, *p == "*" ? "5.0.0 AUTH cancelled" : "5.5.2 Cannot decode the password"));
                bad();
                co_return;
            }
            user = *du;
            pass = *dp;
        } else {
            queue(reply(504, "5.5.4 Unknown AUTH mechanism; PLAIN and LOGIN are offered"));
            bad();
            co_return;
        }
        auto r = co_await handler_.on_auth(std::move(authzid), std::move(user), std::move(pass));
        authed_ = r.code == 235;
        if (!authed_) bad();
        queue(r);
    }

    asio::awaitable<void> data() {
        queue(reply(354, "End data with <CR><LF>.<CR><LF>"));
        // The message is read straight into `raw` (not through in_), and ends at a line
        // that is a single dot: CRLF.CRLF, or .CRLF at the very start (an empty message).
        std::string raw;
        raw.swap(in_);
        bool too_big = false;
        std::size_t scanned = 0;
        const std::size_t limit = opt_.max_message_bytes + 8;
        for (;;) {
            std::size_t end = std::string::npos, after = 0;
            if (!too_big && raw.starts_with(".\r\n")) {
                end = 0;
                after = 3;
            } else if (auto e = raw.find("\r\n.\r\n", scanned > 4 ? scanned - 4 : 0);
                       e != std::string::npos) {
                end = e + 2;  // the message keeps its last CRLF
                after = e + 5;
            }
            if (end != std::string::npos) {
                in_.assign(raw, after);  // pipelined commands after the message
                raw.resize(end);
                break;
            }
            scanned = raw.size();
            if (raw.size() > limit) {
                // Keep reading to the end of the message, but keep only its tail.
                too_big = true;
                raw.erase(0, raw.size() - 4);
                scanned = raw.size();
            }
            if (!co_await fill(raw)) co_return;  // closed before the end: nothing is kept
        }
        // The last read may have brought the end and the excess together.
        if (raw.size() > opt_.max_message_bytes) too_big = true;
        const bool tx_ok = in_tx_ && !rcpts_.empty();
        if (too_big) {
            count_message(opt_.name, false);
            queue(reply(552, "5.3.4 Message larger than " + std::to_string(opt_.max_message_bytes) +
                                 " bytes"));
        } else if (has_bare_cr_or_lf(raw)) {
            count_message(opt_.name, false);
            queue(reply(550, "5.6.0 Message contains a bare CR or LF; lines must end in CRLF"));
        } else if (tx_ok) {
            unstuff(raw);
            ReceivedMessage m{.helo = helo_,
                              .esmtp = esmtp_,
                              .mail_from = mail_from_,
                              .rcpt_to = rcpts_,
                              .data = std::move(raw),
                              .tls = tls_,
                              .remote_ip = ip_};
            auto r = co_await handler_.on_message(std::move(m));
            count_message(opt_.name, r.code / 100 == 2);
            queue(r);
        }
        reset_transaction();
    }

    // One command; false to end the session.
    asio::awaitable<bool> command(const std::string& line) {
        const auto sp = line.find(' ');
        const auto verb = upper(std::string_view(line).substr(0, sp));
        const std::string_view arg =
            sp == std::string::npos ? std::string_view() : std::string_view(line).substr(sp + 1);
        if (verb == "EHLO" || verb == "HELO") {
            if (arg.empty()) {
                queue(reply(501, "5.5.4 " + verb + " needs a domain or address"));
                co_return bad();
            }
            if (in_tx_) reset_transaction();
            helo_ = std::string(arg);
            esmtp_ = verb == "EHLO";
            hello_ = true;
            if (verb == "EHLO")
                ehlo_reply(arg);
            else
                queue(reply(250, opt_.hostname));
            co_return true;
        }
        if (verb == "NOOP") {
            queue(reply(250, "2.0.0 OK"));
            co_return true;
        }
        if (verb == "QUIT") {
            queue(reply(221, "2.0.0 Bye"));
            co_return false;
        }
        if (verb == "RSET") {
            reset_transaction();
            queue(reply(250, "2.0.0 OK"));
            co_return true;
        }
        if (verb == "VRFY") {
            queue(reply(252, "2.5.2 Cannot VRFY; send the mail and see"));
            co_return true;
        }
        if (verb == "HELP") {
            queue(reply(214, "2.0.0 See RFC 5321"));
            co_return true;
        }
        if (!hello_) {
            queue(reply(503, "5.5.1 Say EHLO first"));
            co_return bad();
        }
        if (verb == "STARTTLS") {
            if (!opt_.tls || tls_) {
                queue(reply(502, "5.5.1 STARTTLS not available"));
                co_return bad();
            }
            if (!arg.empty() || !in_.empty()) {  // RFC 3207 §4: nothing may follow it
                queue(reply(501, "5.5.4 STARTTLS takes no argument and must be last"));
                in_.clear();
                co_return bad();
            }
            queue(reply(220, "2.0.0 Ready to start TLS"));
            if (!co_await flush()) co_return false;
            tcp().expires_after(opt_.idle_timeout);
            auto [ec] = co_await conn_.stream.async_handshake(asio::ssl::stream_base::server,
                                                              use_nothrow_awaitable);
            if (ec) co_return false;
            tls_ = true;
            hello_ = false;  // RFC 3207 §4.2: start over
            authed_ = false;
            reset_transaction();
            co_return true;
        }
        if (verb == "AUTH") {
            co_await auth(arg);
            co_return bad_ <= opt_.max_bad_commands;
        }
        if (verb == "MAIL") {
            if (opt_.require_auth && !authed_) {
                queue(reply(530, "5.7.0 Authentication required"));
                co_return bad();
            }
            if (in_tx_) {
                queue(reply(503, "5.5.1 Nested MAIL command"));
                co_return bad();
            }
            auto p = parse_path(arg, "FROM:");
            if (!p) {
                queue(reply(501, "5.5.4 Syntax: MAIL FROM:<address>"));
                co_return bad();
            }
            std::size_t size = 0;
            for (const auto& param : p->params)
                if (param.rfind("SIZE=", 0) == 0)
                    size = std::strtoull(param.c_str() + 5, nullptr, 10);
            if (size > opt_.max_message_bytes) {
                queue(reply(552, "5.3.4 Message larger than " +
                                     std::to_string(opt_.max_message_bytes) + " bytes"));
                co_return true;
            }
            auto r = co_await handler_.on_mail_from(p->path, size);
            if (r.code == 530) authed_ = false;  // the handler withdrew the authentication
            if (r.positive()) {
                in_tx_ = true;
                conn_.in_transaction = true;
                mail_from_ = p->path;
            }
            queue(r);
            co_return true;
        }
        if (verb == "RCPT") {
            if (!in_tx_) {
                queue(reply(503, "5.5.1 MAIL first"));
                co_return bad();
            }
            auto p = parse_path(arg, "TO:");
            if (!p || p->path.empty()) {
                queue(reply(501, "5.5.4 Syntax: RCPT TO:<address>"));
                co_return bad();
            }
            if (rcpts_.size() >= opt_.max_recipients) {
                queue(reply(452, "4.5.3 Too many recipients"));
                co_return true;
            }
            auto r = co_await handler_.on_rcpt_to(p->path);
            if (r.positive()) rcpts_.push_back(p->path);
            queue(r);
            co_return true;
        }
        if (verb == "DATA") {
            if (!in_tx_) {
                queue(reply(503, "5.5.1 MAIL first"));
                co_return bad();
            }
            if (rcpts_.empty()) {
                queue(reply(554, "5.5.1 No valid recipients"));
                co_return true;
            }
            co_await data();
            co_return true;
        }
        queue(reply(500, "5.5.1 Unknown command"));
        co_return bad();
    }

    Conn& conn_;
    const ServerOptions& opt_;
    SessionHandler& handler_;
    std::string ip_;
    std::string in_, out_;
    std::vector<char> chunk_;  // the read buffer
    bool tls_ = false, hello_ = false, authed_ = false, in_tx_ = false, skipping_ = false;
    const std::atomic<bool>& stopping_;
    const core::ClientLimits& limits_;
    int bad_ = 0;
    bool gone_ = false;  // the last read failed (end of stream, error, idle): no more reads
    std::string helo_, mail_from_;
    bool esmtp_ = true;  // the last greeting was EHLO
    std::vector<std::string> rcpts_;
};

}  // namespace

bool Server::Impl::make_room(const std::string& newcomer) {
    auto from = limits.room_from(limits.held_by(newcomer));
    if (!from) return false;
    std::shared_ptr<Conn> oldest;
    conns.each([&](const std::shared_ptr<Conn>& c) {
        if (c->busy || c->evicted || c->client != *from) return;
        if (!oldest || c->waiting_since.load() < oldest->waiting_since.load()) oldest = c;
    });
    if (!oldest) return false;
    oldest->evicted = true;
    asio::post(oldest->stream.get_executor(), [oldest] {
        error_code ec;
        if (oldest->busy)
            oldest->evicted = false;  // its client spoke first: it stays
        else
            oldest->stream.next_layer().socket().cancel(ec);
    });
    return true;
}

asio::awaitable<void> Server::Impl::session(std::shared_ptr<Conn> conn) {
    auto& socket = conn->stream.next_layer().socket();
    error_code ec;
    auto client = co_await core::client_endpoint(socket, options.proxy_protocol,
                                                 options.limits.trusted, "smtp");
    if (!client) co_return;
    const auto& peer = *client;
    const std::string ip = peer.address().to_string();
    const auto now = std::chrono::steady_clock::now();
    auto place = limits.take(peer.address(), now);
    conn->client = place.client;
    if (place.full && make_room(place.client)) place = limits.take(peer.address(), now, true);
    if (!place.taken()) {
        log::info("smtp {}: refused {}: {}", options.name, ip, place.refusal);
        // RFC 5321 §3.1: a server may answer 421 instead of its greeting, and close.
        const auto line = on_the_wire(
            reply(421, "4.7.0 " + options.hostname + " " + place.refusal + ", try again later"));
        conn->stream.next_layer().expires_after(std::chrono::seconds(30));
        co_await asio::async_write(conn->stream.next_layer(), asio::buffer(line),
                                   use_nothrow_awaitable);
    } else {
        sessions_total.inc(listener_index(options.name));
        auto handler = factory(ip);
        Session s(*conn, options, *handler, ip, stopping, limits);
        co_await s.run();
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    conn->stream.next_layer().close();
}

asio::awaitable<void> Server::Impl::accept_loop() {
    return core::accept_connections(
        shared_from_this(), acceptor, pool, stopping, conns, "smtp",
        [this](tcp::socket socket) {
            return std::make_shared<Conn>(std::move(socket), options.tls ? *options.tls : *no_tls);
        },
        [this](std::shared_ptr<Conn> conn) { return session(std::move(conn)); });
}

Server::Server(core::IoPool& pool, ServerOptions options, HandlerFactory factory)
    : impl_(std::make_shared<Impl>(pool, std::move(options), std::move(factory))) {}

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
            if (!conn->busy && !conn->in_transaction) conn->stream.next_layer().cancel();
        });
    });
}

std::size_t Server::connections() const { return impl_->conns.size(); }

}  // namespace posthorn::smtp
