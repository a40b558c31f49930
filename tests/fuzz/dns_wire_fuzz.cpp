// libFuzzer target for the DNS message reader (src/dns/detail/wire.cpp), which parses
// answers from the network: it must never read out of bounds, loop, or crash.
//
// Built and run as the other targets of this folder (CMakeLists.txt there).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "dns/detail/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::dns::detail;
    const std::span<const std::uint8_t> message{data, size};

    auto parsed = parse_message(message);
    if (parsed) {
        // Every RR's RDATA lies inside the message, and reading a name there stays inside.
        for (const WireRecord& rr : parsed->answers) {
            if (rr.rdata_offset + rr.rdata_length > size) __builtin_trap();
            std::size_t at = rr.rdata_offset;
            auto name = read_name(message, at);
            if (name && at > size) __builtin_trap();
        }
    }
    // The owner asked for: the question's name when there is one, else a fixed one.
    std::string qname = "alias.example.test";
    if (size > kHeaderSize) {
        std::size_t at = kHeaderSize;
        if (auto q = read_name(message, at); q) qname = *q;
    }
    (void)parse_cname_answer(message, qname);
    // TLSA RDATA is read within each record's bounds.
    if (auto tlsa = parse_tlsa_answer(message); tlsa)
        for (const auto& r : tlsa->records)
            if (r.data.size() + 3 > size) __builtin_trap();
    return 0;
}
