// libFuzzer target for the reader of messages someone else wrote (src/mail/parse.cpp):
// inbound mail and SMTP submissions, through GMime. It must never crash or hang, the header
// block it finds is the start of the message, and a header edit keeps everything after the
// header block byte for byte and puts the added field first.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mail/message.hpp"
#include "mail/parse.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    posthorn::mail::init();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::mail;
    const std::string_view raw(reinterpret_cast<const char*>(data), size);
    (void)parse_message(raw);
    const auto head = header_block(raw);
    if (head.data() != raw.data() || head.size() > raw.size()) __builtin_trap();
    const auto body = raw.substr(head.size());
    const auto edited = edit_headers(raw, {"DKIM-Signature", "Received"}, {{"X-Fuzz", "1"}});
    if (edited.size() < body.size() ||
        edited.compare(edited.size() - body.size(), body.size(), body) != 0)
        __builtin_trap();
    if (edited.rfind("X-Fuzz: 1\r\n", 0) != 0) __builtin_trap();
    (void)edit_html_parts(raw, [](const std::string& html) { return html + "<p>x</p>"; });
    return 0;
}
