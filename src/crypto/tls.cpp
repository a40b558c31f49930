#include "crypto/tls.hpp"

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

}  // namespace posthorn::crypto
