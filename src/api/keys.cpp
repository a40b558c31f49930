#include "api/keys.hpp"

#include <array>

#include "core/id.hpp"
#include "core/text.hpp"
#include "crypto/hash.hpp"

namespace posthorn::api {
namespace {
constexpr std::string_view kPrefix = "ph_";
constexpr std::size_t kChars = 32;  // 32 * 5 = 160 bits
}  // namespace

NewKey generate_api_key() {
    std::array<unsigned char, 20> raw{};
    random_bytes(raw.data(), raw.size());
    std::string key(kPrefix);
    append_base32(key, raw.data(), raw.size());
    NewKey k;
    k.prefix = key.substr(0, kPrefix.size() + 8);
    k.hash = hash_api_key(key);
    k.key = std::move(key);
    return k;
}

std::string hash_api_key(std::string_view key) { return crypto::to_hex(crypto::sha256(key)); }

bool looks_like_api_key(std::string_view key) noexcept {
    return key.size() == kPrefix.size() + kChars && key.substr(0, kPrefix.size()) == kPrefix &&
           is_base32(key.substr(kPrefix.size()));
}

std::optional<std::string_view> bearer_token(std::string_view header_value) noexcept {
    constexpr std::string_view kScheme = "Bearer ";
    const auto value = core::trim_blanks(header_value);
    if (value.size() < kScheme.size() ||
        !core::ascii_iequals(value.substr(0, kScheme.size()), kScheme))
        return std::nullopt;
    return core::trim_blanks(value.substr(kScheme.size()));
}

}  // namespace posthorn::api
