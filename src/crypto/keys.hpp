// crypto/keys.hpp — key material: random bytes, base64, RSA key pairs for DKIM, and
// AES-256-GCM sealing of secrets at rest under the master key of the data dir.
// Pure functions except load_or_create_master_key (file I/O, at start only). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace posthorn::crypto {

// Standard base64 (RFC 4648 §4) with padding.
std::string base64_encode(std::string_view bytes);
// Strict: padding required, no whitespace; nullopt-like failure as an empty Result error.
Result<std::string> base64_decode(std::string_view text);

std::string random_string(std::size_t bytes);  // raw random bytes

struct RsaKeyPair {
    std::string private_pem;  // PKCS#8 PEM
    std::string
        public_spki_b64;  // base64 of the DER SubjectPublicKeyInfo: DKIM's p= (RFC 6376 §3.6.1)
};
// A fresh RSA key pair (slow: tens to hundreds of milliseconds for 2048 bits).
Result<RsaKeyPair> generate_rsa(int bits);
// The p= of a private key's public half, to check that a stored key matches its TXT record.
Result<std::string> public_spki_b64_of(std::string_view private_pem);

// RSASSA-PKCS1-v1_5 with SHA-256 over `data` (DKIM's rsa-sha256, RFC 6376 §3.3.1).
Result<std::string> rsa_sha256_sign(std::string_view private_pem, std::string_view data);

// A parsed private key, to sign many times without parsing the PEM each time (the parse
// costs more than the signature). Copies share the key; signing is thread-safe.
class PrivateKey {
  public:
    static Result<PrivateKey> from_pem(std::string_view pem);
    Result<std::string> sign_sha256(std::string_view data) const;

  private:
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

// AES-256-GCM. The sealed form is nonce (12) || ciphertext || tag (16). `context` is
// authenticated, not encrypted: a sealed value only opens under the same context.
inline constexpr std::size_t kMasterKeyBytes = 32;
std::string seal(std::string_view master_key, std::string_view plaintext, std::string_view context);
Result<std::string> open(std::string_view master_key, std::string_view sealed,
                         std::string_view context);

// Reads the 32-byte key at `path`, or creates it (mode 0600) when the file does not exist.
// A file of the wrong size is an error, never silently replaced.
Result<std::string> load_or_create_master_key(const std::string& path);

}  // namespace posthorn::crypto
