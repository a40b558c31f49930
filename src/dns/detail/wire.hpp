// A small reader of DNS messages (RFC 1035 §4.1), for what c-ares 1.18 has no parser for:
// the answer to a CNAME query. It reads untrusted bytes, so every length is checked against
// the message, compression pointers may only point backwards (RFC 1035 §4.1.4: "a prior
// occurrence") and at most 127 of them are followed per name, so loops end, and names keep
// to 63-octet labels and 255 octets in all (§2.3.4). Anything else is errc::bad_response.
// Fuzzed by tests/fuzz/dns_wire_fuzz.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "dns/errors.hpp"
#include "dns/resolver.hpp"

namespace posthorn::dns::detail {

inline constexpr std::uint16_t kTypeA = 1;
inline constexpr std::uint16_t kTypeCname = 5;
inline constexpr std::uint16_t kTypeMx = 15;
inline constexpr std::uint16_t kTypeTxt = 16;
inline constexpr std::uint16_t kTypeAaaa = 28;
inline constexpr std::uint16_t kTypeTlsa = 52;  // RFC 6698 §7.1
inline constexpr std::uint16_t kClassIn = 1;

inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kMaxLabel = 63;      // RFC 1035 §2.3.4
inline constexpr std::size_t kMaxNameWire = 255;  // octets on the wire, length bytes included
inline constexpr std::size_t kMaxPointers = 127;  // one per label at most

struct WireRecord {
    std::string owner;  // in the form of detail::canonical_name (escaped, see read_name)
    std::uint16_t type = 0;
    std::uint16_t rclass = 0;
    std::uint32_t ttl = 0;
    std::size_t rdata_offset = 0;  // into the message: names in RDATA may point anywhere before
    std::uint16_t rdata_length = 0;
};

struct WireMessage {
    std::uint16_t id = 0;
    bool response = false;   // QR
    bool truncated = false;  // TC
    bool authentic = false;  // AD (RFC 4035 §3.2.3)
    int rcode = 0;
    std::vector<WireRecord> answers;  // the answer section; authority and additional are not read
};

// Reads the name at `offset`, following compression pointers. On success `offset` points
// just past the name as it sits at that place (past the first pointer, if any). The text is
// lower-case without the trailing dot ("" for the root); within a label, '.' and '\' are
// escaped with '\', and octets outside '!'..'~' are written \DDD (as c-ares and BIND do).
Result<std::string> read_name(std::span<const std::uint8_t> message, std::size_t& offset);

// Header, the question section (skipped, but checked), and the answer section.
Result<WireMessage> parse_message(std::span<const std::uint8_t> message);

// The targets of the CNAME RRs of class IN in the answer whose owner is `qname` (compared
// case-insensitively; a trailing dot on `qname` is ignored). RCODE 3 answers nxdomain, an
// answer without such a CNAME no_data; a message that is not a response, bad_response.
Result<std::vector<std::string>> parse_cname_answer(std::span<const std::uint8_t> message,
                                                    std::string_view qname);

// The TLSA RRs of class IN in the answer (RFC 6698 §2.1), whatever their owner (a CNAME
// chain the server followed leads to them, RFC 7671 §7), with the AD bit of the header.
// RCODE 2/3/5 answer servfail/nxdomain/refused; no TLSA RR, no_data; an RR shorter than its
// three fixed octets and one octet of data, bad_response.
Result<TlsaAnswer> parse_tlsa_answer(std::span<const std::uint8_t> message);

}  // namespace posthorn::dns::detail
