// mail/dkim.hpp — DKIM signatures (RFC 6376) with rsa-sha256 and relaxed/relaxed
// canonicalisation (§3.4.2, §3.4.4). Signs the headers of DESIGN §7 that the message has
// (From always), so a verifier with the selector's TXT record from `posthorn dns zone`
// accepts the message. Verification is not here: tests use an independent verifier.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/time.hpp"
#include "crypto/keys.hpp"

namespace posthorn::mail {

struct DkimKey {
    std::string domain;      // d=
    std::string selector;    // s=
    crypto::PrivateKey key;  // parsed once, used for many messages
};

// The message with a DKIM-Signature header in front (CRLF line endings expected).
Result<std::string> dkim_sign(std::string_view message, const DkimKey& key, UnixMs now);

// Exposed for tests: the canonical forms.
std::string dkim_relaxed_header(std::string_view name, std::string_view value);
std::string dkim_relaxed_body(std::string_view body);

}  // namespace posthorn::mail
