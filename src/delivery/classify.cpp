#include "delivery/classify.hpp"

#include "smtp/errors.hpp"

namespace posthorn::delivery {

Outcome classify_reply(const smtp::Reply& reply) {
    // Only 2xx is a success; a 3xx here is a server out of step: try again later.
    if (reply.code / 100 == 2) return {Disposition::delivered, reply.verbatim()};
    if (reply.code / 100 == 3) return {Disposition::transient, reply.verbatim()};
    if (reply.transient()) return {Disposition::transient, reply.verbatim()};
    return {Disposition::bounced, reply.verbatim()};
}

Outcome classify_error(const error_code& ec, const std::string& where) {
    if (ec == smtp::errc::smtputf8_unsupported)
        return {Disposition::failed, where + ": " + ec.message()};
    if (ec == smtp::errc::tls_unavailable)
        return {Disposition::failed, where + ": TLS is required and the server does not offer it"};
    return {Disposition::transient, where + ": " + ec.message()};
}

}  // namespace posthorn::delivery
