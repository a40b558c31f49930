#include "api/webhook_url.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>

#include "core/address.hpp"
#include "core/text.hpp"

namespace posthorn::api {

std::optional<std::string> webhook_url_error(std::string_view url, bool allow_private) {
    if (url.size() > kMaxWebhookUrl)
        return "url is longer than " + std::to_string(kMaxWebhookUrl) + " characters";
    auto u = boost::urls::parse_absolute_uri(url);
    if (!u) return "url is not an absolute URL";
    const auto scheme = core::ascii_lower(u->scheme());
    if (scheme != "http" && scheme != "https") return "url must be http or https";
    if (!u->has_authority() || u->host_address().empty()) return "url has no host";
    if (u->host_type() == boost::urls::host_type::ipvfuture)
        return "url: the host must be a name or an IP address";
    // Percent-decoded, as curl decodes it before it reads the host (so %31%32%37.0.0.1 is
    // 127.0.0.1 to both).
    const std::string host = u->host_address();
    if (std::any_of(host.begin(), host.end(),
                    [](unsigned char c) { return c <= 0x20 || c == 0x7f; }))
        return "url: the host must not contain spaces or control characters";
    if (allow_private || !core::is_private_host(host)) return std::nullopt;
    std::string what = "names this machine";
    if (const auto a = core::parse_ip_literal(host))
        what = "is " + std::string(core::special_purpose(*a));
    return "url: private, loopback, link-local and other special-purpose targets are refused "
           "(webhooks.allow_private_targets is false): " +
           host + " " + what;
}

}  // namespace posthorn::api
