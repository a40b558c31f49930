#include "smtp/client.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "core/text.hpp"
#include "smtp/errors.hpp"

namespace posthorn::smtp {

namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

bool needs_utf8(std::string_view s) { return !core::is_ascii(s); }

// RFC 5321 §4.5.2: a line that starts with "." gets one more; the data ends in CRLF.CRLF.
// The lines between are copied whole.
std::string dot_stuff(std::string_view data) {
    std::string out;
    out.reserve(data.size() + data.size() / 64 + 8);
    std::size_t pos = 0;
    if (!data.empty() && data.front() == '.') out.push_back('.');
    for (;;) {
        const auto dot = data.find("\n.", pos);
        if (dot == std::string_view::npos) {
            out.append(data.substr(pos));
            break;
        }
        out.append(data.substr(pos, dot + 1 - pos));
        out.push_back('.');
        pos = dot + 1;
    }
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
    out += ".\r\n";
    return out;
}

}  // namespace

struct Client::Impl {
    Impl(asio::any_io_executor ex, ClientOptions o)
        : options(std::move(o)),
          ctx(options.tls_context ? options.tls_context
                                  : std::make_shared<boost::asio::ssl::context>(
                                        boost::asio::ssl::context::tls_client)),
          stream(beast::tcp_stream(ex), *ctx) {}

    beast::tcp_stream& tcp() { return stream.next_layer(); }

    asio::awaitable<error_code> write(std::string data) {
        tcp().expires_after(options.command_timeout);
        error_code ec;
        std::size_t n = 0;
        if (tls)
            std::tie(ec, n) =
                co_await asio::async_write(stream, asio::buffer(data), use_nothrow_awaitable);
        else
            std::tie(ec, n) =
                co_await asio::async_write(tcp(), asio::buffer(data), use_nothrow_awaitable);
        co_return ec;
    }

    asio::awaitable<Result<Reply>> read_reply() {
        Reply reply;
        tcp().expires_after(options.command_timeout);
        for (;;) {
            const auto eol = buffer.find('\n');
            if (eol == std::string::npos) {
                if (buffer.size() > kMaxReplyLine) co_return errc::line_too_long;
                std::array<char, 4096> chunk{};
                error_code ec;
                std::size_t n = 0;
                if (tls)
                    std::tie(ec, n) =
                        co_await stream.async_read_some(asio::buffer(chunk), use_nothrow_awaitable);
                else
                    std::tie(ec, n) =
                        co_await tcp().async_read_some(asio::buffer(chunk), use_nothrow_awaitable);
                if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated)
                    co_return errc::unexpected_eof;
                if (ec) co_return ec;
                buffer.append(chunk.data(), n);
                continue;
            }
            std::string_view line(buffer.data(), eol);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            auto done = add_reply_line(reply, line);
            buffer.erase(0, eol + 1);
            if (!done) co_return done.error();
            if (*done) co_return reply;
        }
    }

    asio::awaitable<Result<Reply>> command(std::string line) {
        if (auto ec = co_await write(line + "\r\n")) co_return ec;
        co_return co_await read_reply();
    }

    void parse_ehlo(const Reply& r) {
        extensions.clear();
        size = std::nullopt;
        for (std::size_t i = 1; i < r.lines.size(); ++i) {
            const auto words = upper(r.lines[i]);
            const auto sp = words.find(' ');
            const auto keyword = words.substr(0, sp);
            extensions.insert(keyword);
            if (keyword == "SIZE" && sp != std::string::npos) {
                try {
                    const auto n = std::stoull(words.substr(sp + 1));
                    if (n > 0) size = n;
                } catch (const std::exception&) {
                }
            }
        }
    }

    asio::awaitable<Result<Reply>> hello() {
        auto r = co_await command("EHLO " + options.helo_name);
        if (!r) co_return r;
        if (r->code == 250) {
            parse_ehlo(*r);
            co_return r;
        }
        if (r->code < 500) co_return r;  // 421 and the like: not a server without EHLO
        // RFC 5321 §4.1.1.1: an old server that does not know EHLO; try HELO.
        extensions.clear();
        co_return co_await command("HELO " + options.helo_name);
    }

    ClientOptions options;
    std::shared_ptr<boost::asio::ssl::context> ctx;
    beast::ssl_stream<beast::tcp_stream> stream;
    bool tls = false;
    bool ready = false;
    std::string buffer;
    std::set<std::string> extensions;
    std::optional<std::size_t> size;
    std::optional<crypto::PeerResult> peer;
};

Client::Client(asio::any_io_executor ex, ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(ex), std::move(options))) {}

Client::~Client() = default;

bool Client::tls_active() const { return impl_->tls; }
const std::optional<crypto::PeerResult>& Client::peer() const { return impl_->peer; }
bool Client::has_extension(std::string_view k) const {
    return impl_->extensions.count(std::string(k)) != 0;
}
std::optional<std::size_t> Client::size_limit() const { return impl_->size; }

asio::awaitable<Result<Reply>> Client::open(tcp::endpoint peer) {
    auto& d = *impl_;
    d.tcp().expires_after(d.options.connect_timeout);
    auto [ec] = co_await d.tcp().async_connect(peer, use_nothrow_awaitable);
    if (ec) co_return ec;
    d.tcp().socket().set_option(tcp::no_delay(true), ec);

    auto greeting = co_await d.read_reply();
    if (!greeting || greeting->code != 220) co_return greeting;
    auto hello = co_await d.hello();
    if (!hello || !hello->positive()) co_return hello;

    if (d.options.tls != TlsMode::off) {
        if (!has_extension("STARTTLS")) {
            if (d.options.tls == TlsMode::required) co_return errc::tls_unavailable;
        } else {
            auto go = co_await d.command("STARTTLS");
            if (!go) co_return go;
            if (go->code != 220) {
                if (d.options.tls == TlsMode::required) co_return errc::tls_unavailable;
            } else {
                if (!d.options.server_name.empty())
                    SSL_set_tlsext_host_name(d.stream.native_handle(),
                                             d.options.server_name.c_str());
                if (d.options.peer_check)
                    crypto::expect_peer(d.stream.native_handle(), *d.options.peer_check);
                d.tcp().expires_after(d.options.command_timeout);
                auto [hec] = co_await d.stream.async_handshake(asio::ssl::stream_base::client,
                                                               use_nothrow_awaitable);
                if (hec) co_return errc::tls_failed;
                d.peer = crypto::peer_result(d.stream.native_handle());
                if (!d.options.peer_check) {
                    d.peer->verified = false;  // nothing was asked of the certificate
                    d.peer->failure.clear();
                    d.peer->dane.clear();
                } else if (!d.peer->verified && d.options.require_verified) {
                    // RFC 8461 §5, RFC 7672 §2.2: not a word more to an unverified server.
                    error_code ignored;
                    d.tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
                    d.tcp().close();
                    co_return errc::tls_not_verified;
                }
                d.tls = true;
                d.buffer.clear();  // RFC 3207 §4.2: forget everything said before TLS
                hello = co_await d.hello();
                if (!hello || !hello->positive()) co_return hello;
            }
        }
    }
    d.ready = true;
    co_return hello;
}

asio::awaitable<Result<Transaction>> Client::send(Envelope env) {
    auto& d = *impl_;
    if (!d.ready) co_return errc::not_ready;
    const std::string data = dot_stuff(env.data);
    bool utf8 = needs_utf8(env.mail_from);
    for (const auto& r : env.rcpt_to) utf8 = utf8 || needs_utf8(r);
    bool eight_bit = needs_utf8(env.data);
    // RFC 6531 §3.4: UTF-8 addresses only to a server that says SMTPUTF8.
    if (utf8 && !has_extension("SMTPUTF8")) co_return errc::smtputf8_unsupported;

    std::string mail = "MAIL FROM:<" + env.mail_from + ">";
    if (has_extension("SIZE")) mail += " SIZE=" + std::to_string(data.size());
    if (eight_bit && has_extension("8BITMIME")) mail += " BODY=8BITMIME";
    if (utf8 && has_extension("SMTPUTF8")) mail += " SMTPUTF8";

    Transaction t;
    t.rcpt.resize(env.rcpt_to.size());
    const bool pipelining = has_extension("PIPELINING");
    // A session is broken by any error below; nothing more is sent on it.
    d.ready = false;
    if (pipelining) {
        std::string batch = mail + "\r\n";
        for (const auto& r : env.rcpt_to) batch += "RCPT TO:<" + r + ">\r\n";
        batch += "DATA\r\n";
        if (auto ec = co_await d.write(std::move(batch))) co_return ec;
        auto m = co_await d.read_reply();
        if (!m) co_return m.error();
        t.mail = *m;
        bool any = false;
        for (std::size_t i = 0; i < env.rcpt_to.size(); ++i) {
            auto r = co_await d.read_reply();
            if (!r) co_return r.error();
            t.rcpt[i] = *r;
            any = any || r->positive();
        }
        auto go = co_await d.read_reply();
        if (!go) co_return go.error();
        if (go->code != 354) {
            t.data = *go;
        } else if (!any || !t.mail.positive()) {
            // RFC 2920 §3.1: DATA accepted though nobody can receive it: end it empty.
            auto end = co_await d.command(".");
            if (!end) co_return end.error();
            t.data = *end;
        } else {
            if (auto ec = co_await d.write(data)) co_return ec;
            auto end = co_await d.read_reply();
            if (!end) co_return end.error();
            t.data = *end;
        }
        if (!t.mail.positive() || !t.data->positive()) {
            auto rset = co_await d.command("RSET");
            if (!rset) co_return rset.error();
        }
        d.ready = true;
        co_return t;
    }

    auto m = co_await d.command(mail);
    if (!m) co_return m.error();
    t.mail = *m;
    if (!m->positive()) {
        auto rset = co_await d.command("RSET");
        if (!rset) co_return rset.error();
        d.ready = true;
        co_return t;
    }
    bool any = false;
    for (std::size_t i = 0; i < env.rcpt_to.size(); ++i) {
        auto r = co_await d.command("RCPT TO:<" + env.rcpt_to[i] + ">");
        if (!r) co_return r.error();
        t.rcpt[i] = *r;
        any = any || r->positive();
    }
    if (!any) {
        auto rset = co_await d.command("RSET");
        if (!rset) co_return rset.error();
        d.ready = true;
        co_return t;
    }
    auto go = co_await d.command("DATA");
    if (!go) co_return go.error();
    if (go->code != 354) {
        t.data = *go;
        auto rset = co_await d.command("RSET");
        if (!rset) co_return rset.error();
        d.ready = true;
        co_return t;
    }
    if (auto ec = co_await d.write(data)) co_return ec;
    auto end = co_await d.read_reply();
    if (!end) co_return end.error();
    t.data = *end;
    d.ready = true;
    co_return t;
}

asio::awaitable<void> Client::quit() {
    auto& d = *impl_;
    if (d.ready) {
        d.tcp().expires_after(std::chrono::seconds(10));
        (void)co_await d.command("QUIT");
    }
    d.ready = false;
    error_code ec;
    d.tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    d.tcp().close();
}

}  // namespace posthorn::smtp
