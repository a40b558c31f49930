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
#include <random>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 16384) return 0;  // within the socket buffers: the write below never waits
    auto& h = harness();
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(h.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Each connection from a source address of its own in 127/8. The client sends its FIN
    // first (shutdown below), so its side of a connection that the server closed too ends
    // in TIME_WAIT, whatever the reset at close; from one source address, two thousand
    // sessions a second reuse ports still in TIME_WAIT (Linux allows it on loopback), and
    // now and then such a connect() gave a connection that the server never saw (no
    // greeting, nothing in /proc/net/tcp but the old TIME_WAIT): the run then waited 10 s
    // and failed.
    static std::uint32_t next_source = std::random_device{}();  // not the last run's
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl(0x7f010001u + next_source++ % 0xfd0000u);  // 127.1.0.1…
    const int no_port = 1;  // the port is chosen at connect(), for this address pair
    if (fd < 0 ||
        ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &no_port, sizeof no_port) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        std::perror("smtp_session: socket, bind or connect");
        __builtin_trap();
    }
    std::size_t sent = 0;
    while (sent < size) {
        const auto n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n <= 0) break;  // the server may have closed (421 after bad commands)
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (;;) {
        // libFuzzer's -timeout is a SIGALRM every few seconds: a poll() it interrupts is
        // waited again, to the same deadline (read as a timeout, it looked like a session
        // that had stalled: the "stalls" of the earlier harness, under make fuzz only).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        int ready = -1;
        while (ready < 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd p{fd, POLLIN, 0};
            ready = ::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0)));
            if (ready < 0 && errno != EINTR) __builtin_trap();
        }
        if (ready == 0) {  // the session did not end
            std::fprintf(stderr, "smtp_session: no end after 10 s; the server said:\n%s\n",
                         out.c_str());
            __builtin_trap();
        }
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == ECONNRESET) break;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    // Closed with a reset: a connection that the server has not closed yet leaves no
    // TIME_WAIT behind.
    const linger abort{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    ::close(fd);
    if (out.rfind("220 ", 0) != 0) __builtin_trap();  // the greeting comes first
    check_replies(out);
    return 0;
}
