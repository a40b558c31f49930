// core/accept.hpp — what every server (HTTP, SMTP submission, SMTP inbound) does with its
// listening socket: accept connections, hand each to the next I/O context of the pool,
// run its session there, and keep the set of open connections so that stop() can reach
// them. Included by the servers' .cpp files only.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "core/asio.hpp"
#include "core/io_pool.hpp"
#include "core/log.hpp"

namespace posthorn::core {

// The connections a server has open. Sessions add and remove themselves from their own
// threads; stop() walks them from another.
template <class Conn>
class Connections {
  public:
    void add(const std::shared_ptr<Conn>& c) {
        std::lock_guard lock(mutex_);
        set_.insert(c);
    }
    void remove(const std::shared_ptr<Conn>& c) {
        std::lock_guard lock(mutex_);
        set_.erase(c);
    }
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return set_.size();
    }
    // `f(conn)` for each open connection, under the lock (post work; do not block).
    template <class F>
    void each(F&& f) const {
        std::lock_guard lock(mutex_);
        for (const auto& c : set_) f(c);
    }

  private:
    mutable std::mutex mutex_;
    std::unordered_set<std::shared_ptr<Conn>> set_;
};

// The default of accept_connections()'s `room`: there is always room for one more.
struct AlwaysRoom {
    asio::awaitable<void> operator()() const { co_return; }
};

// Accepts until `stopping` is set or the acceptor is closed. Each socket goes to the next
// context of `pool` (round-robin), where `make(socket)` builds its connection and
// `serve(conn)` — a coroutine — runs it; the connection is in `conns` while it runs. An
// exception out of a session is logged with `what`. `owner` (the server's state, which
// holds the acceptor and `conns`) is kept alive meanwhile. Before each accept, `room()` —
// a coroutine — returns once the server may take one more connection (until then the
// newcomers wait in the kernel's listen queue).
template <class Conn, class Make, class Serve, class Room = AlwaysRoom>
asio::awaitable<void> accept_connections(std::shared_ptr<void> owner,
                                         asio::ip::tcp::acceptor& acceptor, IoPool& pool,
                                         const std::atomic<bool>& stopping,
                                         Connections<Conn>& conns, const char* what, Make make,
                                         Serve serve, Room room = {}) {
    while (!stopping) {
        co_await room();
        if (stopping) break;
        auto& ctx = pool.next();
        auto [ec, socket] = co_await acceptor.async_accept(ctx, use_nothrow_awaitable);
        if (ec) {
            if (ec == asio::error::operation_aborted || stopping) break;
            // EMFILE and friends: wait a little rather than spin.
            log::warn("{} accept: {}", what, ec.message());
            asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(100));
            co_await t.async_wait(use_nothrow_awaitable);
            continue;
        }
        socket.set_option(asio::ip::tcp::no_delay(true), ec);
        std::shared_ptr<Conn> conn = make(std::move(socket));
        conns.add(conn);
        asio::co_spawn(ctx, serve(conn), [owner, conn, &conns, what](const std::exception_ptr& e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    log::error("{} session: {}", what, ex.what());
                }
            }
            conns.remove(conn);
        });
    }
}

}  // namespace posthorn::core
