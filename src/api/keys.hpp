// api/keys.hpp — API keys: `ph_` and 32 Crockford base32 characters (160 random bits).
// Only the SHA-256 of a key is stored; the key is shown once, when it is made.
#pragma once

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

}  // namespace posthorn::api
