#include "core/client_limits.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace posthorn::core {
namespace {

using namespace std::chrono_literals;

// The first `bits` bits of a and b agree.
template <std::size_t N>
bool same_prefix(const std::array<unsigned char, N>& a, const std::array<unsigned char, N>& b,
                 int bits) {
    for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
        const unsigned mask = bits >= 8 ? 0xFFu : (0xFFu << (8 - bits)) & 0xFFu;
        if ((a[i] & mask) != (b[i] & mask)) return false;
    }
    return true;
}

// IPv4-mapped IPv6 addresses are their IPv4 address.
asio::ip::address plain(const asio::ip::address& a) {
    if (a.is_v6() && a.to_v6().is_v4_mapped())
        return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
    return a;
}

}  // namespace

bool Network::contains(const asio::ip::address& addr) const {
    const auto a = plain(addr);
    if (a.is_v4() != base.is_v4()) return false;
    if (a.is_v4()) return same_prefix(a.to_v4().to_bytes(), base.to_v4().to_bytes(), prefix);
    return same_prefix(a.to_v6().to_bytes(), base.to_v6().to_bytes(), prefix);
}

std::optional<Network> parse_network(std::string_view text) {
    const auto slash = text.find('/');
    error_code ec;
    const auto base = asio::ip::make_address(std::string(text.substr(0, slash)), ec);
    if (ec) return std::nullopt;
    const auto b = plain(base);
    Network n{.base = b, .prefix = b.is_v4() ? 32 : 128};
    if (slash == std::string_view::npos) return n;
    const auto bits = text.substr(slash + 1);
    int p = -1;
    auto [end, rc] = std::from_chars(bits.data(), bits.data() + bits.size(), p);
    if (bits.empty() || rc != std::errc{} || end != bits.data() + bits.size() || p < 0 ||
        p > n.prefix)
        return std::nullopt;
    n.prefix = p;
    return n;
}

bool in_networks(const std::vector<Network>& nets, const asio::ip::address& a) {
    return std::any_of(nets.begin(), nets.end(), [&](const Network& n) { return n.contains(a); });
}

std::string client_of(const asio::ip::address& addr) {
    const auto a = plain(addr);
    if (a.is_v4()) return a.to_string();
    auto b = a.to_v6().to_bytes();
    std::fill(b.begin() + 8, b.end(), 0);
    return asio::ip::address_v6(b).to_string() + "/64";
}

ClientLimits::ClientLimits(ClientLimitOptions options) : options_(std::move(options)) {}

ClientLimits::Place::Place(Place&& other) noexcept
    : refusal(other.refusal),
      full(other.full),
      client(std::move(other.client)),
      owner_(std::exchange(other.owner_, nullptr)),
      counted_(other.counted_) {}

ClientLimits::Place& ClientLimits::Place::operator=(Place&& other) noexcept {
    if (this != &other) {
        if (owner_) owner_->give_back(*this);
        refusal = other.refusal;
        full = other.full;
        client = std::move(other.client);
        owner_ = std::exchange(other.owner_, nullptr);
        counted_ = other.counted_;
    }
    return *this;
}

ClientLimits::Place::~Place() {
    if (owner_) owner_->give_back(*this);
}

bool ClientLimits::too_fast(const std::string& client, Clock::time_point now) {
    if (options_.connection_rate_per_client == 0) return false;
    if (now - last_prune_ >= 60s) {
        last_prune_ = now;
        std::erase_if(rates_, [&](const auto& kv) { return now - kv.second.window >= 120s; });
    }
    auto& r = rates_[client];
    const auto elapsed = now - r.window;
    if (r.window == Clock::time_point{} || elapsed >= 120s) {  // new, or quiet for long
        r = Rate{.window = now};
    } else if (elapsed >= 60s) {  // the next minute: the current one becomes the previous
        r.window += 60s;
        r.before = std::exchange(r.now, 0);
    }
    // The previous minute's count weighted by how much of it the last 60 s still cover.
    const double left = 1.0 - std::chrono::duration<double>(now - r.window) / 60s;
    ++r.now;  // every attempt counts, refused or not: hammering keeps a client out
    return static_cast<double>(r.before) * left + static_cast<double>(r.now) >
           static_cast<double>(options_.connection_rate_per_client);
}

ClientLimits::Place ClientLimits::take(const asio::ip::address& a, Clock::time_point now,
                                       bool over_cap) {
    Place p;
    p.client = client_of(a);
    const bool trusted = in_networks(options_.trusted, a);
    std::lock_guard lock(mutex_);
    if (!trusted && too_fast(p.client, now)) {
        p.refusal = "too many connections from your address in the last minute";
        return p;
    }
    const auto held = trusted ? 0 : held_[p.client];
    if (!trusted && options_.max_connections_per_client > 0 &&
        held >= options_.max_connections_per_client) {
        p.refusal = "too many connections from your address";
    } else if (open_ >= options_.max_connections + (over_cap ? 1 : 0)) {
        p.refusal = "too many connections";
        p.full = true;
    }
    if (p.refusal) {
        if (!trusted && held == 0) held_.erase(p.client);
        return p;
    }
    ++open_;
    if (!trusted) ++held_[p.client];
    p.owner_ = this;
    p.counted_ = !trusted;
    return p;
}

void ClientLimits::give_back(const Place& p) {
    std::lock_guard lock(mutex_);
    --open_;
    if (!p.counted_) return;
    if (auto it = held_.find(p.client); it != held_.end() && --it->second == 0) held_.erase(it);
}

bool ClientLimits::near_full() const {
    std::lock_guard lock(mutex_);
    return open_ * 4 >= options_.max_connections * 3;
}

std::size_t ClientLimits::open() const {
    std::lock_guard lock(mutex_);
    return open_;
}

std::size_t ClientLimits::held_by(const std::string& client) const {
    std::lock_guard lock(mutex_);
    auto it = held_.find(client);
    return it == held_.end() ? 0 : it->second;
}

std::optional<std::string> ClientLimits::room_from(std::size_t newcomer_holds) const {
    std::lock_guard lock(mutex_);
    const std::pair<const std::string, std::size_t>* busiest = nullptr;
    for (const auto& kv : held_)
        if (!busiest || kv.second > busiest->second) busiest = &kv;
    if (!busiest || busiest->second < newcomer_holds + 2) return std::nullopt;
    return busiest->first;
}

}  // namespace posthorn::core
