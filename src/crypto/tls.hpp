// crypto/tls.hpp — TLS contexts for Asio streams (OpenSSL 3). The outbound SMTP client
// uses client_context(): opportunistic STARTTLS encrypts without verifying (RFC 7435: a
// self-signed MX is the common case), `verify` checks the chain and the name against the
// system trust store. Contexts are immutable once made and shared between connections.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>
#include <utility>

namespace posthorn::crypto {

std::shared_ptr<boost::asio::ssl::context> client_context(bool verify);

// A server context from PEM files; errors are thrown (start-up only).
std::shared_ptr<boost::asio::ssl::context> server_context(const std::string& cert_path,
                                                          const std::string& key_path);

// `dir`/tls.crt and `dir`/tls.key, made once (RSA-2048, self-signed for `hostname`, ten
// years) when they do not exist. Answers the two paths. Start-up only; throws on failure.
std::pair<std::string, std::string> ensure_self_signed(const std::string& dir,
                                                       const std::string& hostname);

}  // namespace posthorn::crypto
