// core/testing/loopback_client.hpp — the client side of a server test: one TCP connection
// to a server on loopback, driven from the test's own thread, where every operation has a
// deadline (a server that never answers fails the test instead of hanging it). For tests
// only (CONVENTIONS §12); the servers under test run on a core::IoPool of their own.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/asio.hpp"
#include "core/result.hpp"

namespace posthorn::core::testing {

class LoopbackClient {
  public:
    static constexpr std::chrono::milliseconds kWait{2000};

    LoopbackClient() = default;
    LoopbackClient(const LoopbackClient&) = delete;
    LoopbackClient& operator=(const LoopbackClient&) = delete;

    // Connects to `server`, from the address `from` when given (127.0.0.2, say: the whole
    // of 127/8 is loopback on Linux).
    error_code connect(const asio::ip::tcp::endpoint& server,
                       std::optional<asio::ip::address> from = std::nullopt) {
        error_code ec;
        socket_.open(server.protocol(), ec);
        if (!ec && from) socket_.bind({*from, 0}, ec);
        if (!ec) socket_.set_option(asio::ip::tcp::no_delay(true), ec);
        if (ec) return ec;
        return wait([&](auto handler) { socket_.async_connect(server, std::move(handler)); }).ec;
    }

    asio::ip::tcp::socket& socket() { return socket_; }
    asio::io_context& context() { return io_; }

    struct Done {
        error_code ec;
        std::size_t bytes = 0;
    };

    // Runs the asynchronous operation that `start(handler)` begins on this client's context
    // until it completes, for at most `limit`; past it, the operation is cancelled and the
    // answer is asio::error::timed_out.
    template <class Start>
    Done wait(Start&& start, std::chrono::milliseconds limit = kWait) {
        std::optional<Done> done;
        start([&done](error_code ec, auto... bytes) {
            done = Done{ec, (std::size_t{0} + ... + bytes)};
        });
        io_.restart();
        io_.run_for(limit);
        if (done) return *done;
        error_code ignored;
        socket_.cancel(ignored);
        io_.restart();
        io_.run();
        return {asio::error::timed_out, 0};
    }

    // All of `bytes`, on `stream` (the socket, or a TLS stream over it).
    template <class Stream>
    error_code write(Stream& stream, std::string_view bytes) {
        return wait([&](auto handler) {
                   asio::async_write(stream, asio::buffer(bytes), std::move(handler));
               })
            .ec;
    }
    error_code write(std::string_view bytes) { return write(socket_, bytes); }

    // `bytes` a few at a time, each piece its own write and segment (a pause between them),
    // so that the server sees a request or command trickle in.
    error_code trickle(std::string_view bytes, std::size_t piece,
                       std::chrono::microseconds pause = std::chrono::microseconds(500)) {
        for (std::size_t at = 0; at < bytes.size(); at += piece) {
            if (auto ec = write(bytes.substr(at, piece))) return ec;
            std::this_thread::sleep_for(pause);
        }
        return {};
    }

    // What arrives next (at least one byte), appended to `into`; asio::error::eof once the
    // server has closed, asio::error::timed_out when nothing came within `limit`.
    template <class Stream>
    error_code read_some(Stream& stream, std::string& into,
                         std::chrono::milliseconds limit = kWait) {
        char chunk[16384];
        auto done = wait(
            [&](auto handler) { stream.async_read_some(asio::buffer(chunk), std::move(handler)); },
            limit);
        into.append(chunk, done.bytes);
        return done.ec;
    }
    error_code read_some(std::string& into, std::chrono::milliseconds limit = kWait) {
        return read_some(socket_, into, limit);
    }

    // Reads until the server closes, appending to `into`; false if it did not close within
    // `limit` (or the connection broke some other way than by its end).
    bool read_to_eof(std::string& into, std::chrono::milliseconds limit = kWait) {
        const auto until = std::chrono::steady_clock::now() + limit;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left <= std::chrono::milliseconds::zero()) return false;
            const auto ec = read_some(into, left);
            if (ec == asio::error::eof || ec == asio::error::connection_reset) return true;
            if (ec) return false;
        }
    }

    void close() {
        error_code ignored;
        socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        socket_.close(ignored);
    }

  private:
    asio::io_context io_{1};
    asio::ip::tcp::socket socket_{io_};
};

// Polls `done()` every millisecond until it holds, for at most `limit`; its last answer.
template <class Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = LoopbackClient::kWait) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= until) return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace posthorn::core::testing
