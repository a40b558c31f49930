#include "crypto/tls.hpp"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "core/c_ptr.hpp"

namespace posthorn::crypto {

std::shared_ptr<boost::asio::ssl::context> client_context(bool verify) {
    namespace ssl = boost::asio::ssl;
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (verify) {
        ctx->set_default_verify_paths();
        ctx->set_verify_mode(ssl::verify_peer);
    } else {
        ctx->set_verify_mode(ssl::verify_none);
    }
    return ctx;
}

std::shared_ptr<boost::asio::ssl::context> server_context(const std::string& cert_path,
                                                          const std::string& key_path) {
    namespace ssl = boost::asio::ssl;
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    ctx->use_certificate_chain_file(cert_path);
    ctx->use_private_key_file(key_path, ssl::context::pem);
    return ctx;
}

std::pair<std::string, std::string> ensure_self_signed(const std::string& dir,
                                                       const std::string& hostname) {
    const std::string cert_path = dir + "/tls.crt", key_path = dir + "/tls.key";
    if (std::ifstream(cert_path) && std::ifstream(key_path)) return {cert_path, key_path};
    using Pkey = CPtr<EVP_PKEY, EVP_PKEY_free>;
    using X509Ptr = CPtr<X509, X509_free>;
    Pkey key(EVP_RSA_gen(2048));
    X509Ptr cert(X509_new());
    if (!key || !cert) throw std::runtime_error("cannot make a TLS key");
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(std::time(nullptr)));
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 86400);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(hostname.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
        throw std::runtime_error("cannot sign the TLS certificate");
    // The key file is written 0600 before any byte of the key goes in.
    const int fd = ::open(key_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE* kf = fd >= 0 ? ::fdopen(fd, "w") : nullptr;
    FILE* cf = std::fopen(cert_path.c_str(), "w");
    const bool ok =
        kf && cf &&
        PEM_write_PrivateKey(kf, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1 &&
        PEM_write_X509(cf, cert.get()) == 1;
    if (kf) std::fclose(kf);
    if (cf) std::fclose(cf);
    if (!ok) throw std::runtime_error("cannot write " + cert_path + " and " + key_path);
    return {cert_path, key_path};
}

}  // namespace posthorn::crypto
