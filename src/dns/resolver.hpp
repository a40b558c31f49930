// dns/resolver.hpp — the DNS questions the mail engine asks: TXT (SPF, DKIM, DMARC, MTA-STS),
// CNAME, MX (RFC 5321 §5.1), the addresses of a host, and TLSA (DANE, RFC 7672) with the
// DNSSEC AD bit of the answer. A seam (CONVENTIONS §9): CaresResolver
// asks real servers; testing/StaticResolver answers from an in-memory zone.
//
// Names are absolute (no search list) and may carry a trailing dot; hosts in answers come
// back lower-case, without the trailing dot. A name that does not exist answers
// errc::nxdomain, a name without a record of the asked type errc::no_data: both are answers
// (dns::is_not_found), not failures. Answers of TXT, MX and addresses follow CNAMEs, as a
// recursive server does (RFC 1034 §3.6.2).
//
// Not here (yet): TTLs, caching, DNSSEC validation of our own (the AD bit of a TLSA answer
// is the recursive server's word, RFC 6840 §5.7). Implementations say
// how they may be called from several threads; both given here may be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "dns/errors.hpp"

namespace posthorn::dns {

struct MxRecord {
    std::uint16_t preference = 0;
    std::string host;  // lower-case, no trailing dot; "" for the null MX "." of RFC 7505
    friend bool operator==(const MxRecord&, const MxRecord&) = default;
};

// A TLSA RR (RFC 6698 §2.1): certificate usage, selector, matching type, and the data.
struct TlsaRecord {
    std::uint8_t usage = 0;
    std::uint8_t selector = 0;
    std::uint8_t matching_type = 0;
    std::vector<std::uint8_t> data;
    friend bool operator==(const TlsaRecord&, const TlsaRecord&) = default;
};

struct TlsaAnswer {
    std::vector<TlsaRecord> records;
    // The answer came with the AD bit (RFC 4035 §3.2.3): the server validated it. Only as
    // good as the server and the path to it, so trust it only from a server of ours.
    bool authenticated = false;
};

class Resolver {
  public:
    virtual ~Resolver() = default;

    // Each TXT RR as one string: its character-strings concatenated (RFC 7208 §3.3).
    virtual asio::awaitable<Result<std::vector<std::string>>> txt(std::string name) = 0;
    // CNAME targets of `name` itself (a query of type CNAME), lower-case, no trailing dot.
    virtual asio::awaitable<Result<std::vector<std::string>>> cname(std::string name) = 0;
    // Sorted by preference; records of equal preference keep the server's order.
    virtual asio::awaitable<Result<std::vector<MxRecord>>> mx(std::string name) = 0;
    // A and AAAA of `host`, IPv4 first. Both are queried; either may be empty; no_data only
    // when both are (nxdomain when the name does not exist). When one query fails and the
    // other has addresses, the addresses are the answer.
    virtual asio::awaitable<Result<std::vector<asio::ip::address>>> addresses(std::string host) = 0;
    // TLSA RRs of `name` ("_25._tcp.mx.example.net"), asked with the AD bit set so that a
    // validating server says whether it validated them. An empty record set is no_data.
    virtual asio::awaitable<Result<TlsaAnswer>> tlsa(std::string name) = 0;
};

}  // namespace posthorn::dns
