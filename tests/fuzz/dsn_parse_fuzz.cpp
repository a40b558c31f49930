// libFuzzer target for the reader of delivery status notifications and abuse reports
// (src/mail/report.cpp), which anyone can send to a bounce address: it must never crash,
// and what it reads names recipients in lower case, without line breaks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mail/message.hpp"
#include "mail/report.hpp"

namespace {
bool has_line_break(const std::string& s) { return s.find_first_of("\r\n") != s.npos; }
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    posthorn::mail::init();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::mail;
    const auto report = parse_report(std::string_view(reinterpret_cast<const char*>(data), size));
    if (report.kind == Report::Kind::none && !report.recipients.empty()) __builtin_trap();
    for (const auto& r : report.recipients) {
        if (has_line_break(r.address) || has_line_break(r.action) || has_line_break(r.status))
            __builtin_trap();
        for (unsigned char c : r.address)
            if (c >= 'A' && c <= 'Z') __builtin_trap();
    }
    return 0;
}
