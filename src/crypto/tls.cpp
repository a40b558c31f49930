#include "crypto/tls.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <stdexcept>

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

}  // namespace posthorn::crypto
