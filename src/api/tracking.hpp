// api/tracking.hpp — open and click tracking (DESIGN §8): signed tokens, the rewrite of an
// email's HTML at acceptance, and the two public endpoints GET /t/o/<token> (a 1×1 GIF)
// and GET /t/c/<token> (a 302 to the original link). A token is the payload (kind, email
// id, and for a click the URL) in base64url, a dot, and 128 bits of HMAC-SHA256 under the
// tracking key of the data dir: a forged or altered token is 404 and never redirects.
#pragma once

#include <optional>
#include <string>

#include "api/v1.hpp"

namespace posthorn::api {

struct TrackingToken {
    char kind = 'o';  // 'o' open, 'c' click
    std::string email_id;
    std::string url;  // clicks only
};

std::string make_tracking_token(std::string_view secret, const TrackingToken& t);
std::optional<TrackingToken> read_tracking_token(std::string_view secret, std::string_view token);

// The HTML with the pixel and/or the links rewritten, for email `email_id`, their URLs under
// `base`: public_url, or the sender domain's verified tracking host (domain::tracking_base).
std::string track_email_html(const Deps& deps, const std::string& base, const std::string& email_id,
                             const std::string& html, bool opens, bool clicks);

// GET /t/o/<token> and /t/c/<token>; no authentication, not in the request log.
asio::awaitable<http::Response> handle_tracking(const Deps& deps, http::Request req);

}  // namespace posthorn::api
