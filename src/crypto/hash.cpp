#include "crypto/hash.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/panic.hpp"

namespace posthorn::crypto {

namespace {

// SHA-256 fetched from its provider once: OpenSSL 3 looks the implementation of
// EVP_sha256() up again at each use, which cost more than hashing an API key.
const EVP_MD* sha256_md() {
    static EVP_MD* md = [] {
        EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
        if (!fetched) PH_PANIC("EVP_MD_fetch(SHA256) failed");
        return fetched;
    }();
    return md;
}

}  // namespace

Sha256 sha256(std::string_view data) {
    // One context per thread, reset by each use: EVP_Digest makes and frees one a call.
    struct Ctx {
        EVP_MD_CTX* p = EVP_MD_CTX_new();
        ~Ctx() { EVP_MD_CTX_free(p); }
    };
    thread_local Ctx ctx;
    Sha256 out{};
    unsigned int len = 0;
    if (ctx.p == nullptr || EVP_DigestInit_ex2(ctx.p, sha256_md(), nullptr) != 1 ||
        EVP_DigestUpdate(ctx.p, data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(ctx.p, out.data(), &len) != 1 || len != out.size())
        PH_PANIC("sha256 failed");
    return out;
}

Sha256 hmac_sha256(std::string_view key, std::string_view data) {
    Sha256 out{};
    unsigned int len = 0;
    if (HMAC(sha256_md(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
             &len) == nullptr ||
        len != out.size())
        PH_PANIC("HMAC(sha256) failed");
    return out;
}

std::string to_hex(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(bytes.size() * 2, '\0');
    char* p = out.data();
    for (unsigned char c : bytes) {
        *p++ = kDigits[c >> 4];
        *p++ = kDigits[c & 15];
    }
    return out;
}

std::string to_hex(const Sha256& digest) {
    return to_hex(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool equal_ct(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace posthorn::crypto
