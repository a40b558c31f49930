// api/smtp_doors.hpp — the two SMTP front doors (DESIGN §1, issue: one server, two
// policies). Submission: AUTH with the API key as user and password, then mail from a
// VERIFIED domain of that account becomes an Email exactly like POST /v1/emails
// (X-Track-Opens / X-Track-Clicks turn tracking on and are removed, the Message-ID is the
// idempotency key). Inbound: no AUTH; RCPT only for a VERIFIED domain with config.inbound
// (never an open relay); each message is stored as an inbound email per recipient.
#pragma once

#include <memory>

#include "api/v1.hpp"
#include "smtp/session_handler.hpp"

namespace posthorn::api {

std::unique_ptr<smtp::SessionHandler> make_submission_handler(const Deps& deps, std::string ip);
std::unique_ptr<smtp::SessionHandler> make_inbound_handler(const Deps& deps, std::string ip);

}  // namespace posthorn::api
