// libFuzzer target for the reader of SMTP replies (src/smtp/reply.cpp), which the delivery
// engine feeds with whatever a remote server says: a reply it accepts has a code from 200
// to 599, one to kMaxReplyLines lines without LF, and reads back the same from its own
// verbatim() text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "smtp/reply.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::smtp;
    auto r = parse_reply(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!r) return 0;
    if (r->code < 200 || r->code > 599) __builtin_trap();
    if (r->lines.empty() || r->lines.size() > kMaxReplyLines) __builtin_trap();
    for (const auto& line : r->lines)
        if (line.size() > kMaxReplyLine || line.find('\n') != line.npos) __builtin_trap();
    auto again = parse_reply(r->verbatim() + "\r\n");
    if (!again || again->code != r->code || again->lines != r->lines) __builtin_trap();
    return 0;
}
