#include "crypto/server_certificate.hpp"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "core/c_ptr.hpp"

namespace posthorn::crypto {
namespace {

using X509Ptr = CPtr<X509, X509_free>;
using PkeyPtr = CPtr<EVP_PKEY, EVP_PKEY_free>;
using BioPtr = CPtr<BIO, BIO_free_all>;
using NamesPtr = CPtr<GENERAL_NAMES, GENERAL_NAMES_free>;
using ExtPtr = CPtr<X509_EXTENSION, X509_EXTENSION_free>;
using BnPtr = CPtr<BIGNUM, BN_free>;

// The reason of OpenSSL's latest error ("key values mismatch"), and the queue emptied.
std::string openssl_reason() {
    const unsigned long e = ERR_peek_last_error();
    std::string why = "unknown OpenSSL error";
    if (e != 0) {
        if (const char* r = ERR_reason_error_string(e)) {
            why = r;
        } else {
            char buf[256];
            ERR_error_string_n(e, buf, sizeof buf);
            why = buf;
        }
    }
    ERR_clear_error();
    return why;
}

// errno in words; strerror_r underneath (reload() runs beside the network threads).
std::string errno_text() { return std::error_code(errno, std::generic_category()).message(); }

// "" when `path` can be opened for reading, else why not (errno's words, not OpenSSL's).
std::string unreadable(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return "cannot read " + path + ": " + errno_text();
    std::fclose(f);
    return {};
}

// A context holding the pair, loaded and checked; null and `why` set when it does not load.
std::shared_ptr<SSL_CTX> load_pair(const std::string& cert, const std::string& key,
                                   std::string& why) {
    if (why = unreadable(cert); !why.empty()) return nullptr;
    if (why = unreadable(key); !why.empty()) return nullptr;
    ERR_clear_error();
    std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
    if (!ctx) {
        why = "cannot make a TLS context: " + openssl_reason();
        return nullptr;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert.c_str()) != 1) {
        why = cert + ": " + openssl_reason();
        return nullptr;
    }
    // Also checks that the key is the certificate's ("key values mismatch").
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
        why = key + ": " + openssl_reason();
        return nullptr;
    }
    return ctx;
}

std::string fingerprint(const X509* cert) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return "?";
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
        if (i) out += ':';
        out += kHex[md[i] >> 4];
        out += kHex[md[i] & 15];
    }
    return out;
}

std::string print_time(const ASN1_TIME* t) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || ASN1_TIME_print(bio.get(), t) != 1) return "?";
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

std::string one_line(const X509_NAME* name) {  // RFC 2253: "CN=mail.example.com"
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) return "?";
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

// The pair in use, swapped whole by reload() while handshakes read it.
class PairSlot {
  public:
    std::shared_ptr<SSL_CTX> get() const {
        std::lock_guard lock(mu_);
        return pair_;
    }
    void set(std::shared_ptr<SSL_CTX> pair) {
        std::lock_guard lock(mu_);
        pair_ = std::move(pair);
    }

  private:
    mutable std::mutex mu_;
    std::shared_ptr<SSL_CTX> pair_;
};

// OpenSSL calls this at each handshake, before it picks a cipher: the pair current at that
// moment goes on the connection (SSL_use_cert_and_key takes references of its own).
int use_current_pair(SSL* ssl, void* arg) {
    const auto pair = static_cast<const PairSlot*>(arg)->get();
    STACK_OF(X509)* chain = nullptr;
    SSL_CTX_get0_chain_certs(pair.get(), &chain);
    return SSL_use_cert_and_key(ssl, SSL_CTX_get0_certificate(pair.get()),
                                SSL_CTX_get0_privatekey(pair.get()), chain, 1) == 1
               ? 1
               : 0;
}

}  // namespace

struct ServerCertificate::Impl {
    std::string cert_path, key_path;
    boost::asio::ssl::context context{boost::asio::ssl::context::tls_server};
    PairSlot slot;
};

ServerCertificate::ServerCertificate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ServerCertificate::~ServerCertificate() = default;

std::shared_ptr<ServerCertificate> ServerCertificate::load(std::string cert_path,
                                                           std::string key_path) {
    auto impl = std::make_unique<Impl>();
    std::string why;
    auto pair = load_pair(cert_path, key_path, why);
    if (!pair) throw std::runtime_error(why);
    impl->slot.set(std::move(pair));
    impl->cert_path = std::move(cert_path);
    impl->key_path = std::move(key_path);
    namespace ssl = boost::asio::ssl;
    impl->context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                              ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                              ssl::context::no_tlsv1_1);
    SSL_CTX_set_cert_cb(impl->context.native_handle(), use_current_pair, &impl->slot);
    return std::shared_ptr<ServerCertificate>(new ServerCertificate(std::move(impl)));
}

std::shared_ptr<boost::asio::ssl::context> ServerCertificate::context() {
    // Aliasing: the listeners hold the context, and through it this object.
    return {shared_from_this(), &impl_->context};
}

std::string ServerCertificate::reload() {
    std::string why;
    auto fresh = load_pair(impl_->cert_path, impl_->key_path, why);
    if (!fresh) return why;
    impl_->slot.set(std::move(fresh));
    return {};
}

std::string ServerCertificate::describe() const {
    const auto pair = impl_->slot.get();
    const X509* cert = SSL_CTX_get0_certificate(pair.get());
    return "SHA-256 " + fingerprint(cert) + ", " + one_line(X509_get_subject_name(cert)) +
           ", valid until " + print_time(X509_get0_notAfter(cert));
}

const std::string& ServerCertificate::cert_path() const { return impl_->cert_path; }

namespace {

// What `cert` lacks of a self-signed certificate for `names`; "" when nothing.
std::string lacking(X509* cert, const SubjectNames& names) {
    constexpr unsigned kExact = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_WILDCARDS;
    for (const auto& dns : names.dns)
        if (X509_check_host(cert, dns.data(), dns.size(), kExact, nullptr) != 1)
            return "no subjectAltName DNS:" + dns;
    for (const auto& ip : names.ips)
        if (X509_check_ip_asc(cert, ip.c_str(), 0) != 1) return "no subjectAltName IP:" + ip;
    if ((X509_get_extension_flags(cert) & EXFLAG_CA) == 0) return "not a CA (basicConstraints)";
    if ((X509_get_key_usage(cert) & KU_KEY_CERT_SIGN) == 0) return "no keyUsage keyCertSign";
    return {};
}

// Why the pair in `dir` is to be made anew; "" to keep it.
std::string why_renew(const std::string& cert_path, const std::string& key_path,
                      const SubjectNames& names) {
    std::error_code ec;
    if (!std::filesystem::exists(cert_path, ec) || !std::filesystem::exists(key_path, ec))
        return "new";
    std::FILE* f = std::fopen(cert_path.c_str(), "r");
    if (f == nullptr) return {};  // unreadable: left for the load to report, never replaced
    X509Ptr cert(PEM_read_X509(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    ERR_clear_error();
    if (!cert) return {};
    // Only a certificate posthorn could have made (self-issued) is replaced.
    if (X509_NAME_cmp(X509_get_subject_name(cert.get()), X509_get_issuer_name(cert.get())) != 0)
        return {};
    return lacking(cert.get(), names);
}

void add_extension(X509* cert, X509V3_CTX* v3, int nid, const char* value) {
    ExtPtr ext(X509V3_EXT_conf_nid(nullptr, v3, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
        throw std::runtime_error("cannot add a certificate extension: " + openssl_reason());
}

void add_subject_alt_names(X509* cert, const SubjectNames& names) {
    NamesPtr gens(GENERAL_NAMES_new());
    auto push = [&](int type, ASN1_STRING* value) {
        GENERAL_NAME* gen = GENERAL_NAME_new();
        if (gen == nullptr || value == nullptr) {
            GENERAL_NAME_free(gen);
            ASN1_STRING_free(value);
            throw std::runtime_error("cannot build subjectAltName");
        }
        GENERAL_NAME_set0_value(gen, type, value);
        sk_GENERAL_NAME_push(gens.get(), gen);
    };
    for (const auto& dns : names.dns) {
        ASN1_IA5STRING* s = ASN1_IA5STRING_new();
        if (s != nullptr) ASN1_STRING_set(s, dns.data(), static_cast<int>(dns.size()));
        push(GEN_DNS, s);
    }
    for (const auto& ip : names.ips) {
        ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
        if (octets == nullptr) throw std::runtime_error("not an IP address: " + ip);
        push(GEN_IPADD, octets);
    }
    if (X509_add1_ext_i2d(cert, NID_subject_alt_name, gens.get(), 0, X509V3_ADD_DEFAULT) != 1)
        throw std::runtime_error("cannot add subjectAltName: " + openssl_reason());
}

X509Ptr make_certificate(EVP_PKEY* key, const SubjectNames& names) {
    X509Ptr cert(X509_new());
    if (!cert) throw std::runtime_error("cannot make a TLS certificate");
    X509_set_version(cert.get(), X509_VERSION_3);  // extensions need v3
    // A random positive serial of 127 bits (RFC 5280 §4.1.2.2: at most 20 octets), so that
    // a certificate made again never shares its issuer and serial with the earlier one.
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) throw std::runtime_error("no random serial");
    serial[0] &= 0x7f;
    BnPtr bn(BN_bin2bn(serial, sizeof serial, nullptr));
    if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr)
        throw std::runtime_error("cannot set the certificate serial");
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // clients' clocks may lag
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 86400);
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    const std::string cn = names.dns.empty() ? std::string("localhost") : names.dns.front();
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
    // Its own CA: a client told to trust this file as a CA accepts it as the chain's anchor.
    add_extension(cert.get(), &v3, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), &v3, NID_key_usage,
                  "critical,digitalSignature,keyEncipherment,keyCertSign");
    add_extension(cert.get(), &v3, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), &v3, NID_subject_key_identifier, "hash");
    add_extension(cert.get(), &v3, NID_authority_key_identifier, "keyid:always");
    add_subject_alt_names(cert.get(), names);
    if (X509_sign(cert.get(), key, EVP_sha256()) == 0)
        throw std::runtime_error("cannot sign the TLS certificate: " + openssl_reason());
    return cert;
}

// Writes through a temporary file renamed over `path`, so that a reader never sees half a
// file. The key's file is made with `mode` before anything is written to it.
template <class Write>
void write_file(const std::string& path, mode_t mode, Write write) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    FILE* f = fd >= 0 ? ::fdopen(fd, "w") : nullptr;
    if (f == nullptr && fd >= 0) ::close(fd);
    const bool ok = f != nullptr && write(f);
    const bool closed = f != nullptr && std::fclose(f) == 0;
    if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot write " + path + ": " + errno_text());
    }
}

}  // namespace

SelfSigned ensure_self_signed(const std::string& dir, const SubjectNames& names) {
    SelfSigned out{dir + "/tls.crt", dir + "/tls.key", {}};
    out.made = why_renew(out.cert_path, out.key_path, names);
    if (out.made.empty()) return out;
    PkeyPtr key(EVP_RSA_gen(2048));
    if (!key) throw std::runtime_error("cannot make a TLS key");
    const auto cert = make_certificate(key.get(), names);
    write_file(out.key_path, 0600, [&](FILE* f) {
        return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
    });
    write_file(out.cert_path, 0644, [&](FILE* f) { return PEM_write_X509(f, cert.get()) == 1; });
    return out;
}

}  // namespace posthorn::crypto
