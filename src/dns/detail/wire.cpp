#include "dns/detail/wire.hpp"

#include <algorithm>

#include "dns/detail/names.hpp"

namespace posthorn::dns::detail {
namespace {

const error_code kBad = make_error_code(errc::bad_response);

std::uint16_t get16(std::span<const std::uint8_t> m, std::size_t at) {
    return static_cast<std::uint16_t>((m[at] << 8) | m[at + 1]);
}
std::uint32_t get32(std::span<const std::uint8_t> m, std::size_t at) {
    return (std::uint32_t{get16(m, at)} << 16) | get16(m, at + 2);
}

void append_label(std::string& out, std::span<const std::uint8_t> label) {
    for (std::uint8_t c : label) {
        if (c == '.' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < '!' || c > '~') {
            out += '\\';
            out += static_cast<char>('0' + c / 100);
            out += static_cast<char>('0' + c / 10 % 10);
            out += static_cast<char>('0' + c % 10);
        } else if (c >= 'A' && c <= 'Z') {
            out += static_cast<char>(c - 'A' + 'a');
        } else {
            out += static_cast<char>(c);
        }
    }
}

}  // namespace

Result<std::string> read_name(std::span<const std::uint8_t> message, std::size_t& offset) {
    std::string out;
    std::size_t at = offset;
    std::size_t resume = 0;  // where the caller continues, once a pointer has been followed
    bool jumped = false;
    std::size_t jumps = 0;
    std::size_t wire_length = 1;  // the terminating zero octet
    for (;;) {
        if (at >= message.size()) return kBad;
        const std::uint8_t len = message[at];
        if ((len & 0xC0) == 0xC0) {
            if (at + 1 >= message.size()) return kBad;
            const std::size_t target = ((len & 0x3Fu) << 8) | message[at + 1];
            // Backwards only, and never into the header. That alone does not rule out a
            // loop (a pointer may sit inside a label that a later pointer jumps over), so
            // the jumps are counted too: a name has at most 127 labels, so a real one never
            // needs more pointers than that; every loop also grows the name past 255.
            if (target >= at || target < kHeaderSize || ++jumps > kMaxPointers) return kBad;
            if (!jumped) resume = at + 2;
            jumped = true;
            at = target;
            continue;
        }
        if ((len & 0xC0) != 0) return kBad;  // 01 and 10: reserved / obsolete label types
        if (len == 0) {
            offset = jumped ? resume : at + 1;
            return out;
        }
        wire_length += 1 + std::size_t{len};
        if (wire_length > kMaxNameWire) return kBad;
        if (message.size() - at - 1 < len) return kBad;
        if (!out.empty()) out += '.';
        append_label(out, message.subspan(at + 1, len));
        at += 1 + std::size_t{len};
    }
}

Result<WireMessage> parse_message(std::span<const std::uint8_t> message) {
    if (message.size() < kHeaderSize) return kBad;
    WireMessage out;
    out.id = get16(message, 0);
    const std::uint16_t flags = get16(message, 2);
    out.response = (flags & 0x8000) != 0;
    out.truncated = (flags & 0x0200) != 0;
    out.authentic = (flags & 0x0020) != 0;
    out.rcode = flags & 0x000F;
    const std::uint16_t qdcount = get16(message, 4);
    const std::uint16_t ancount = get16(message, 6);

    std::size_t at = kHeaderSize;
    for (std::uint16_t i = 0; i < qdcount; ++i) {
        auto name = read_name(message, at);
        if (!name) return name.error();
        if (message.size() - at < 4) return kBad;  // QTYPE, QCLASS
        at += 4;
    }
    // Each RR takes at least 11 octets, so a count the message cannot hold fails in the
    // loop below long before it could cost anything; reserve only what fits.
    out.answers.reserve(std::min<std::size_t>(ancount, (message.size() - at) / 11));
    for (std::uint16_t i = 0; i < ancount; ++i) {
        WireRecord rr;
        auto owner = read_name(message, at);
        if (!owner) return owner.error();
        rr.owner = std::move(*owner);
        if (message.size() - at < 10) return kBad;  // TYPE, CLASS, TTL, RDLENGTH
        rr.type = get16(message, at);
        rr.rclass = get16(message, at + 2);
        rr.ttl = get32(message, at + 4);
        rr.rdata_length = get16(message, at + 8);
        at += 10;
        if (message.size() - at < rr.rdata_length) return kBad;
        rr.rdata_offset = at;
        at += rr.rdata_length;
        out.answers.push_back(std::move(rr));
    }
    return out;
}

namespace {

// A response's RCODE as our error; the empty error_code for NOERROR.
error_code rcode_error(const WireMessage& m) {
    if (!m.response) return kBad;
    switch (m.rcode) {
        case 0:
            return {};
        case 1:  // FORMERR: the server could not read our query
            return kBad;
        case 2:
            return make_error_code(errc::servfail);
        case 3:
            return make_error_code(errc::nxdomain);
        case 5:
            return make_error_code(errc::refused);
        default:
            return make_error_code(errc::other);
    }
}

}  // namespace

Result<std::vector<std::string>> parse_cname_answer(std::span<const std::uint8_t> message,
                                                    std::string_view qname) {
    auto parsed = parse_message(message);
    if (!parsed) return parsed.error();
    if (auto ec = rcode_error(*parsed)) return ec;
    const std::string want = canonical_name(qname);
    std::vector<std::string> targets;
    for (const WireRecord& rr : parsed->answers) {
        if (rr.type != kTypeCname || rr.rclass != kClassIn || rr.owner != want) continue;
        std::size_t at = rr.rdata_offset;
        auto target = read_name(message, at);
        if (!target) return target.error();
        // The name must fill RDATA exactly: no more (it would run into the next RR), no less.
        if (at != rr.rdata_offset + rr.rdata_length) return kBad;
        targets.push_back(std::move(*target));
    }
    if (targets.empty()) return make_error_code(errc::no_data);
    return targets;
}

Result<TlsaAnswer> parse_tlsa_answer(std::span<const std::uint8_t> message) {
    auto parsed = parse_message(message);
    if (!parsed) return parsed.error();
    if (auto ec = rcode_error(*parsed)) return ec;
    TlsaAnswer out;
    out.authenticated = parsed->authentic;
    for (const WireRecord& rr : parsed->answers) {
        if (rr.type != kTypeTlsa || rr.rclass != kClassIn) continue;
        if (rr.rdata_length < 4) return kBad;
        const auto* at = message.data() + rr.rdata_offset;
        out.records.push_back(TlsaRecord{.usage = at[0],
                                         .selector = at[1],
                                         .matching_type = at[2],
                                         .data = {at + 3, at + rr.rdata_length}});
    }
    if (out.records.empty()) return make_error_code(errc::no_data);
    return out;
}

}  // namespace posthorn::dns::detail
