// crypto/tls.hpp — TLS contexts for Asio streams (OpenSSL 3), and the checks of a peer's
// certificate for the outbound SMTP client. The client context never fails a handshake over
// the certificate: OpenSSL verifies the chain anyway and keeps the result, which the caller
// reads after the handshake (peer_result) and acts on as its policy says — opportunistic
// STARTTLS encrypts without caring (RFC 7435: a self-signed MX is the common case), a
// verifying policy (delivery.tls = verify, MTA-STS RFC 8461, DANE RFC 7672) closes the
// connection when it did not verify. Contexts are immutable once made and shared between
// connections; the per-connection checks go on the SSL object.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace posthorn::crypto {

// A client context that trusts the CAs of `ca_file` (PEM), or the system's when empty, and
// can check DANE TLSA records. Throws on failure (start-up only).
std::shared_ptr<boost::asio::ssl::context> client_context(const std::string& ca_file = {});

// A DANE TLSA record (RFC 6698 §2.1).
struct Tlsa {
    std::uint8_t usage = 0;  // 2 DANE-TA, 3 DANE-EE; PKIX-TA/EE (0, 1) are unusable for SMTP
    std::uint8_t selector = 0;
    std::uint8_t matching_type = 0;
    std::vector<std::uint8_t> data;
};

// What the peer's certificate must match for it to count as verified.
struct PeerCheck {
    // The names it must be valid for (the MX host: RFC 8461 §4.2, RFC 6125), chained to a
    // trusted CA. Ignored when `tlsa` holds a usable record.
    std::vector<std::string> names;
    // DANE: the records it must match (RFC 7672 §3.1). With DANE-EE(3) the name is not
    // checked (§3.2.1); with DANE-TA(2) it must be valid for `dane_name` (§3.2.2).
    std::vector<Tlsa> tlsa;
    std::string dane_name;
};

// Arms the checks on `ssl` before its handshake. Answers how many TLSA records are usable
// (0 when none is, or none was given: then the names are checked instead, if any).
int expect_peer(SSL* ssl, const PeerCheck& check);

struct PeerResult {
    std::string version;  // "TLSv1.3"
    std::string cipher;
    bool verified = false;  // the checks armed by expect_peer passed
    std::string failure;    // why not ("hostname mismatch", "no matching DANE TLSA records")
    std::string dane;       // the usage that matched: "DANE-EE" or "DANE-TA"; "" when none
};

// After the handshake.
PeerResult peer_result(SSL* ssl);

// A server context from PEM files; errors are thrown (start-up only). serve uses
// crypto/server_certificate.hpp instead, whose pair can be re-read.
std::shared_ptr<boost::asio::ssl::context> server_context(const std::string& cert_path,
                                                          const std::string& key_path);

}  // namespace posthorn::crypto
