// api/rate_limiter.hpp — the send rate per account (limits.send_rate_per_minute): emails
// accepted in any 60 seconds. A send reserves a slot before it is built and stored, and gives
// it back if it is refused or turns out to be an idempotent replay, so that a refused request
// counts nothing. Two ways to count, one rule:
//   LocalRateLimiter   one node (SQLite): a sliding window per account in memory;
//   SharedRateLimiter  several nodes on one store (PostgreSQL): counted in the store per
//                      account and second (store::SendRateStore), so that the limit holds
//                      across all nodes, not per node.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/asio.hpp"
#include "core/clock.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace posthorn::api {

class RateLimiter {
  public:
    virtual ~RateLimiter() = default;
    static constexpr UnixMs kWindowMs = 60'000;

    struct Denied {
        int retry_after_s;  // whole seconds until a slot frees up (at least 1)
    };
    // A slot for one send of the account at `now`, or how long to wait; a store's error when
    // the count could not be read.
    virtual asio::awaitable<Result<std::optional<Denied>>> reserve(std::string account_id,
                                                                   UnixMs now) = 0;
    // Gives back the slot reserve() took at `reserved_at`.
    virtual void release(const std::string& account_id, UnixMs reserved_at) = 0;
};

class LocalRateLimiter final : public RateLimiter {
  public:
    explicit LocalRateLimiter(int per_minute) : per_minute_(per_minute) {}
    asio::awaitable<Result<std::optional<Denied>>> reserve(std::string account_id,
                                                           UnixMs now) override;
    void release(const std::string& account_id, UnixMs reserved_at) override;

    // reserve() without the awaitable (it never waits).
    std::optional<Denied> try_reserve(const std::string& account_id, UnixMs now);

  private:
    int per_minute_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::deque<UnixMs>> windows_;  // guarded by mutex_
};

// Counts whole seconds: a send at 10.9 s leaves the window at 70 s. A round trip to the store
// for each send would put the database on every send's path, so a node takes slots from the
// store in grants — one at a time while an account sends slowly, twice as many each time it
// comes back for more within a second, up to 1/20 of the limit (at most 256) — and uses them
// within the second they were granted for. Slots granted and not used (and slots given back)
// return to the store within about a second (run()), so that the other nodes can have them:
// the limit counts no send twice and none that was not accepted, except for up to one
// grant per node and account for about a second, and for a node's last grant when it stops.
class SharedRateLimiter final : public RateLimiter {
  public:
    SharedRateLimiter(store::SendRateStore& store, int per_minute);
    asio::awaitable<Result<std::optional<Denied>>> reserve(std::string account_id,
                                                           UnixMs now) override;
    void release(const std::string& account_id, UnixMs reserved_at) override;
    // Returns the slots not used to the store once a second, until its executor stops.
    asio::awaitable<void> run(const core::Clock& clock);
    // Returns them now (what run() does each second); answers how many went back.
    asio::awaitable<std::int64_t> return_unused(UnixMs now);

    std::int64_t max_grant() const { return max_grant_; }

  private:
    struct Grant {
        std::int64_t second = 0;  // the second the slots in hand count in
        std::int64_t left = 0;    // slots in hand
        std::int64_t size = 1;    // slots the next grant asks for
    };
    struct Return {
        std::string account_id;
        std::int64_t second;
        std::int64_t n;
    };
    std::int64_t since(std::int64_t second) const { return second - kWindowMs / 1000 + 1; }
    // Moves the slots in hand of an earlier second to returns_. Under mutex_.
    void drop_stale(const std::string& account_id, Grant& g, std::int64_t second);

    store::SendRateStore& store_;
    std::int64_t per_minute_;
    std::int64_t max_grant_;
    std::mutex mutex_;
    std::unordered_map<std::string, Grant> grants_;  // guarded by mutex_
    std::vector<Return> returns_;                    // guarded by mutex_
};

}  // namespace posthorn::api
