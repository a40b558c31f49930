// smtp/errors.hpp — failures of the SMTP wire protocol (not remote refusals: those are
// replies, data for the caller to classify).
#pragma once

#include <type_traits>

#include "core/result.hpp"

namespace posthorn::smtp {

enum class errc {
    line_too_long = 1,     // a reply line or a reply over the limits
    malformed_reply,       // not "DDD text"
    unexpected_eof,        // the server closed the connection mid-conversation
    tls_unavailable,       // TLS required, and STARTTLS not offered or refused
    tls_failed,            // the TLS handshake failed
    tls_not_verified,      // the certificate did not pass the checks asked for (peer())
    not_ready,             // used before open() succeeded, or after the session broke
    smtputf8_unsupported,  // UTF-8 addresses, and the server does not offer SMTPUTF8
};

const boost::system::error_category& error_category() noexcept;
inline error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace posthorn::smtp

template <>
struct boost::system::is_error_code_enum<posthorn::smtp::errc> : std::true_type {};
