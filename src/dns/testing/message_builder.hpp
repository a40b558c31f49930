// dns/testing/message_builder.hpp — builds DNS messages (RFC 1035 §4.1) byte by byte, for
// tests of the parsers: no compression unless written by hand with raw().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace posthorn::dns::testing {

using Bytes = std::vector<std::uint8_t>;

// "mail.example.net" -> 4 mail 7 example 3 net 0 (no escapes; "" and "." are the root).
inline Bytes encode_name(std::string_view name) {
    Bytes out;
    while (!name.empty() && name != ".") {
        const auto dot = name.find('.');
        const auto label = name.substr(0, dot);
        out.push_back(static_cast<std::uint8_t>(label.size()));
        out.insert(out.end(), label.begin(), label.end());
        if (dot == std::string_view::npos) break;
        name.remove_prefix(dot + 1);
    }
    out.push_back(0);
    return out;
}

inline void put16(Bytes& out, std::uint16_t v) {
    out.push_back(static_cast<std::uint8_t>(v >> 8));
    out.push_back(static_cast<std::uint8_t>(v & 0xFF));
}

inline void put32(Bytes& out, std::uint32_t v) {
    put16(out, static_cast<std::uint16_t>(v >> 16));
    put16(out, static_cast<std::uint16_t>(v & 0xFFFF));
}

// A TXT RDATA of the given character-strings (each at most 255 octets).
inline Bytes txt_rdata(std::initializer_list<std::string_view> strings) {
    Bytes out;
    for (auto s : strings) {
        out.push_back(static_cast<std::uint8_t>(s.size()));
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}

inline Bytes mx_rdata(std::uint16_t preference, std::string_view host) {
    Bytes out;
    put16(out, preference);
    const Bytes name = encode_name(host);
    out.insert(out.end(), name.begin(), name.end());
    return out;
}

class MessageBuilder {
  public:
    MessageBuilder& id(std::uint16_t v) {
        id_ = v;
        return *this;
    }
    // Default: a response (QR), recursion desired and available, RCODE 0.
    MessageBuilder& flags(std::uint16_t v) {
        flags_ = v;
        return *this;
    }
    MessageBuilder& rcode(int v) {
        flags_ = static_cast<std::uint16_t>((flags_ & 0xFFF0) | (v & 0xF));
        return *this;
    }
    MessageBuilder& question(std::string_view name, std::uint16_t type, std::uint16_t klass = 1) {
        const Bytes n = encode_name(name);
        questions_.insert(questions_.end(), n.begin(), n.end());
        put16(questions_, type);
        put16(questions_, klass);
        ++qdcount_;
        return *this;
    }
    MessageBuilder& answer(std::string_view owner, std::uint16_t type, const Bytes& rdata,
                           std::uint16_t klass = 1, std::uint32_t ttl = 300) {
        const Bytes n = encode_name(owner);
        answers_.insert(answers_.end(), n.begin(), n.end());
        put16(answers_, type);
        put16(answers_, klass);
        put32(answers_, ttl);
        put16(answers_, static_cast<std::uint16_t>(rdata.size()));
        answers_.insert(answers_.end(), rdata.begin(), rdata.end());
        ++ancount_;
        return *this;
    }
    // Appends octets after the answers as they are (for hand-compressed records); `records`
    // is added to ANCOUNT.
    MessageBuilder& raw(const Bytes& octets, std::uint16_t records) {
        answers_.insert(answers_.end(), octets.begin(), octets.end());
        ancount_ = static_cast<std::uint16_t>(ancount_ + records);
        return *this;
    }
    // Overrides the counted ANCOUNT (to lie about it).
    MessageBuilder& ancount(std::uint16_t v) {
        ancount_override_ = v;
        return *this;
    }

    Bytes build() const {
        Bytes out;
        put16(out, id_);
        put16(out, flags_);
        put16(out, qdcount_);
        put16(out,
              ancount_override_ >= 0 ? static_cast<std::uint16_t>(ancount_override_) : ancount_);
        put16(out, 0);
        put16(out, 0);
        out.insert(out.end(), questions_.begin(), questions_.end());
        out.insert(out.end(), answers_.begin(), answers_.end());
        return out;
    }

  private:
    std::uint16_t id_ = 0x1234;
    std::uint16_t flags_ = 0x8180;
    std::uint16_t qdcount_ = 0;
    std::uint16_t ancount_ = 0;
    int ancount_override_ = -1;
    Bytes questions_;
    Bytes answers_;
};

}  // namespace posthorn::dns::testing
