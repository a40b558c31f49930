// app/smtp_certificate.hpp — the certificate of the SMTP listeners' STARTTLS: the operator's
// (smtp.tls_cert, smtp.tls_key) or the self-signed pair of the data dir, and its re-reading
// on SIGHUP (docs/smtp.md#tls-and-the-certificate, docs/operations.md#tls-certificates).
#pragma once

#include <boost/asio/signal_set.hpp>

#include <memory>

#include "app/config.hpp"
#include "core/asio.hpp"
#include "crypto/server_certificate.hpp"

namespace posthorn::app {

// The names a client may reach the listeners by, which the self-signed certificate carries:
// smtp.hostname, localhost, and the IP addresses of both listeners (127.0.0.1 and ::1 for
// a wildcard address, which accepts on loopback too).
crypto::SubjectNames self_signed_names(const Config& config);

// Loads the pair, first making the self-signed one when no certificate is configured; logs
// which certificate it is. Throws std::runtime_error saying why not (start-up only).
std::shared_ptr<crypto::ServerCertificate> smtp_certificate(const Config& config);

// At each signal of `hup` (SIGHUP), reads the pair again: the next STARTTLS presents it,
// sessions already encrypted keep theirs. A pair that does not load is logged as an error
// and the one in use stays. Ends when `hup` is cancelled.
asio::awaitable<void> reload_on_signal(asio::signal_set& hup,
                                       std::shared_ptr<crypto::ServerCertificate> tls);

}  // namespace posthorn::app
