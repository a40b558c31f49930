#include "api/tracking.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "core/log.hpp"
#include "crypto/hash.hpp"
#include "crypto/keys.hpp"
#include "domain/email_rules.hpp"
#include "domain/events.hpp"
#include "mail/tracking.hpp"

namespace posthorn::api {

namespace {

constexpr std::size_t kMacBytes = 16;

std::string b64url(std::string_view bytes) {
    std::string s = crypto::base64_encode(bytes);
    for (auto& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!s.empty() && s.back() == '=') s.pop_back();
    return s;
}

std::optional<std::string> from_b64url(std::string_view text) {
    std::string s(text);
    for (auto& c : s) {
        if (c == '-')
            c = '+';
        else if (c == '_')
            c = '/';
        else if (c == '+' || c == '/' || c == '=')
            return std::nullopt;
    }
    while (s.size() % 4) s.push_back('=');
    auto d = crypto::base64_decode(s);
    if (!d) return std::nullopt;
    return *d;
}

std::string mac(std::string_view secret, std::string_view payload) {
    const auto full = crypto::hmac_sha256(secret, payload);
    return std::string(reinterpret_cast<const char*>(full.data()), kMacBytes);
}

// The 43-byte transparent 1×1 GIF.
constexpr unsigned char kGif[] = {0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80,
                                  0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x21, 0xf9, 0x04,
                                  0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x01,
                                  0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b};

http::Response not_found() {
    auto r = http::error_response(404, "NOT_FOUND", "not found");
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

}  // namespace

std::string make_tracking_token(std::string_view secret, const TrackingToken& t) {
    std::string payload(1, t.kind);
    payload += '\n' + t.email_id;
    if (t.kind == 'c') payload += '\n' + t.url;
    return b64url(payload) + "." + b64url(mac(secret, payload));
}

std::optional<TrackingToken> read_tracking_token(std::string_view secret, std::string_view token) {
    const auto dot = token.find('.');
    if (dot == std::string_view::npos || token.size() > 8192) return std::nullopt;
    auto payload = from_b64url(token.substr(0, dot));
    auto sig = from_b64url(token.substr(dot + 1));
    if (!payload || !sig || !crypto::equal_ct(*sig, mac(secret, *payload))) return std::nullopt;
    TrackingToken t;
    const auto first = payload->find('\n');
    if (first != 1 || ((*payload)[0] != 'o' && (*payload)[0] != 'c')) return std::nullopt;
    t.kind = (*payload)[0];
    const auto second = payload->find('\n', 2);
    t.email_id = payload->substr(2, second == std::string::npos ? std::string::npos : second - 2);
    if (t.kind == 'c') {
        if (second == std::string::npos) return std::nullopt;
        t.url = payload->substr(second + 1);
    }
    return t;
}

std::string track_email_html(const Deps& deps, const std::string& base_url,
                             const std::string& email_id, const std::string& html, bool opens,
                             bool clicks) {
    const std::string base = base_url + (base_url.ends_with('/') ? "" : "/");
    mail::Tracking t;
    if (opens)
        t.pixel_url =
            base + "t/o/" + make_tracking_token(deps.tracking_secret, {'o', email_id, ""});
    if (clicks)
        t.link = [&](const std::string& url) {
            return base + "t/c/" + make_tracking_token(deps.tracking_secret, {'c', email_id, url});
        };
    return mail::track_html(html, t);
}

asio::awaitable<http::Response> handle_tracking(const Deps& deps, http::Request req) {
    const bool open = req.path.rfind("/t/o/", 0) == 0;
    auto token = read_tracking_token(deps.tracking_secret, std::string_view(req.path).substr(5));
    if (!token || token->kind != (open ? 'o' : 'c')) co_return not_found();
    const std::optional<std::string> url =
        open ? std::nullopt : std::optional<std::string>(token->url);
    const auto what = open ? domain::Engagement::open : domain::Engagement::click;
    const auto at = deps.clock.now_ms();
    // The payload is made from the email as the store reads it: it carries its tags and
    // metadata (domain/events.hpp).
    auto decide = [what, ip = req.remote_ip,
                   agent = std::string(req.header("user-agent").value_or("")), url,
                   at](const store::Email& current) {
        return std::optional(
            domain::engage(current, what, domain::engagement_data(current, ip, agent, url), at));
    };
    auto email_id = token->email_id;
    // A token names only its email: found by its id in any account.
    auto r = co_await deps.emails.change_email({}, std::move(email_id), false, std::move(decide));
    if (!r) {
        if (r.error() == store::errc::not_found) co_return not_found();
        log::warn("tracking: {}", r.error().message());
    }
    if (open) {
        http::Response res{.status = 200,
                           .body = std::string(reinterpret_cast<const char*>(kGif), sizeof kGif),
                           .content_type = "image/gif"};
        res.headers.emplace_back("Cache-Control", "no-store, max-age=0");
        co_return res;
    }
    http::Response res{.status = 302, .body = {}, .content_type = {}};
    res.headers.emplace_back("Location", token->url);
    res.headers.emplace_back("Cache-Control", "no-store");
    co_return res;
}

}  // namespace posthorn::api
