#include "crypto/tls.hpp"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "core/c_ptr.hpp"

namespace posthorn::crypto {

std::shared_ptr<boost::asio::ssl::context> client_context(const std::string& ca_file) {
    namespace ssl = boost::asio::ssl;
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    if (ca_file.empty())
        ctx->set_default_verify_paths();
    else
        ctx->load_verify_file(ca_file);
    // verify_none: the handshake goes on whatever the certificate; OpenSSL still verifies
    // it and keeps the result (SSL_get_verify_result), which the caller's policy reads.
    ctx->set_verify_mode(ssl::verify_none);
    if (SSL_CTX_dane_enable(ctx->native_handle()) <= 0)
        throw std::runtime_error("cannot enable DANE on the TLS client context");
    return ctx;
}

int expect_peer(SSL* ssl, const PeerCheck& check) {
    int usable = 0;
    if (!check.tlsa.empty() && SSL_dane_enable(ssl, check.dane_name.c_str()) > 0) {
        // RFC 7672 §3.2.1: a DANE-EE(3) match authenticates the key; names do not matter.
        SSL_dane_set_flags(ssl, DANE_FLAG_NO_DANE_EE_NAMECHECKS);
        for (const auto& t : check.tlsa) {
            if (t.usage != 2 && t.usage != 3) continue;  // §3.1.3: PKIX-TA/EE are unusable
            if (SSL_dane_tlsa_add(ssl, t.usage, t.selector, t.matching_type, t.data.data(),
                                  t.data.size()) > 0)
                ++usable;
        }
    }
    if (usable > 0) return usable;
    bool first = true;
    for (const auto& name : check.names) {
        if (first)
            SSL_set1_host(ssl, name.c_str());
        else
            SSL_add1_host(ssl, name.c_str());
        first = false;
    }
    return 0;
}

PeerResult peer_result(SSL* ssl) {
    PeerResult r;
    r.version = SSL_get_version(ssl);
    if (const char* c = SSL_get_cipher_name(ssl)) r.cipher = c;
    if (SSL_get0_peer_certificate(ssl) == nullptr) {
        r.failure = "no certificate";
        return r;
    }
    const long result = SSL_get_verify_result(ssl);
    r.verified = result == X509_V_OK;
    if (!r.verified) r.failure = X509_verify_cert_error_string(result);
    std::uint8_t usage = 0;
    if (r.verified && SSL_get0_dane_authority(ssl, nullptr, nullptr) >= 0 &&
        SSL_get0_dane_tlsa(ssl, &usage, nullptr, nullptr, nullptr, nullptr) >= 0)
        r.dane = usage == 3 ? "DANE-EE" : "DANE-TA";
    return r;
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
