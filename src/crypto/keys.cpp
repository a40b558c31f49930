#include "crypto/keys.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>

#include "core/c_ptr.hpp"
#include "core/id.hpp"
#include "core/panic.hpp"
#include "crypto/errors.hpp"

namespace posthorn::crypto {
namespace {

using EvpPkey = CPtr<EVP_PKEY, EVP_PKEY_free>;
using EvpPkeyCtx = CPtr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using EvpCipherCtx = CPtr<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;
using Bio = CPtr<BIO, BIO_free_all>;

constexpr std::size_t kNonce = 12;
constexpr std::size_t kTag = 16;

const unsigned char* u8(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

std::string bio_string(BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(n));
}

Result<std::string> spki_b64(EVP_PKEY* key) {
    unsigned char* der = nullptr;
    const int n = i2d_PUBKEY(key, &der);
    if (n <= 0) return errc::openssl;
    std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
    OPENSSL_free(der);
    return base64_encode(out);
}

class Category final : public boost::system::error_category {
  public:
    const char* name() const noexcept override { return "posthorn.crypto"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::bad_encoding:
                return "bad encoding";
            case errc::auth_failed:
                return "authentication failed";
            case errc::key_file:
                return "master key file unusable";
            case errc::openssl:
                return "OpenSSL error";
        }
        return "unknown crypto error";
    }
};

}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

std::string base64_encode(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), u8(bytes),
                                  static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

Result<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return errc::bad_encoding;
    for (char c : text)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '='))
            return errc::bad_encoding;
    std::string out(3 * text.size() / 4, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), u8(text),
                                  static_cast<int>(text.size()));
    if (n < 0) return errc::bad_encoding;
    const auto len = static_cast<std::size_t>(n);
    // EVP_DecodeBlock counts padding as zero bytes; take them off, and refuse '=' inside.
    std::size_t pad = 0;
    while (pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
    if (pad > 2 || text.substr(0, text.size() - pad).find('=') != std::string_view::npos)
        return errc::bad_encoding;
    out.resize(len - pad);
    return out;
}

std::string random_string(std::size_t bytes) {
    std::string out(bytes, '\0');
    random_bytes(out.data(), out.size());
    return out;
}

Result<RsaKeyPair> generate_rsa(int bits) {
    EvpPkey key(EVP_RSA_gen(static_cast<unsigned>(bits)));
    if (!key) return errc::openssl;
    Bio bio(BIO_new(BIO_s_mem()));
    if (!bio ||
        PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return errc::openssl;
    auto pub = spki_b64(key.get());
    if (!pub) return pub.error();
    return RsaKeyPair{.private_pem = bio_string(bio.get()), .public_spki_b64 = std::move(*pub)};
}

Result<std::string> public_spki_b64_of(std::string_view private_pem) {
    Bio bio(BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size())));
    if (!bio) return errc::openssl;
    EvpPkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) return errc::bad_encoding;
    return spki_b64(key.get());
}

struct PrivateKey::Impl {
    EvpPkey key;
};

Result<PrivateKey> PrivateKey::from_pem(std::string_view pem) {
    Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) return errc::openssl;
    EvpPkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) return errc::bad_encoding;
    PrivateKey out;
    out.impl_ = std::make_shared<const Impl>(Impl{std::move(key)});
    return out;
}

Result<std::string> PrivateKey::sign_sha256(std::string_view data) const {
    using MdCtx = CPtr<EVP_MD_CTX, EVP_MD_CTX_free>;
    if (!impl_) return errc::openssl;
    MdCtx ctx(EVP_MD_CTX_new());
    std::size_t len = 0;
    if (!ctx ||
        EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, impl_->key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &len, u8(data), data.size()) != 1)
        return errc::openssl;
    std::string sig(len, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, u8(data),
                       data.size()) != 1)
        return errc::openssl;
    sig.resize(len);
    return sig;
}

Result<std::string> rsa_sha256_sign(std::string_view private_pem, std::string_view data) {
    auto key = PrivateKey::from_pem(private_pem);
    if (!key) return key.error();
    return key->sign_sha256(data);
}

std::string seal(std::string_view master_key, std::string_view plaintext,
                 std::string_view context) {
    std::string out(kNonce + plaintext.size() + kTag, '\0');
    auto* buf = reinterpret_cast<unsigned char*>(out.data());
    random_bytes(buf, kNonce);
    EvpCipherCtx ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    if (!ctx ||
        EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, u8(master_key), buf) != 1 ||
        EVP_EncryptUpdate(ctx.get(), nullptr, &len, u8(context),
                          static_cast<int>(context.size())) != 1 ||
        EVP_EncryptUpdate(ctx.get(), buf + kNonce, &len, u8(plaintext),
                          static_cast<int>(plaintext.size())) != 1 ||
        EVP_EncryptFinal_ex(ctx.get(), buf + kNonce + len, &len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTag,
                            buf + kNonce + plaintext.size()) != 1)
        PH_PANIC("AES-256-GCM seal failed");
    return out;
}

Result<std::string> open(std::string_view master_key, std::string_view sealed,
                         std::string_view context) {
    if (master_key.size() != kMasterKeyBytes || sealed.size() < kNonce + kTag)
        return errc::auth_failed;
    const std::size_t n = sealed.size() - kNonce - kTag;
    std::string out(n, '\0');
    std::string tag(sealed.substr(kNonce + n));
    EvpCipherCtx ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    if (!ctx ||
        EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, u8(master_key), u8(sealed)) !=
            1 ||
        EVP_DecryptUpdate(ctx.get(), nullptr, &len, u8(context),
                          static_cast<int>(context.size())) != 1 ||
        EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                          u8(sealed) + kNonce, static_cast<int>(n)) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTag, tag.data()) != 1 ||
        EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + len, &len) !=
            1)
        return errc::auth_failed;
    return out;
}

namespace {

// fsync of the folder holding `path`, so that a name just linked there survives a crash.
void sync_parent_dir(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

}  // namespace

Result<std::string> load_or_create_master_key(const std::string& path) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        std::ifstream in(path, std::ios::binary);
        if (in) {
            std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (key.size() != kMasterKeyBytes) return errc::key_file;
            return key;
        }
        // Written whole to a file of this process's own, then linked to its name: link()
        // fails when the name exists, so of several nodes starting at once (a key file they
        // share) one makes the key and the others read that one, never a part of it.
        const std::string tmp = path + ".new-" + new_id("", 0);
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return errc::key_file;
        const std::string key = random_string(kMasterKeyBytes);
        const bool written =
            ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) &&
            ::fsync(fd) == 0;
        ::close(fd);
        const int linked = written ? ::link(tmp.c_str(), path.c_str()) : -1;
        const int link_errno = errno;
        ::unlink(tmp.c_str());
        if (!written) return errc::key_file;
        if (linked == 0) {
            sync_parent_dir(path);
            return key;
        }
        if (link_errno != EEXIST) return errc::key_file;
        // Another process made it first: read its key.
    }
    return errc::key_file;
}

}  // namespace posthorn::crypto
