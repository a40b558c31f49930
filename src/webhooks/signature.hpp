// webhooks/signature.hpp — Standard Webhooks signing (standardwebhooks.com, DESIGN §8):
// `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key
// shown to the user once as `whsec_<base64 key>`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace posthorn::webhooks {

// The value of the webhook-signature header for this message.
std::string sign(std::string_view key, std::string_view id, std::int64_t timestamp_s,
                 std::string_view body);

}  // namespace posthorn::webhooks
