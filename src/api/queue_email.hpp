// api/queue_email.hpp — what both front doors do with a message once they have read it:
// check the sender's domain (VERIFIED, sending on), take a slot of the send rate, build the
// message if needed, and store the email, its envelope, recipients and idempotency key in
// one durable transaction (the queue). Used by POST /v1/emails and SMTP submission.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/v1.hpp"
#include "domain/model.hpp"
#include "mail/address.hpp"
#include "mail/message.hpp"

namespace posthorn::api {

struct QueueRequest {
    std::string account_id;
    // The key that sends it (its id is kept with the email); a key tied to a domain sends
    // only from it (domain/api_keys.hpp: 403 FORBIDDEN otherwise).
    store::ApiKey key;
    mail::Mailbox from;
    std::vector<mail::Mailbox> to, cc, bcc;
    std::string subject;
    // The message to build (API), or one already written whose header block is final (SMTP).
    std::variant<mail::MessageSpec, std::string> message;
    std::string message_id;  // SMTP: the client's; empty: <em_…@smtp.hostname>
    std::optional<std::string> idempotency_key;
    std::optional<bool> track_opens, track_clicks;  // unset: the domain decides
    std::string source = "api";
    // The sender domain when the caller has read it already (SMTP, at MAIL FROM): not read
    // again. Its status and sending flag are checked either way.
    std::optional<store::Domain> domain;
    std::vector<domain::Tag> tags;  // checked (email_labels.hpp)
    std::string metadata_json;      // "" when none
    // When to send it, its window checked (domain::schedule_refusal): a time still ahead when
    // it is stored makes it SCHEDULED, its recipients due then (domain/scheduling.hpp).
    std::optional<UnixMs> scheduled_at;
};

struct Queued {
    std::string id;
    unsigned status = 200;
    std::string body;     // the JSON answer (replayed as is for an idempotency key)
    bool replay = false;  // an earlier request with the same key made it
};

struct Refused {
    unsigned status;  // 403, 429, 500, 503
    std::string code;
    std::string message;
    int retry_after_s = 0;
};

asio::awaitable<std::variant<Queued, Refused>> queue_email(const Deps& deps, QueueRequest req);

// The refusal of a key tied to a domain that tries to send from `from_domain`, naming the
// domain it may send from (domain/api_keys.hpp, key_may_send_from).
asio::awaitable<Result<std::string>> key_domain_refusal(const Deps& deps, store::ApiKey key,
                                                        std::string from_domain);

// The log line of a refused send (a line per refusal, for the operator): the door ("api",
// "smtp"), the account (empty before AUTH), the client's address, the answer's code
// ("VALIDATION_ERROR", "550 5.7.1") and its message. Never the message itself.
void log_refused_send(std::string_view door, std::string_view account_id,
                      std::string_view client_ip, std::string_view code, std::string_view why);

}  // namespace posthorn::api
