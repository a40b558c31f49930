#include "webhooks/signature.hpp"

#include "crypto/hash.hpp"
#include "crypto/keys.hpp"

namespace posthorn::webhooks {

std::string sign(std::string_view key, std::string_view id, std::int64_t timestamp_s,
                 std::string_view body) {
    std::string content;
    content.reserve(id.size() + body.size() + 24);
    content.append(id).append(".").append(std::to_string(timestamp_s)).append(".").append(body);
    const auto mac = crypto::hmac_sha256(key, content);
    return "v1," + crypto::base64_encode(
                       std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

}  // namespace posthorn::webhooks
