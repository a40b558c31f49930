// libFuzzer target for the body of POST /v1/emails, from the JSON text to the message that
// would be queued: the API's body parser (src/api/detail/json_body.cpp, simdjson with
// boost::json behind it), which must give exactly what boost::json::parse gives, the same
// value or the same error; then api::parse_send_request (src/api/send_request.cpp), then,
// for a request it accepts, mail::build_message. A refused body is
// answered 4xx; an accepted one becomes a message whose lines all end in CRLF and are at
// most 998 bytes long (RFC 5322 §2.1.1), whose header block is fields and their
// continuations only (nothing in the request can start a header of its own), with one From
// and no Bcc.
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "api/detail/json_body.hpp"
#include "api/send_request.hpp"
#include "mail/message.hpp"

namespace {

bool starts_with_ci(std::string_view line, std::string_view name) {
    if (line.size() < name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(line[i])) !=
            std::tolower(static_cast<unsigned char>(name[i])))
            return false;
    return true;
}

void check_message(const std::string& raw) {
    int from = 0;
    bool in_head = true;
    std::size_t at = 0;
    while (at < raw.size()) {
        const auto lf = raw.find('\n', at);
        if (lf == std::string::npos || lf == at || raw[lf - 1] != '\r') __builtin_trap();
        const std::string_view line(raw.data() + at, lf - 1 - at);
        if (line.find('\r') != line.npos || line.size() > 998) __builtin_trap();
        if (in_head) {
            if (line.empty()) {
                in_head = false;
            } else if (line[0] != ' ' && line[0] != '\t') {
                const auto colon = line.find(':');
                if (colon == line.npos || colon == 0) __builtin_trap();
                for (unsigned char c : line.substr(0, colon))
                    if (c <= 0x20 || c >= 0x7f) __builtin_trap();
                if (starts_with_ci(line, "bcc:")) __builtin_trap();
                if (starts_with_ci(line, "from:")) ++from;
            }
        }
        at = lf + 1;
    }
    if (in_head || from != 1) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    posthorn::mail::init();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    boost::system::error_code ec;
    boost::json::value body;
    api::detail::parse_json_body(text, body, ec);
    boost::system::error_code boost_ec;
    const auto boost_body = boost::json::parse(text, boost_ec);
    if (ec != boost_ec || body != boost_body) __builtin_trap();
    if (ec) return 0;
    auto parsed =
        api::parse_send_request(body, {.max_recipients = 50, .max_attachment_bytes = 1 << 16});
    if (const auto* refused = std::get_if<http::Response>(&parsed)) {
        if (refused->status < 400 || refused->status > 499) __builtin_trap();
        return 0;
    }
    auto& req = std::get<api::SendRequest>(parsed);
    req.message.message_id = "01JFUZZ0000000000000000000@smtp.posthorn.test";
    req.message.date = 1'790'000'000'000;
    check_message(mail::build_message(req.message));
    return 0;
}
