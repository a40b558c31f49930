// libFuzzer target for the PROXY protocol header (src/core/proxy_protocol.cpp), the first
// bytes of a connection from a trusted balancer: a complete header is never longer than
// what was given nor than kMaxProxyHeader, and reads the same from its own bytes; an
// incomplete one asks for more than it was given, and what it asks for is still a prefix
// the parser takes as incomplete or better (never a crash).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/proxy_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using posthorn::core::parse_proxy_header;
    using Status = posthorn::core::ProxyHeader::Status;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const auto h = parse_proxy_header(bytes);
    switch (h.status) {
        case Status::complete: {
            if (h.length == 0 || h.length > bytes.size() ||
                h.length > posthorn::core::kMaxProxyHeader)
                __builtin_trap();
            const auto again = parse_proxy_header(bytes.substr(0, h.length));
            if (again.status != Status::complete || again.length != h.length ||
                again.source != h.source)
                __builtin_trap();
            break;
        }
        case Status::incomplete:
            if (h.length <= bytes.size() || h.length > posthorn::core::kMaxProxyHeader)
                __builtin_trap();
            break;
        case Status::invalid:
            if (h.source) __builtin_trap();
            break;
    }
    return 0;
}
