// core/client_limits.hpp — what one client may take of a listener (Postfix's anvil is the
// model): connections open at once and new connections a minute, counted per client. A
// client is an IPv4 address, or an IPv6 /64 (one host's usual share: counting addresses
// there would let one host take as many places as it has addresses). Clients in the
// trusted networks (the operator's hosts, load balancers) are not counted against
// per-client bounds. When the listener is full, a newcomer holding fewer connections than
// the busiest client may have one of that client's idle connections closed to make room
// (the servers do the closing: they know which connections are idle).
//
// Thread-safe: places are taken and given back from every network thread.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/asio.hpp"
#include "core/result.hpp"

namespace posthorn::core {

// An address block: "10.0.0.0/8", "2001:db8::/32", or one address ("127.0.0.1", "::1").
struct Network {
    asio::ip::address base;
    int prefix = 0;
    bool contains(const asio::ip::address& a) const;
};
std::optional<Network> parse_network(std::string_view text);
bool in_networks(const std::vector<Network>& nets, const asio::ip::address& a);

// The client an address counts for: the IPv4 address (IPv4-mapped IPv6 too) or the IPv6
// /64, as text ("192.0.2.1", "2001:db8:1:2::/64").
std::string client_of(const asio::ip::address& a);

struct ClientLimitOptions {
    std::size_t max_connections = 1000;           // on the listener
    std::size_t max_connections_per_client = 50;  // 0: no bound
    std::size_t connection_rate_per_client = 0;   // new connections a minute; 0: no bound
    std::vector<Network> trusted;                 // not bound per client
};

class ClientLimits {
  public:
    using Clock = std::chrono::steady_clock;

    explicit ClientLimits(ClientLimitOptions options);
    ClientLimits(const ClientLimits&) = delete;
    ClientLimits& operator=(const ClientLimits&) = delete;

    // A connection's place, given back when destroyed. Refused: `refusal` says why.
    class Place {
      public:
        Place() = default;
        Place(Place&& other) noexcept;
        Place& operator=(Place&& other) noexcept;
        ~Place();
        Place(const Place&) = delete;
        Place& operator=(const Place&) = delete;

        bool taken() const { return owner_ != nullptr; }
        const char* refusal = nullptr;  // "too many connections from your address", …
        // Refused only because the listener is full (a place may be made: make_room).
        bool full = false;
        std::string client;

      private:
        friend class ClientLimits;
        ClientLimits* owner_ = nullptr;
        bool counted_ = false;  // counted against the client (not trusted)
    };

    // Takes a place for a new connection from `a`. With `over_cap`, the listener's bound is
    // passed by one (a connection of the busiest client is being closed to make room).
    Place take(const asio::ip::address& a, Clock::time_point now, bool over_cap = false);

    // True from three quarters of max_connections: idle timeouts are shortened.
    bool near_full() const;
    std::size_t open() const;
    // Connections `client` holds (0 for a trusted one: it is not counted).
    std::size_t held_by(const std::string& client) const;
    // The client to take a place from for a newcomer who holds `newcomer_holds`: the one
    // holding the most, when that is at least two more; nullopt otherwise.
    std::optional<std::string> room_from(std::size_t newcomer_holds) const;
    const ClientLimitOptions& options() const { return options_; }

  private:
    struct Rate {
        Clock::time_point window;  // the start of the current minute
        std::size_t now = 0, before = 0;
    };
    void give_back(const Place& p);
    // The connections of `client` in the last minute, the one about to be made included.
    bool too_fast(const std::string& client, Clock::time_point now);

    ClientLimitOptions options_;
    mutable std::mutex mutex_;
    std::size_t open_ = 0;
    std::unordered_map<std::string, std::size_t> held_;
    std::unordered_map<std::string, Rate> rates_;
    Clock::time_point last_prune_{};
};

}  // namespace posthorn::core
