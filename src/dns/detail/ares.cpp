#include "dns/detail/ares.hpp"

namespace posthorn::dns::detail {

error_code from_ares_status(int status) noexcept {
    switch (status) {
        case ARES_SUCCESS:
            return {};
        case ARES_ENOTFOUND:  // RCODE 3 (ares_query turns NXDOMAIN into this)
            return errc::nxdomain;
        case ARES_ENODATA:  // NOERROR without an answer, or a parser found none of its type
            return errc::no_data;
        case ARES_ESERVFAIL:
            return errc::servfail;
        case ARES_ETIMEOUT:
            return errc::timeout;
        case ARES_EREFUSED:
            return errc::refused;
        case ARES_ECONNREFUSED:
            return errc::connection_refused;
        case ARES_EBADRESP:
        case ARES_EFORMERR:
            return errc::bad_response;
        case ARES_ECANCELLED:
        case ARES_EDESTRUCTION:
            return errc::cancelled;
        default:
            return errc::other;
    }
}

}  // namespace posthorn::dns::detail
