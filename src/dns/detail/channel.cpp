#include "dns/detail/channel.hpp"

#include <climits>
#include <utility>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/strand.hpp>

#include "core/log.hpp"
#include "dns/detail/wire.hpp"

namespace posthorn::dns::detail {

struct Channel::Watch {
    Watch(const asio::any_io_executor& executor, ares_socket_t fd) : descriptor(executor), fd(fd) {}
    // The socket is c-ares's: never let the descriptor close it.
    ~Watch() { release(); }
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

    // Cancels the waits (their handlers see operation_aborted) and forgets the fd.
    void release() {
        open = false;
        if (descriptor.is_open()) descriptor.release();
    }

    asio::posix::stream_descriptor descriptor;
    ares_socket_t fd;
    bool want_read = false;
    bool want_write = false;
    bool reading = false;  // an async_wait(wait_read) is pending
    bool writing = false;
    bool open = true;
};

namespace {

Result<std::string> servers_csv(const std::vector<ServerAddress>& servers) {
    std::string csv;
    for (const ServerAddress& s : servers) {
        error_code ec;
        const auto ip = asio::ip::make_address(s.ip, ec);
        if (ec || s.port == 0) return make_error_code(boost::system::errc::invalid_argument);
        if (!csv.empty()) csv += ',';
        // ares_set_servers_ports_csv: host[:port], IPv6 in brackets when a port follows.
        csv += ip.is_v6() ? "[" + ip.to_string() + "]" : ip.to_string();
        csv += ':' + std::to_string(s.port);
    }
    return csv;
}

}  // namespace

Channel::Channel(asio::any_io_executor strand) : strand_(std::move(strand)), timer_(strand_) {}

Channel::~Channel() { close(); }

Result<std::shared_ptr<Channel>> Channel::open(const asio::any_io_executor& executor,
                                               const CaresResolver::Options& options) {
    if (ares_library_initialized() != ARES_SUCCESS) {
        log::error("dns: c-ares is not initialised (dns::library_init() was not called)");
        return make_error_code(errc::other);
    }
    if (options.timeout.count() < 1 || options.timeout.count() > INT_MAX || options.tries < 1) {
        return make_error_code(boost::system::errc::invalid_argument);
    }
    auto csv = servers_csv(options.servers);
    if (!csv) return csv.error();

    std::shared_ptr<Channel> self{new Channel(asio::make_strand(executor))};
    ares_options opts{};
    // NOCHECKRESP: c-ares 1.18 otherwise drops a SERVFAIL or REFUSED answer, tries the next
    // server, and when none is left reports ARES_ECONNREFUSED (the status a query starts
    // with), so a server failure would read as "nobody listens". We would rather report
    // what the server said, and give up failing over on those two answers.
    // No ARES_FLAG_EDNS: in 1.18 one SERVFAIL, NOTIMP or FORMERR answer to an EDNS query
    // turns EDNS off for the whole channel, for good; plain 512-octet UDP with the TCP
    // retry on truncation behaves the same from the first query to the last.
    opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_NOCHECKRESP;
    opts.timeout = static_cast<int>(options.timeout.count());
    opts.tries = options.tries;
    opts.sock_state_cb = &Channel::on_socket_state;
    opts.sock_state_cb_data = self.get();
    const int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB;
    ares_channel raw = nullptr;
    int status = ares_init_options(&raw, &opts, mask);
    self->channel_.reset(raw);
    if (status != ARES_SUCCESS) {
        log::error("dns: ares_init_options: {}", ares_strerror(status));
        return make_error_code(errc::other);
    }
    if (!csv->empty()) {
        status = ares_set_servers_ports_csv(raw, csv->c_str());
        if (status != ARES_SUCCESS) {
            log::error("dns: ares_set_servers_ports_csv({}): {}", *csv, ares_strerror(status));
            return make_error_code(errc::other);
        }
    }
    return self;
}

void Channel::query(const std::string& name, int type, OnAnswer on_answer) {
    if (!channel_) {
        on_answer(ARES_EDESTRUCTION, {});
        return;
    }
    auto arg = std::make_unique<OnAnswer>(std::move(on_answer));
    // c-ares owns `arg` until it calls on_query_done, which it does exactly once: with the
    // answer, on failure (perhaps from inside this call), or from ares_destroy.
    ares_query(channel_.get(), name.c_str(), kClassIn, type, &Channel::on_query_done,
               arg.release());
    arm_timer();
}

void Channel::query_ad(const std::string& name, int type, OnAnswer on_answer) {
    if (!channel_) {
        on_answer(ARES_EDESTRUCTION, {});
        return;
    }
    unsigned char* buf = nullptr;
    int len = 0;
    // RD set; the id is c-ares's to choose (ares_send writes its own); no EDNS0 (see open()).
    const int status = ares_create_query(name.c_str(), kClassIn, type, 0, 1, &buf, &len, 0);
    if (status != ARES_SUCCESS || buf == nullptr || len < static_cast<int>(kHeaderSize)) {
        if (buf != nullptr) ares_free_string(buf);
        on_answer(status == ARES_SUCCESS ? ARES_EBADQUERY : status, {});
        return;
    }
    buf[3] = static_cast<unsigned char>(buf[3] | 0x20);  // AD, in the header's second flags octet
    auto arg = std::make_unique<OnAnswer>(std::move(on_answer));
    ares_send(channel_.get(), buf, len, &Channel::on_query_done, arg.release());
    ares_free_string(buf);
    arm_timer();
}

void Channel::on_query_done(void* arg, int status, int /*timeouts*/, unsigned char* abuf,
                            int alen) {
    const std::unique_ptr<OnAnswer> on_answer{static_cast<OnAnswer*>(arg)};
    std::span<const std::uint8_t> answer;
    if (status == ARES_SUCCESS && abuf != nullptr && alen > 0) {
        answer = {abuf, static_cast<std::size_t>(alen)};
    }
    (*on_answer)(status, answer);
}

void Channel::close() {
    if (!channel_) return;
    // Null first, so that handlers still queued see a closed channel; then ares_destroy,
    // which answers every query with ARES_EDESTRUCTION and reports its sockets closed.
    AresChannel doomed = std::move(channel_);
    doomed.reset();
    for (auto& [fd, watch] : watches_) watch->release();
    watches_.clear();
    timer_.cancel();
}

void Channel::on_socket_state(void* data, ares_socket_t fd, int readable, int writable) {
    static_cast<Channel*>(data)->socket_state(fd, readable != 0, writable != 0);
}

void Channel::socket_state(ares_socket_t fd, bool readable, bool writable) {
    if (!readable && !writable) {
        // c-ares is about to close the socket (and may soon reuse its number).
        if (auto it = watches_.find(fd); it != watches_.end()) {
            it->second->release();
            watches_.erase(it);
        }
        return;
    }
    auto& watch = watches_[fd];
    if (!watch) {
        auto fresh = std::make_shared<Watch>(strand_, fd);
        error_code ec;
        fresh->descriptor.assign(fd, ec);
        if (ec) {
            // Unwatched, the query still ends: by the timer, as a timeout.
            log::warn("dns: cannot watch the c-ares socket {}: {}", fd, ec.message());
            watches_.erase(fd);
            return;
        }
        watch = std::move(fresh);
    }
    watch->want_read = readable;
    watch->want_write = writable;
    arm(watch);
}

void Channel::arm(const std::shared_ptr<Watch>& watch) {
    if (watch->want_read && !watch->reading) {
        watch->reading = true;
        watch->descriptor.async_wait(
            asio::posix::stream_descriptor::wait_read,
            [self = shared_from_this(), watch](error_code ec) { self->ready(watch, false, ec); });
    }
    if (watch->want_write && !watch->writing) {
        watch->writing = true;
        watch->descriptor.async_wait(
            asio::posix::stream_descriptor::wait_write,
            [self = shared_from_this(), watch](error_code ec) { self->ready(watch, true, ec); });
    }
}

void Channel::ready(const std::shared_ptr<Watch>& watch, bool for_write, error_code ec) {
    (for_write ? watch->writing : watch->reading) = false;
    if (!watch->open || !channel_ || ec == asio::error::operation_aborted) return;
    // Even after an error, let c-ares look: it finds the socket's error and fails over.
    const ares_socket_t fd = watch->fd;
    ares_process_fd(channel_.get(), for_write ? ARES_SOCKET_BAD : fd,
                    for_write ? fd : ARES_SOCKET_BAD);
    // c-ares may have closed the socket, or changed what it waits for, meanwhile. After an
    // error, do not wait again on a socket that could fire at once for ever; the query
    // ends by the timer if c-ares keeps it.
    if (watch->open && !ec) arm(watch);
    arm_timer();
}

void Channel::arm_timer() {
    if (!channel_) {
        timer_.cancel();
        return;
    }
    timeval tv{};
    const timeval* next = ares_timeout(channel_.get(), nullptr, &tv);
    if (next == nullptr) {  // no query pending
        timer_.cancel();
        return;
    }
    timer_.expires_after(std::chrono::seconds{next->tv_sec} +
                         std::chrono::microseconds{next->tv_usec});
    timer_.async_wait([self = shared_from_this()](error_code ec) {
        if (ec == asio::error::operation_aborted || !self->channel_) return;
        // No socket is ready: this only times out, and retransmits, what is due.
        ares_process_fd(self->channel_.get(), ARES_SOCKET_BAD, ARES_SOCKET_BAD);
        self->arm_timer();
    });
}

}  // namespace posthorn::dns::detail
