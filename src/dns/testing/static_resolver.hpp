// dns/testing/static_resolver.hpp — a working in-memory zone behind the Resolver seam, for
// tests (CONVENTIONS §9; KumoMTA's TestResolver). Not a mock: it answers as a recursive
// server would from the records it was given.
//
// Names compare case-insensitively, with or without the trailing dot. A name nobody added
// answers errc::nxdomain; a name with records of other types only, errc::no_data;
// add_failure(name, why) makes every lookup of that name fail with `why`. txt(), mx() and
// addresses() follow a CNAME of the name (up to 8 deep; a longer chain or a loop answers
// servfail), cname() does not. MX answers are sorted by preference, addresses IPv4 first,
// otherwise in the order added.
//
// Thread-safety: fill it first; after that, lookups may run from any thread at once. The
// coroutines complete without suspending.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dns/resolver.hpp"

namespace posthorn::dns {

class StaticResolver final : public Resolver {
  public:
    // One TXT RR of `name` (call again for a second RR).
    StaticResolver& add_txt(const std::string& name, std::string text);
    StaticResolver& add_cname(const std::string& name, const std::string& target);
    // `host` "" or "." is the null MX of RFC 7505.
    StaticResolver& add_mx(const std::string& domain, const std::string& host,
                           std::uint16_t preference = 10);
    StaticResolver& add_address(const std::string& host, const asio::ip::address& ip);
    // One TLSA RR of `name`; `authenticated` is the AD bit of every TLSA answer of `name`
    // (the last call's word).
    StaticResolver& add_tlsa(const std::string& name, TlsaRecord record, bool authenticated);
    // servfail, timeout, nxdomain, ...: every lookup of `name` fails so.
    StaticResolver& add_failure(const std::string& name, errc why);

    asio::awaitable<Result<std::vector<std::string>>> txt(std::string name) override;
    asio::awaitable<Result<std::vector<std::string>>> cname(std::string name) override;
    asio::awaitable<Result<std::vector<MxRecord>>> mx(std::string name) override;
    asio::awaitable<Result<std::vector<asio::ip::address>>> addresses(std::string host) override;
    asio::awaitable<Result<TlsaAnswer>> tlsa(std::string name) override;

  private:
    struct Node {
        std::vector<std::string> txt;
        std::vector<std::string> cnames;
        std::vector<MxRecord> mx;
        std::vector<asio::ip::address> addresses;
        std::vector<TlsaRecord> tlsa;
        bool tlsa_authenticated = false;
        std::optional<errc> failure;
    };
    Node& node(const std::string& name);
    // The node that answers a query of `name` for a type: after CNAMEs when `follow`.
    template <class Field>
    Result<Field> find(const std::string& name, Field Node::*field, bool follow) const;

    std::map<std::string, Node> zone_;  // by detail::canonical_name
};

}  // namespace posthorn::dns
