// api/keys.hpp — API keys: `ph_` and 32 Crockford base32 characters (160 random bits).
// Only the SHA-256 of a key is stored; the key is shown once, when it is made.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace posthorn::api {

struct NewKey {
    std::string key;     // the secret, shown once
    std::string prefix;  // "ph_" and the first 8 characters, safe to display
    std::string hash;    // hex SHA-256 of key, what the store keeps
};

NewKey generate_api_key();
std::string hash_api_key(std::string_view key);
// Shape check only (prefix, length, alphabet); says nothing about whether the key exists.
bool looks_like_api_key(std::string_view key) noexcept;

// The token of an Authorization header value of the shape `Bearer <token>` (RFC 6750 §2.1):
// the value trimmed of spaces and tabs, `Bearer` in any case, one space, then the token,
// itself trimmed and never empty. std::nullopt for any other shape. A view into `header_value`;
// nothing else is read (fuzzed: tests/fuzz/bearer_fuzz.cpp).
std::optional<std::string_view> bearer_token(std::string_view header_value) noexcept;

}  // namespace posthorn::api
