// libFuzzer target for the HTTP request head and body framing (src/http/detail/
// request_parser.hpp, Beast's basic_parser underneath): the bytes a client sends, fed in
// pieces of a size the first byte picks, as http::Server feeds them. Whatever arrives, a
// request read whole has a method, lower-case header names, a body within the limit, and a
// target that set_target either refuses or turns into a path starting with "/".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/detail/request_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using posthorn::http::detail::RequestParser;
    namespace bhttp = boost::beast::http;
    if (size < 2) return 0;
    const std::size_t piece = 1 + data[0];
    const std::size_t body_limit = 16 * (1 + std::size_t{data[1]});
    std::string_view input(reinterpret_cast<const char*>(data + 2), size - 2);

    RequestParser parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(body_limit);
    std::string buffer;
    posthorn::error_code ec;
    while (!parser.is_done() && !input.empty()) {
        const auto n = std::min(piece, input.size());
        buffer.append(input.substr(0, n));
        input.remove_prefix(n);
        for (;;) {  // as the server does: the unparsed rest stays for the next put
            const auto used = parser.put(boost::asio::buffer(buffer), ec);
            buffer.erase(0, used);
            if (ec == bhttp::error::need_more) {
                ec = {};
                break;
            }
            if (ec || parser.is_done() || used == 0) break;
        }
        if (ec) return 0;
    }
    if (!parser.is_done()) return 0;
    auto& req = parser.request;
    if (req.method.empty()) __builtin_trap();
    if (req.body.size() > body_limit) __builtin_trap();
    for (const auto& [name, value] : req.headers)
        for (char c : name)
            if (c >= 'A' && c <= 'Z') __builtin_trap();
    if (req.set_target(req.target) && (req.path.empty() || req.path.front() != '/'))
        __builtin_trap();
    return 0;
}
