// libFuzzer target for the check of a webhook's url (src/api/webhook_url.cpp): whatever it
// accepts is an absolute http(s) URL of at most 2048 characters with a host; what it accepts
// with private targets refused it also accepts with them allowed; and a url it accepts with
// private targets refused has a host (percent-decoded, as curl reads it) that is not
// localhost, not a special-purpose literal in any writing (core::is_private_host), and
// holds no space or control character.
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/webhook_url.hpp"
#include "core/address.hpp"
#include "core/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn;
    const std::string_view url(reinterpret_cast<const char*>(data), size);
    const auto strict = api::webhook_url_error(url, false);
    const auto lax = api::webhook_url_error(url, true);
    if (!strict && lax) __builtin_trap();
    if (strict && strict->rfind("url", 0) != 0) __builtin_trap();
    if (lax) return 0;
    if (url.size() > api::kMaxWebhookUrl) __builtin_trap();
    auto u = boost::urls::parse_absolute_uri(url);
    if (!u) __builtin_trap();
    const auto scheme = core::ascii_lower(u->scheme());
    if (scheme != "http" && scheme != "https") __builtin_trap();
    const std::string host = u->host_address();
    if (host.empty()) __builtin_trap();
    if (std::any_of(host.begin(), host.end(),
                    [](unsigned char c) { return c <= 0x20 || c == 0x7f; }))
        __builtin_trap();
    if (strict) return 0;
    if (core::is_private_host(host)) __builtin_trap();
    if (const auto a = core::parse_ip_literal(host); a && core::is_private_address(*a))
        __builtin_trap();
    return 0;
}
