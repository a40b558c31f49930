// crypto/server_certificate.hpp — the certificate and key a TLS server presents (the SMTP
// listeners' STARTTLS), re-read when the operator renews them, and the self-signed pair
// made when none is configured.
//
// The listeners keep one asio::ssl::context for their whole life. The pair is taken from a
// ServerCertificate at each handshake (OpenSSL's certificate callback), so that after
// reload() a renewed certificate is presented from the next handshake on, while sessions
// already encrypted keep the one they began with. A new pair that does not load
// (unreadable, not PEM, a key that is not the certificate's) is refused, and the pair in
// use stays.
//
// The self-signed certificate names every name a client may connect to in subjectAltName
// (RFC 5280 §4.2.1.6; clients match on it, not on the CN: RFC 6125 §6.4.4) and is its own
// CA (basicConstraints CA:TRUE, keyUsage keyCertSign), so that a client given the file as
// its CA verifies it with its usual checks on.
//
// Thread-safety: reload() and handshakes may run on any threads at once.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>
#include <vector>

namespace posthorn::crypto {

class ServerCertificate final : public std::enable_shared_from_this<ServerCertificate> {
  public:
    // Loads the pair (PEM; the certificate file may hold a chain). Throws
    // std::runtime_error saying why (start-up only).
    static std::shared_ptr<ServerCertificate> load(std::string cert_path, std::string key_path);
    ~ServerCertificate();
    ServerCertificate(const ServerCertificate&) = delete;
    ServerCertificate& operator=(const ServerCertificate&) = delete;
    ServerCertificate(ServerCertificate&&) = delete;
    ServerCertificate& operator=(ServerCertificate&&) = delete;

    // The server context for the listeners (TLS 1.2 and later, no client certificate asked
    // for). It keeps this object alive.
    std::shared_ptr<boost::asio::ssl::context> context();

    // Reads the two files again. Answers "" once the new pair is in use; otherwise why not,
    // and the pair in use stays.
    std::string reload();

    // The certificate in use, for the log: "SHA-256 AB:CD:…, CN=…, valid until …".
    std::string describe() const;

    const std::string& cert_path() const;

  private:
    struct Impl;
    explicit ServerCertificate(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The names a self-signed certificate is made for.
struct SubjectNames {
    std::vector<std::string> dns;  // host names; the first is also the subject's CN
    std::vector<std::string> ips;  // IPv4 or IPv6 address literals
};

struct SelfSigned {
    std::string cert_path;  // `dir`/tls.crt
    std::string key_path;   // `dir`/tls.key
    // Why a new pair was made: "" when the files were kept as they were, "new" when there
    // was none, else what the earlier certificate lacked ("no subjectAltName IP:127.0.0.1").
    std::string made;
};

// `dir`/tls.crt and `dir`/tls.key: kept when both exist and the certificate either was not
// self-issued (an operator's certificate from a CA is never replaced) or names all of
// `names` and is its own CA; otherwise a new pair (RSA-2048, SHA-256, ten years) replaces
// them. The key file is 0600 before any byte of the key goes in. Start-up only; throws
// std::runtime_error on failure.
SelfSigned ensure_self_signed(const std::string& dir, const SubjectNames& names);

}  // namespace posthorn::crypto
