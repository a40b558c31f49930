// libFuzzer target for a whole SMTP server session (src/smtp/server.cpp), the engine behind
// the inbound port that faces the internet: the input is what a client sends on one
// connection, over real loopback TCP to a server running in this process (PIPELINING,
// SIZE, AUTH without TLS, a small message limit, a handler that accepts everything). The
// server must never crash, must answer only with well-formed replies (CRLF lines of a code
// and " " or "-"), must end the session once the client has stopped sending, and must hand
// over no message with a bare CR or LF in it.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "core/io_pool.hpp"
#include "smtp/server.hpp"

namespace {

using namespace posthorn;

smtp::Reply ok(int code, std::string text) { return smtp::Reply{code, {std::move(text)}}; }

class Accepting final : public smtp::SessionHandler {
  public:
    asio::awaitable<smtp::Reply> on_auth(std::string, std::string user, std::string) override {
        co_return user.empty() ? ok(535, "5.7.8 no") : ok(235, "2.7.0 ok");
    }
    asio::awaitable<smtp::Reply> on_mail_from(std::string, std::size_t) override {
        co_return ok(250, "2.1.0 ok");
    }
    asio::awaitable<smtp::Reply> on_rcpt_to(std::string address) override {
        co_return address.empty() ? ok(550, "5.1.1 no") : ok(250, "2.1.5 ok");
    }
    asio::awaitable<smtp::Reply> on_message(smtp::ReceivedMessage m) override {
        for (std::size_t i = 0; i < m.data.size(); ++i)
            if ((m.data[i] == '\n' && (i == 0 || m.data[i - 1] != '\r')) ||
                (m.data[i] == '\r' && (i + 1 == m.data.size() || m.data[i + 1] != '\n')))
                __builtin_trap();
        if (m.rcpt_to.empty()) __builtin_trap();  // DATA needs a recipient
        co_return ok(250, "2.0.0 ok");
    }
    void on_reset() override {}
};

struct Harness {
    core::IoPool pool{1};
    smtp::Server server{pool,
                        {.listen = {asio::ip::make_address("127.0.0.1"), 0},
                         .hostname = "fuzz.posthorn.test",
                         .max_message_bytes = 4096,
                         .max_recipients = 5,
                         .offer_auth = true,
                         .auth_requires_tls = false,
                         .idle_timeout = std::chrono::seconds(10),
                         .max_bad_commands = 10},
                        [](std::string) { return std::make_unique<Accepting>(); }};
    std::uint16_t port = 0;
    Harness() {
        pool.start();
        auto ep = server.start();
        if (!ep) __builtin_trap();
        port = ep->port();
    }
};

Harness& harness() {
    static auto* h = new Harness();  // lives as long as the process: sessions may outlast a run
    return *h;
}

// Every reply line: three digits, " " or "-", text, CRLF.
void check_replies(const std::string& out) {
    std::size_t at = 0;
    while (at < out.size()) {
        const auto eol = out.find("\r\n", at);
        if (eol == std::string::npos || eol - at < 3) __builtin_trap();
        for (std::size_t i = at; i < at + 3; ++i)
            if (out[i] < '0' || out[i] > '9') __builtin_trap();
        if (eol - at > 3 && out[at + 3] != ' ' && out[at + 3] != '-') __builtin_trap();
        if (out.substr(at, eol - at).find_first_of("\r\n") != std::string::npos) __builtin_trap();
        at = eol + 2;
    }
}

// libFuzzer's -timeout is a SIGALRM every few seconds, and the calls it interrupts fail
// with EINTR: each is made again (a poll() to the same deadline). Taken for a timeout or a
// closed connection, an interrupted call looked like a session that had stalled: the
// "stalls" of the earlier harness, under make fuzz only.
bool wait_for(int fd, short events) {  // false: not within 10 s
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{fd, events, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0)));
        if (ready >= 0) return ready == 1;
        if (errno != EINTR) __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 16384) return 0;  // within the socket buffers: the write below never waits
    auto& h = harness();
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(h.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0) __builtin_trap();
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        // Interrupted, the connection goes on being made: wait for it, then read its fate.
        int error = errno;
        if (error == EINTR) {
            socklen_t len = sizeof error;
            if (!wait_for(fd, POLLOUT) || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
                error = ETIMEDOUT;
        }
        if (error != 0) {
            std::fprintf(stderr, "smtp_session: connect: %s\n", std::strerror(error));
            __builtin_trap();
        }
    }
    std::size_t sent = 0;
    while (sent < size) {
        const auto n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the server may have closed (421 after bad commands)
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (;;) {
        if (!wait_for(fd, POLLIN)) {  // the session did not end
            std::fprintf(stderr, "smtp_session: no end after 10 s; the server said:\n%s\n",
                         out.c_str());
            __builtin_trap();
        }
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ECONNRESET) break;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    // Closed with a reset, not left in TIME_WAIT when the server has not closed first.
    const linger abort{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    ::close(fd);
    if (out.rfind("220 ", 0) != 0) __builtin_trap();  // the greeting comes first
    check_replies(out);
    return 0;
}
