// dns/cares_resolver.hpp — the Resolver that asks real DNS servers, through c-ares.
//
// c-ares runs on a strand of the executor given to create(): its sockets are watched by
// Asio there (never a blocking call, never a thread of its own), and a timer drives its
// retransmissions. Queries are absolute (ares_query, no search list, no HOSTALIASES), over
// UDP without EDNS0; a truncated answer is asked again over TCP. Each server gets `timeout`
// per try, doubling each round (c-ares 1.18), for `tries` rounds; a server that does not
// answer, or cannot be reached, is failed over. A SERVFAIL or REFUSED answer is the answer
// (errc::servfail, errc::refused): the next server is not asked (see detail/channel.cpp).
//
// Not here: caching (a decorator's job), DNSSEC validation (TLSA answers carry the
// recursor's AD bit; trust it only from a validating server of ours). Names are not IDNA-encoded
// here: pass A-labels.
//
// Thread-safety: every lookup may be called from any thread or coroutine, concurrently;
// the caller resumes on its own executor. A lookup honours the cancellation slot of its
// completion handler: on cancellation it completes with errc::cancelled at once (the query
// itself runs to its end in c-ares, unheard). Destroy the resolver before the io_context
// it runs on; pending lookups then complete with errc::cancelled.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "dns/resolver.hpp"

namespace posthorn::dns {

struct ServerAddress {
    std::string ip;  // an IPv4 or IPv6 literal
    std::uint16_t port = 53;
};

// ares_library_init / ares_library_cleanup: app calls them once, before any resolver
// exists and after the last one is gone, from one thread (c-ares keeps a count, so calls
// may nest). library_init throws std::runtime_error on failure (start-up only).
void library_init();
void library_cleanup() noexcept;

class CaresResolver final : public Resolver {
  public:
    struct Options {
        std::vector<ServerAddress> servers;  // empty: the nameservers of /etc/resolv.conf
        std::chrono::milliseconds timeout{2000};
        int tries = 2;
    };

    // Fails with std::errc::invalid_argument for a bad option (not an IP literal, port 0,
    // timeout or tries below 1), with errc::other when c-ares cannot be set up (or
    // library_init() was not called).
    static Result<std::unique_ptr<CaresResolver>> create(const asio::any_io_executor& executor,
                                                         const Options& options);

    CaresResolver(const CaresResolver&) = delete;
    CaresResolver& operator=(const CaresResolver&) = delete;
    // Cancels pending queries: they complete with errc::cancelled.
    ~CaresResolver() override;  // NOLINT(bugprone-exception-escape): see the .cpp

    // Closes the channel now and waits until it is closed (call it from outside the
    // resolver's executor, while that executor still runs): pending lookups complete with
    // errc::cancelled, and every later lookup too. The object stays valid, so coroutines
    // still holding a reference may call it until their io_context is stopped. Idempotent.
    void close();

    asio::awaitable<Result<std::vector<std::string>>> txt(std::string name) override;
    asio::awaitable<Result<std::vector<std::string>>> cname(std::string name) override;
    asio::awaitable<Result<std::vector<MxRecord>>> mx(std::string name) override;
    asio::awaitable<Result<std::vector<asio::ip::address>>> addresses(std::string host) override;
    asio::awaitable<Result<TlsaAnswer>> tlsa(std::string name) override;

  private:
    struct Impl;
    explicit CaresResolver(std::shared_ptr<Impl> impl);
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::dns
