// dns/errors.hpp — what a DNS lookup can fail with. The c-ares back end maps its status
// codes onto these, so callers never see ARES_* values.
//
// nxdomain and no_data are answers, not failures: the name does not exist (RCODE 3,
// RFC 1035 §4.1.1), or it exists without a record of the asked type (RFC 2308 §2.2).
// is_not_found() tells them apart from the rest, which mean "we could not find out".
#pragma once

#include <type_traits>

#include "core/result.hpp"

namespace posthorn::dns {

enum class errc {
    nxdomain = 1,        // the name does not exist
    no_data,             // the name exists, but has no record of the asked type
    servfail,            // the server failed (RCODE 2), e.g. a broken DNSSEC chain upstream
    timeout,             // no answer within timeout × tries
    refused,             // the server refused the query (RCODE 5)
    connection_refused,  // nothing listens at the server's address
    bad_response,        // the answer was malformed
    cancelled,           // the resolver was destroyed, or the caller cancelled the lookup
    other,               // anything else (out of memory, a name c-ares could not encode, ...)
};

const boost::system::error_category& error_category() noexcept;
inline error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// True for nxdomain and no_data: "the name has no such record" (an answer, not a failure).
bool is_not_found(const error_code& ec) noexcept;

}  // namespace posthorn::dns

template <>
struct boost::system::is_error_code_enum<posthorn::dns::errc> : std::true_type {};
