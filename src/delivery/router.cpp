#include "delivery/router.hpp"

#include <boost/asio/ip/address.hpp>

#include "core/address.hpp"
#include "dns/errors.hpp"

namespace posthorn::delivery {

namespace {

using Route = std::variant<std::vector<Target>, AttemptResult>;
using domain::Trouble;

AttemptResult trouble(Trouble t, std::string text) {
    return AttemptResult{.stage = Stage::route, .trouble = t, .text = std::move(text)};
}

AttemptResult dns_trouble(const std::string& what, const error_code& ec) {
    if (ec == dns::errc::nxdomain)
        return trouble(Trouble::no_such_domain, what + ": the domain does not exist (NXDOMAIN)");
    return trouble(Trouble::dns_temporary, what + ": " + ec.message());
}

// Addresses of a host; an IP literal stands for itself.
asio::awaitable<Result<std::vector<asio::ip::address>>> addresses_of(dns::Resolver& resolver,
                                                                     std::string host) {
    error_code ec;
    auto literal = asio::ip::make_address(host, ec);
    if (!ec) co_return std::vector<asio::ip::address>{literal};
    co_return co_await resolver.addresses(std::move(host));
}

}  // namespace

asio::awaitable<Route> route(dns::Resolver& resolver, std::string domain,
                             std::optional<Relay> relay, std::uint16_t mx_port,
                             bool allow_private) {
    std::vector<Target> out;
    if (relay) {
        auto addrs = co_await addresses_of(resolver, relay->host);
        if (!addrs) co_return Route(dns_trouble("relay " + relay->host, addrs.error()));
        for (const auto& a : *addrs) out.push_back({relay->host, {a, relay->port}});
        co_return Route(std::move(out));
    }
    auto mx = co_await resolver.mx(domain);
    std::vector<std::string> hosts;
    if (mx) {
        // RFC 7505: a single MX of "." says the domain takes no mail.
        if (mx->size() == 1 && mx->front().host.empty())
            co_return Route(
                trouble(Trouble::null_mx, domain + " takes no mail (null MX, RFC 7505)"));
        for (const auto& r : *mx)
            if (!r.host.empty()) hosts.push_back(r.host);
    } else if (mx.error() == dns::errc::no_data) {
        hosts.push_back(domain);  // RFC 5321 §5.1: no MX, so the domain itself
    } else {
        co_return Route(dns_trouble("MX " + domain, mx.error()));
    }
    error_code last;
    std::optional<asio::ip::address> refused;  // a private address left out
    for (const auto& host : hosts) {
        auto addrs = co_await addresses_of(resolver, host);
        if (!addrs) {
            last = addrs.error();
            continue;
        }
        for (const auto& a : *addrs) {
            if (!allow_private && core::is_private_address(a)) {
                refused = a;
                continue;
            }
            out.push_back({host, {a, mx_port}});
        }
    }
    if (out.empty() && refused)
        co_return Route(
            trouble(Trouble::no_address, "the mail servers of " + domain +
                                             " are at private or special-purpose addresses only (" +
                                             refused->to_string() +
                                             "), which delivery.allow_private_targets refuses"));
    if (out.empty()) {
        if (hosts.size() == 1 && hosts.front() == domain && dns::is_not_found(last))
            co_return Route(
                trouble(Trouble::no_address, domain + " has no MX and no address to deliver to"));
        co_return Route(dns_trouble("addresses of the MX hosts of " + domain, last));
    }
    co_return Route(std::move(out));
}

}  // namespace posthorn::delivery
