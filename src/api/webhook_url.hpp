// api/webhook_url.hpp — the check of a webhook's url when a webhook is made or its url
// changed (DESIGN §8, docs/webhooks.md): an absolute http(s) URL (RFC 3986) with a host, at
// most 2048 characters, and, unless private targets are allowed, a host that is neither
// localhost nor a special-purpose IP literal (core/address.hpp), read as curl reads it. A
// name is not resolved here: the addresses it resolves to are checked when a delivery
// connects (webhooks/http_client.cpp), which is the guard; this is the early refusal.
//
// A pure function, no I/O; thread-safe. Fuzzed by tests/fuzz/webhook_url_fuzz.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace posthorn::api {

inline constexpr std::size_t kMaxWebhookUrl = 2048;

// The message of the 400 VALIDATION_ERROR (it starts with "url"), or std::nullopt when
// `url` is acceptable.
std::optional<std::string> webhook_url_error(std::string_view url, bool allow_private);

}  // namespace posthorn::api
