#include "store/pg/detail/listener.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::store::pg::detail {

Listener::Listener(Conn conn, std::vector<Channel> channels, std::function<bool(int)> own)
    : conn_(std::move(conn)),
      channels_(std::move(channels)),
      own_(std::move(own)),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

Listener::~Listener() {
    stop();
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

// The first LISTEN runs here, on the opener's thread: once the store is open, it hears every
// commit that follows (another node's mail sent a moment later is not missed).
void Listener::start() {
    const bool listening = listen();
    thread_ = std::thread([this, listening] {
        core::name_this_thread("ph-pg-listen");
        loop(listening);
    });
}

void Listener::stop() {
    stop_ = true;
    if (wake_fd_ >= 0) {
        const std::uint64_t one = 1;
        (void)!::write(wake_fd_, &one, sizeof one);
    }
    if (thread_.joinable()) thread_.join();
}

bool Listener::listen() {
    for (const auto& c : channels_)
        if (!conn_.run((std::string("LISTEN ") + c.name).c_str())) return false;
    return true;
}

void Listener::loop(bool listening) {
    while (!stop_) {
        if (!listening) {
            // Lost: try again each second; once back, wake every listener, since what was
            // notified meanwhile is gone.
            pollfd pfd{.fd = wake_fd_, .events = POLLIN, .revents = 0};
            (void)::poll(&pfd, 1, 1000);
            if (stop_) break;
            if (!conn_.reconnect() || !listen()) continue;
            listening = true;
            for (const auto& c : channels_) c.on_notify();
        }
        const int sock = PQsocket(conn_.handle());
        if (sock < 0) {
            listening = false;
            continue;
        }
        pollfd fds[2] = {{.fd = sock, .events = POLLIN, .revents = 0},
                         {.fd = wake_fd_, .events = POLLIN, .revents = 0}};
        if (::poll(fds, 2, 5000) < 0) continue;
        if (stop_) break;
        if (!(fds[0].revents & (POLLIN | POLLERR | POLLHUP))) continue;
        if (!PQconsumeInput(conn_.handle()) || !conn_.ok()) {
            log::warn("store: the LISTEN connection to PostgreSQL broke: {}",
                      first_line(PQerrorMessage(conn_.handle())));
            listening = false;
            continue;
        }
        while (PGnotify* n = PQnotifies(conn_.handle())) {
            const bool own = own_ && own_(n->be_pid);
            for (const auto& c : channels_)
                if (!own && std::strcmp(c.name, n->relname) == 0) c.on_notify();
            PQfreemem(n);
        }
    }
}

}  // namespace posthorn::store::pg::detail
