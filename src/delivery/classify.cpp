#include "delivery/classify.hpp"

#include "smtp/errors.hpp"

namespace posthorn::delivery {

Outcome classify_reply(const smtp::Reply& reply) {
    if (reply.positive()) return {Disposition::delivered, reply.verbatim()};
    if (reply.transient()) return {Disposition::transient, reply.verbatim()};
    return {Disposition::bounced, reply.verbatim()};
}

Outcome classify_error(const error_code& ec, const std::string& where) {
    if (ec == smtp::errc::tls_unavailable)
        return {Disposition::failed, where + ": TLS is required and the server does not offer it"};
    return {Disposition::transient, where + ": " + ec.message()};
}

}  // namespace posthorn::delivery
