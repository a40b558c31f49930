#include "dns/testing/static_resolver.hpp"

#include <algorithm>

#include "dns/detail/names.hpp"
#include "dns/detail/replies.hpp"

namespace posthorn::dns {
namespace {
constexpr int kMaxChain = 8;
}  // namespace

StaticResolver::Node& StaticResolver::node(const std::string& name) {
    return zone_[detail::canonical_name(name)];
}

StaticResolver& StaticResolver::add_txt(const std::string& name, std::string text) {
    node(name).txt.push_back(std::move(text));
    return *this;
}

StaticResolver& StaticResolver::add_cname(const std::string& name, const std::string& target) {
    node(name).cnames.push_back(detail::canonical_name(target));
    return *this;
}

StaticResolver& StaticResolver::add_mx(const std::string& domain, const std::string& host,
                                       std::uint16_t preference) {
    auto& records = node(domain).mx;
    records.push_back(MxRecord{preference, detail::canonical_name(host)});
    detail::sort_mx(records);
    return *this;
}

StaticResolver& StaticResolver::add_address(const std::string& host, const asio::ip::address& ip) {
    auto& list = node(host).addresses;
    list.push_back(ip);
    std::stable_partition(list.begin(), list.end(), [](const auto& a) { return a.is_v4(); });
    return *this;
}

StaticResolver& StaticResolver::add_tlsa(const std::string& name, TlsaRecord record,
                                         bool authenticated) {
    auto& n = node(name);
    n.tlsa.push_back(std::move(record));
    n.tlsa_authenticated = authenticated;
    return *this;
}

StaticResolver& StaticResolver::add_failure(const std::string& name, errc why) {
    node(name).failure = why;
    return *this;
}

template <class Field>
Result<Field> StaticResolver::find(const std::string& name, Field Node::*field, bool follow) const {
    std::string current = detail::canonical_name(name);
    for (int depth = 0; depth <= kMaxChain; ++depth) {
        const auto it = zone_.find(current);
        if (it == zone_.end()) return make_error_code(errc::nxdomain);
        const Node& n = it->second;
        if (n.failure) return make_error_code(*n.failure);
        if (!(n.*field).empty()) return n.*field;
        if (!follow || n.cnames.empty()) return make_error_code(errc::no_data);
        current = n.cnames.front();
    }
    return make_error_code(errc::servfail);
}

asio::awaitable<Result<std::vector<std::string>>> StaticResolver::txt(std::string name) {
    co_return find(name, &Node::txt, true);
}

asio::awaitable<Result<std::vector<std::string>>> StaticResolver::cname(std::string name) {
    co_return find(name, &Node::cnames, false);
}

asio::awaitable<Result<std::vector<MxRecord>>> StaticResolver::mx(std::string name) {
    co_return find(name, &Node::mx, true);
}

asio::awaitable<Result<std::vector<asio::ip::address>>> StaticResolver::addresses(
    std::string host) {
    co_return find(host, &Node::addresses, true);
}

asio::awaitable<Result<TlsaAnswer>> StaticResolver::tlsa(std::string name) {
    auto records = find(name, &Node::tlsa, true);
    if (!records) co_return records.error();
    co_return TlsaAnswer{
        .records = std::move(*records),
        .authenticated = zone_.at(detail::canonical_name(name)).tlsa_authenticated};
}

}  // namespace posthorn::dns
