// crypto/tls.hpp — TLS contexts for Asio streams (OpenSSL 3). The outbound SMTP client
// uses client_context(): opportunistic STARTTLS encrypts without verifying (RFC 7435: a
// self-signed MX is the common case), `verify` checks the chain and the name against the
// system trust store. Contexts are immutable once made and shared between connections.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>

namespace posthorn::crypto {

std::shared_ptr<boost::asio::ssl::context> client_context(bool verify);

}  // namespace posthorn::crypto
