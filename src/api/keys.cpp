#include "api/keys.hpp"

#include <array>

#include "core/id.hpp"
#include "crypto/hash.hpp"

namespace posthorn::api {
namespace {
constexpr std::string_view kPrefix = "ph_";
constexpr std::string_view kAlphabet = "0123456789abcdefghjkmnpqrstvwxyz";
constexpr std::size_t kChars = 32;  // 32 * 5 = 160 bits
}  // namespace

NewKey generate_api_key() {
    std::array<unsigned char, 20> raw{};
    random_bytes(raw.data(), raw.size());
    std::string key(kPrefix);
    unsigned acc = 0, bits = 0;
    for (unsigned char b : raw) {
        acc = (acc << 8) | b;
        bits += 8;
        while (bits >= 5) {
            key.push_back(kAlphabet[(acc >> (bits - 5)) & 31u]);
            bits -= 5;
        }
        acc &= (1u << bits) - 1u;
    }
    NewKey k;
    k.prefix = key.substr(0, kPrefix.size() + 8);
    k.hash = hash_api_key(key);
    k.key = std::move(key);
    return k;
}

std::string hash_api_key(std::string_view key) { return crypto::to_hex(crypto::sha256(key)); }

bool looks_like_api_key(std::string_view key) noexcept {
    if (key.size() != kPrefix.size() + kChars || key.substr(0, kPrefix.size()) != kPrefix)
        return false;
    for (char c : key.substr(kPrefix.size()))
        if (kAlphabet.find(c) == std::string_view::npos) return false;
    return true;
}

}  // namespace posthorn::api
