// api/email_content.hpp — what a sent email was, read back (issue 31's dashboard, docs/api.md
// "An email's events and content"): GET /v1/emails/{id}/events (every event of it, oldest
// first), /content (its HTML and text parts as UTF-8), /raw (the stored message,
// message/rfc822) and /preview (its HTML part, or its text in <pre>, for a sandboxed frame).
// Each reads the email as GET /v1/emails/{id} does (email_for_key: 404 for another
// account's, 403 for a sending key and an email it did not send).
#pragma once

#include <string>
#include <string_view>

#include "api/detail/context.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> get_email_events(detail::Context ctx);
asio::awaitable<http::Response> get_email_content(detail::Context ctx);
asio::awaitable<http::Response> get_email_raw(detail::Context ctx);
asio::awaitable<http::Response> get_email_preview(detail::Context ctx);

// The Content-Security-Policy of a preview: nothing of the email runs or loads (no script,
// no remote image, no form, no plugin); inline styles and data: images show; only a page of
// the same origin may frame it.
inline constexpr std::string_view kPreviewPolicy =
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "frame-ancestors 'self'";

// The preview's HTML: `html` as it is, else `text` HTML-escaped in <pre>, else an empty <pre>.
// Pure.
std::string preview_html(const std::optional<std::string>& html,
                         const std::optional<std::string>& text);

}  // namespace posthorn::api
