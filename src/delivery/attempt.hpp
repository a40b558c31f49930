// delivery/attempt.hpp — what an attempt came to, in the words of the delivery policy
// (domain/delivery_policy.hpp, which decides what it means): a remote reply at a stage of
// the transaction, or a trouble that kept a reply from coming. This file only translates
// SMTP replies and error codes; it decides nothing. Pure.
#pragma once

#include <string>

#include "core/result.hpp"
#include "domain/delivery_policy.hpp"
#include "smtp/reply.hpp"

namespace posthorn::delivery {

using domain::AttemptResult;
using domain::Stage;

// A remote reply, kept verbatim.
AttemptResult from_reply(const smtp::Reply& reply, Stage stage);

// A failure with no reply: `where` says what was being done ("connect mx.example.net[…]").
AttemptResult from_error(const error_code& ec, const std::string& where, Stage stage);

}  // namespace posthorn::delivery
