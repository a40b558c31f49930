// api/queue_email.hpp — what both front doors do with a message once they have read it:
// check the sender's domain (VERIFIED, sending on), take a slot of the send rate, build the
// message if needed, put its Received and Feedback-ID fields on it (docs/sending.md, "The
// headers posthorn adds"), and store the email, its envelope, recipients and idempotency
// key in one durable transaction (the queue). Used by POST /v1/emails, POST /v1/emails/batch
// (which prepares each email, then stores them all in one transaction) and SMTP submission.
#pragma once

#include <optional>
#include <string>
#include <utility>
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
    // Where it came from, for the Received field put on it (mail/trace.hpp): the client's
    // address (the socket's, or the PROXY header's from a trusted network; never a header
    // the client writes), its EHLO name and RFC 3848 protocol (SMTP). An empty protocol is
    // the API: "HTTPS" when server.public_url is https, "HTTP" otherwise.
    struct Origin {
        std::string client_ip;
        std::string helo;
        std::string protocol;
    };
    Origin origin;
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

// A slot of the send rate (RateLimiter::reserve), given back when it is destroyed unless
// keep() was called: an email refused or replayed counts nothing. Move-only.
class RateSlot {
  public:
    RateSlot() = default;
    RateSlot(RateLimiter& limiter, std::string account_id, UnixMs at)
        : limiter_(&limiter), account_id_(std::move(account_id)), at_(at) {}
    RateSlot(RateSlot&& o) noexcept
        : limiter_(std::exchange(o.limiter_, nullptr)),
          account_id_(std::move(o.account_id_)),
          at_(o.at_) {}
    RateSlot& operator=(RateSlot&& o) noexcept {
        if (this != &o) {
            give_back();
            limiter_ = std::exchange(o.limiter_, nullptr);
            account_id_ = std::move(o.account_id_);
            at_ = o.at_;
        }
        return *this;
    }
    RateSlot(const RateSlot&) = delete;
    RateSlot& operator=(const RateSlot&) = delete;
    ~RateSlot() { give_back(); }
    void keep() { limiter_ = nullptr; }

  private:
    void give_back() {
        if (limiter_) limiter_->release(account_id_, at_);
        limiter_ = nullptr;
    }
    RateLimiter* limiter_ = nullptr;
    std::string account_id_;
    UnixMs at_ = 0;
};

// An email checked (domain, key, send rate) and built, ready to be stored: alone
// (store_email) or with others in one transaction (store_emails). Its slot of the send
// rate goes back unless it is stored.
struct PreparedEmail {
    store::NewEmail email;
    std::string source;
    RateSlot slot;
};

// The checks and the build of queue_email, without the store.
asio::awaitable<std::variant<PreparedEmail, Refused>> prepare_email(const Deps& deps,
                                                                    QueueRequest req);
// Stores one prepared email (queue_email's last step).
asio::awaitable<std::variant<Queued, Refused>> store_email(const Deps& deps, PreparedEmail p);
// Stores them all in one transaction (EmailStore::create_emails): each is Queued (a replay
// when its idempotency key was held), in their order; or, when the store fails, none is
// stored and the answer is the Refused (503 or 500) of them all.
asio::awaitable<std::variant<std::vector<Queued>, Refused>> store_emails(
    const Deps& deps, std::vector<PreparedEmail> emails);

// prepare_email, then store_email.
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
