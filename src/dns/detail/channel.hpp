// One c-ares channel driven by Asio. c-ares tells us (ARES_OPT_SOCK_STATE_CB) which of its
// sockets to watch for reading or writing; each is wrapped in a stream_descriptor that only
// waits (async_wait) and is released, never closed, when c-ares is done with it; readiness
// goes back through ares_process_fd. A steady_timer set from ares_timeout() runs the
// retransmissions and timeouts.
//
// Everything here but open() and strand() runs on strand(): c-ares is not thread-safe, and
// its callbacks (query answers, socket state) come from inside the calls we make.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "dns/cares_resolver.hpp"
#include "dns/detail/ares.hpp"

namespace posthorn::dns::detail {

class Channel : public std::enable_shared_from_this<Channel> {
  public:
    // Called exactly once per query, on the strand: an ARES_* status and the raw answer
    // (empty unless the status is ARES_SUCCESS).
    using OnAnswer = std::function<void(int status, std::span<const std::uint8_t> answer)>;

    static Result<std::shared_ptr<Channel>> open(const asio::any_io_executor& executor,
                                                 const CaresResolver::Options& options);
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    const asio::any_io_executor& strand() const noexcept { return strand_; }

    // On the strand only. After close(), answers ARES_EDESTRUCTION at once.
    void query(const std::string& name, int type, OnAnswer on_answer);
    // The same with the AD bit set in the query (RFC 6840 §5.7: asks a validating server to
    // say whether it validated the answer), sent as built (ares_send). The answer comes
    // whatever its RCODE: the caller reads it (ARES_SUCCESS with the message).
    void query_ad(const std::string& name, int type, OnAnswer on_answer);
    // On the strand (or with no handler of ours left to run). Pending queries answer
    // ARES_EDESTRUCTION; sockets are closed by c-ares. Idempotent.
    void close();
    bool closed() const noexcept { return !channel_; }

  private:
    struct Watch;
    explicit Channel(asio::any_io_executor strand);

    static void on_socket_state(void* data, ares_socket_t fd, int readable, int writable);
    static void on_query_done(void* arg, int status, int timeouts, unsigned char* abuf, int alen);
    void socket_state(ares_socket_t fd, bool readable, bool writable);
    void arm(const std::shared_ptr<Watch>& watch);
    void ready(const std::shared_ptr<Watch>& watch, bool for_write, error_code ec);
    void arm_timer();

    asio::any_io_executor strand_;
    asio::steady_timer timer_;
    std::unordered_map<ares_socket_t, std::shared_ptr<Watch>> watches_;
    AresChannel channel_;  // last: destroyed first, while the members its callbacks use live
};

}  // namespace posthorn::dns::detail
