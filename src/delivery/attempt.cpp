#include "delivery/attempt.hpp"

#include "smtp/errors.hpp"

namespace posthorn::delivery {

AttemptResult from_reply(const smtp::Reply& reply, Stage stage) {
    return AttemptResult{.stage = stage, .code = reply.code, .text = reply.verbatim()};
}

AttemptResult from_error(const error_code& ec, const std::string& where, Stage stage) {
    using domain::Trouble;
    if (ec == smtp::errc::smtputf8_unsupported)
        return {stage, Trouble::smtputf8_unsupported, 0, where + ": " + ec.message()};
    if (ec == smtp::errc::tls_unavailable)
        return {stage, Trouble::tls_unavailable, 0,
                where + ": TLS is required and the server does not offer it"};
    if (ec == smtp::errc::tls_failed)
        return {stage, Trouble::tls_failed, 0, where + ": " + ec.message()};
    return {stage, Trouble::network, 0, where + ": " + ec.message()};
}

}  // namespace posthorn::delivery
