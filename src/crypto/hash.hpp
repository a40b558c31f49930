// crypto/hash.hpp — digests, MACs and comparisons over OpenSSL 3.
// Used for API keys (stored only as SHA-256, compared in constant time), tracking tokens
// and webhook signatures (HMAC-SHA256). Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace posthorn::crypto {

using Sha256 = std::array<std::uint8_t, 32>;

Sha256 sha256(std::string_view data);
Sha256 hmac_sha256(std::string_view key, std::string_view data);

// Lower-case hex of any byte string.
std::string to_hex(std::string_view bytes);
std::string to_hex(const Sha256& digest);

// Constant-time comparison: the time taken does not depend on where the inputs differ.
// Inputs of different lengths compare unequal (length is not secret).
bool equal_ct(std::string_view a, std::string_view b) noexcept;

}  // namespace posthorn::crypto
