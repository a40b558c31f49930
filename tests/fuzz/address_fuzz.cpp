// libFuzzer target for the address parser (src/mail/address.cpp), which reads every address
// of an API send: what it accepts has no control character anywhere (it ends up in
// headers and SMTP commands), a non-empty local part, a lower-case domain, and parses back
// to the same mailbox from its own display() form (when that is within the parser's limit).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "mail/address.hpp"

namespace {
bool has_control(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::mail;
    auto parsed = parse_mailbox(std::string_view(reinterpret_cast<const char*>(data), size));
    const auto* m = std::get_if<Mailbox>(&parsed);
    if (!m) return 0;
    if (m->local.empty() || m->domain.empty()) __builtin_trap();
    if (has_control(m->name) || has_control(m->local) || has_control(m->domain)) __builtin_trap();
    for (unsigned char c : m->domain)
        if (c >= 'A' && c <= 'Z') __builtin_trap();
    const auto shown = m->display();
    if (shown.size() > 1024) return 0;  // longer than the parser takes
    auto again = parse_mailbox(shown);
    const auto* n = std::get_if<Mailbox>(&again);
    if (!n || n->name != m->name || n->local != m->local || n->domain != m->domain)
        __builtin_trap();
    return 0;
}
