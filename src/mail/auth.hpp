// mail/auth.hpp — the receiver's SPF (RFC 7208), DKIM (RFC 6376) and DMARC (RFC 7489) checks
// of an inbound message (docs/inbound.md, "Authentication"). The three are libraries'
// work: libspf2 evaluates SPF, libopendkim verifies DKIM signatures, libopendmarc parses the
// DMARC record and decides alignment (public suffix list of Debian's `publicsuffix`). None
// of them asks DNS itself: every question goes through AuthLookup, which the caller answers
// (api/ with posthorn's c-ares resolver), so the checks see the servers of `dns.servers`.
//
// check() blocks (its DNS questions wait for their answers): call it on the blocking pool,
// never on a network thread. It may be called from several threads at once. It never
// fails: a DNS failure or a library error is a `temperror`/`permerror` result.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace posthorn::mail {

// Synchronous DNS for the checks. Names are absolute, without a trailing dot.
class AuthLookup {
  public:
    enum class Status { ok, not_found, failed };  // not_found: NXDOMAIN or no such record
    virtual ~AuthLookup() = default;
    virtual Status txt(const std::string& name, std::vector<std::string>& out) = 0;
    virtual Status mx(const std::string& name, std::vector<std::string>& hosts) = 0;
    // A and AAAA records of `name` as IP literals (both families).
    virtual Status addresses(const std::string& name, std::vector<std::string>& ips) = 0;
};

struct AuthInput {
    std::string client_ip;  // the SMTP client's address (IPv4-mapped IPv6 is read as IPv4)
    std::string helo;
    std::string mail_from;     // "" for the null sender
    std::string from_domain;   // the domain of the From header's first address; "" when none
    std::string_view message;  // the message as received (CRLF lines)
};

struct AuthLimits {
    int max_dns_mechanisms = 10;  // RFC 7208 §4.6.4
    int max_dns_lookups = 40;     // every DNS question of one check, all three together
    std::size_t max_dkim_signatures = 5;
};

struct SpfOutcome {
    std::string result;  // pass fail softfail neutral none temperror permerror
    std::string domain;  // the domain checked ("" when there was none)
    std::string scope;   // "mailfrom" or "helo"
};

struct DkimOutcome {
    std::string result;    // pass fail neutral temperror permerror (policy: not checked)
    std::string domain;    // d=
    std::string selector;  // s=
};

struct DmarcOutcome {
    std::string result;  // pass fail none temperror permerror
    std::string domain;  // the From domain ("" when the message has none)
    std::string policy;  // none quarantine reject; "" without a record
    bool spf_aligned = false;
    bool dkim_aligned = false;
};

struct AuthResults {
    SpfOutcome spf;
    std::vector<DkimOutcome> dkim;  // one per signature checked, in the message's order
    DmarcOutcome dmarc;
};

AuthResults check_authentication(const AuthInput& in, AuthLookup& dns,
                                 const AuthLimits& limits = {});

}  // namespace posthorn::mail
