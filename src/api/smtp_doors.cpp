#include "api/smtp_doors.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "api/email_labels.hpp"
#include "api/inbound.hpp"
#include "api/inbound_auth.hpp"
#include "api/keys.hpp"
#include "api/queue_email.hpp"
#include "api/send_request.hpp"
#include "core/blocking.hpp"
#include "core/client_limits.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "crypto/hash.hpp"
#include "domain/api_keys.hpp"
#include "domain/delivery_policy.hpp"
#include "domain/email_rules.hpp"
#include "domain/events.hpp"
#include "domain/scheduling.hpp"
#include "domain/sending_domain.hpp"
#include "domain/test_mode.hpp"
#include "mail/address.hpp"
#include "mail/parse.hpp"
#include "mail/report.hpp"
#include "mail/trace.hpp"

namespace posthorn::api {

namespace json = boost::json;
using smtp::Reply;

namespace {

Reply reply(int code, std::string text) { return Reply{code, {std::move(text)}}; }

std::optional<std::string> header(const mail::ParsedMessage& m, std::string_view name) {
    for (const auto& [k, v] : m.headers)
        if (core::ascii_iequals(k, name)) return v;
    return std::nullopt;
}

std::vector<mail::Mailbox> mailboxes(const std::vector<mail::ParsedAddress>& list) {
    std::vector<mail::Mailbox> out;
    for (const auto& a : list) {
        auto m = mail::parse_mailbox(a.address);
        if (auto* box = std::get_if<mail::Mailbox>(&m)) {
            box->name = a.name;
            out.push_back(std::move(*box));
        }
    }
    return out;
}

// ---- submission ----

// The client an address string counts for in the AUTH throttle.
std::string client_of(const std::string& ip) {
    error_code ec;
    const auto a = asio::ip::make_address(ip, ec);
    return ec ? ip : core::client_of(a);
}

class Submission final : public smtp::SessionHandler {
  public:
    Submission(const Deps& d, std::string ip)
        : deps_(d), ip_(std::move(ip)), client_(client_of(ip_)) {}

    asio::awaitable<Reply> on_auth(std::string, std::string user, std::string password) override {
        auto* throttle = deps_.auth_throttle;
        if (throttle && throttle->locked(client_, AuthThrottle::Clock::now()))
            co_return reply(454,
                            "4.7.0 Too many failed authentications from your address, "
                            "try again later");
        // INTERFACE: both the SMTP user name and the password are the API key.
        if (user != password || !looks_like_api_key(user)) co_return co_await failed(user);
        auto hash = hash_api_key(user);
        auto key = co_await deps_.accounts.find_api_key(hash);
        if (!key && key.error() != store::errc::not_found) {
            log::error("smtp submission: api key lookup: {}", key.error().message());
            co_return reply(454, "4.7.0 Temporary authentication failure");  // not counted
        }
        if (!key || !crypto::equal_ct(key->hash, hash) || key->revoked_at)
            co_return co_await failed(user);
        account_ = key->account_id;
        key_hash_ = std::move(hash);
        key_ = std::move(*key);
        co_return reply(235, "2.7.0 Authentication successful");
    }

    asio::awaitable<Reply> on_mail_from(std::string address, std::size_t size) override {
        co_return logged(co_await mail_from(std::move(address), size));
    }

    asio::awaitable<Reply> on_rcpt_to(std::string address) override {
        auto m = mail::parse_mailbox(address);
        if (!std::holds_alternative<mail::Mailbox>(m))
            co_return reply(553, "5.1.3 Bad recipient address syntax");
        if (rcpts_ >= static_cast<std::size_t>(deps_.sending.max_recipients))
            co_return reply(452, "4.5.3 Too many recipients");
        ++rcpts_;
        co_return reply(250, "2.1.5 Recipient OK");
    }

    asio::awaitable<Reply> on_message(smtp::ReceivedMessage msg) override {
        co_return logged(co_await message(std::move(msg)));
    }

    void on_reset() override {
        rcpts_ = 0;
        mail_domain_.reset();
    }

  private:
    // A refusal of MAIL or of the message is a refused send: a log line (log_refused_send).
    Reply logged(Reply r) const {
        if (r.code >= 400)
            log_refused_send("smtp", account_, ip_, std::to_string(r.code),
                             r.lines.empty() ? std::string_view() : std::string_view(r.lines[0]));
        return r;
    }

    asio::awaitable<Reply> mail_from(std::string address, std::size_t) {
        auto m = mail::parse_mailbox(address);
        if (!std::holds_alternative<mail::Mailbox>(m))
            co_return reply(553, "5.1.7 Bad sender address syntax");
        if (auto refusal = co_await check_key()) co_return *refusal;
        const auto& box = std::get<mail::Mailbox>(m);
        auto domain = co_await sending_domain(box.domain, box.address());
        if (auto* refusal = std::get_if<Reply>(&domain)) co_return *refusal;
        mail_domain_ = std::get<store::Domain>(std::move(domain));
        co_return reply(250, "2.1.0 Sender OK");
    }

    asio::awaitable<Reply> message(smtp::ReceivedMessage msg) {
        // Only the header block is read here (the addresses, the Message-ID, the tracking
        // flags): the body goes to the queue as it came.
        auto pool = deps_.blocking;
        auto parsed =
            co_await parse_off_thread(std::move(pool), std::string(mail::header_block(msg.data)));
        if (parsed.from.size() != 1)
            co_return reply(550, "5.6.0 The message needs one From address");
        auto from = mailboxes(parsed.from);
        if (from.empty()) co_return reply(550, "5.1.7 The From address is not valid");
        // Tags and metadata (docs/smtp.md): refused as the API refuses them, before anything
        // is counted or stored.
        EmailLabels labels;
        if (auto bad = read_header_labels(parsed.headers, labels))
            co_return reply(550, "5.6.0 " + *bad);
        // Scheduled send (docs/smtp.md): refused as the API refuses a bad scheduled_at, a
        // permanent refusal of this message (the same header would be refused again).
        std::optional<UnixMs> scheduled_at;
        if (auto at = header(parsed, kScheduledAtHeader)) {
            std::string text = *at;  // unfolded; white space around it is not the time's
            text.erase(0, text.find_first_not_of(" \t\r\n"));
            text.erase(text.find_last_not_of(" \t\r\n") + 1);
            auto when = parse_scheduled_at(kScheduledAtHeader, text);
            if (auto* msg = std::get_if<std::string>(&when)) co_return reply(550, "5.6.0 " + *msg);
            if (auto why = domain::schedule_refusal(kScheduledAtHeader, std::get<UnixMs>(when),
                                                    deps_.clock.now_ms()))
                co_return reply(550, "5.6.0 " + *why);
            scheduled_at = std::get<UnixMs>(when);
        }
        // The header From is usually on the MAIL FROM domain, read and checked at MAIL.
        std::optional<store::Domain> domain;
        if (mail_domain_ && !mail_domain_->id.empty() &&
            core::ascii_iequals(mail_domain_->name, from.front().domain)) {
            domain = mail_domain_;
        } else {
            auto d = co_await sending_domain(from.front().domain, from.front().address());
            if (auto* refusal = std::get_if<Reply>(&d)) co_return *refusal;
            domain = std::get<store::Domain>(std::move(d));
        }

        QueueRequest q{.account_id = account_, .key = key_, .from = from.front(), .source = "smtp"};
        q.domain = std::move(domain);
        q.to = mailboxes(parsed.to);
        q.cc = mailboxes(parsed.cc);
        q.subject = parsed.subject;
        // Envelope recipients: To and Cc as the headers say, the rest are Bcc.
        std::vector<mail::Mailbox> to, cc, bcc;
        auto in = [](const std::vector<mail::Mailbox>& list, const std::string& a) {
            return std::any_of(list.begin(), list.end(), [&](const mail::Mailbox& m) {
                return core::ascii_iequals(m.address(), a);
            });
        };
        for (const auto& r : msg.rcpt_to) {
            auto m = mail::parse_mailbox(r);
            if (!std::holds_alternative<mail::Mailbox>(m)) continue;
            auto box = std::get<mail::Mailbox>(std::move(m));
            if (in(q.to, box.address()))
                to.push_back(std::move(box));
            else if (in(q.cc, box.address()))
                cc.push_back(std::move(box));
            else
                bcc.push_back(std::move(box));
        }
        q.to = std::move(to);
        q.cc = std::move(cc);
        q.bcc = std::move(bcc);
        if (q.to.empty() && q.cc.empty() && q.bcc.empty())
            co_return reply(554, "5.5.1 No valid recipients");

        auto flag = [&](std::string_view name) -> std::optional<bool> {
            auto v = header(parsed, name);
            if (!v) return std::nullopt;
            // INTERFACE: the headers are "set to the text true".
            std::string t = core::ascii_lower(*v);
            t.erase(0, t.find_first_not_of(" \t"));
            t.erase(t.find_last_not_of(" \t\r\n") + 1);
            return t == "true";
        };
        q.tags = std::move(labels.tags);
        q.metadata_json = std::move(labels.metadata_json);
        q.scheduled_at = scheduled_at;
        q.track_opens = flag("X-Track-Opens");
        q.track_clicks = flag("X-Track-Clicks");
        if (!parsed.message_id.empty()) {
            q.message_id = parsed.message_id;
            q.idempotency_key = "smtp:" + parsed.message_id;  // INTERFACE: the Message-ID
        }
        std::vector<std::pair<std::string, std::string>> add;
        if (parsed.message_id.empty()) {  // RFC 5322 §3.6.4: a message should have one
            q.message_id = new_id("msg_", deps_.clock.now_ms()) + "@" + deps_.smtp_hostname;
            add.emplace_back("Message-ID", "<" + q.message_id + ">");
        }
        if (!header(parsed, "Date")) add.emplace_back("Date", format_rfc5322(deps_.clock.now_ms()));
        // Our own headers are instructions to us, not part of the message: never delivered.
        // A Feedback-ID is ours to write (queue_email.cpp; Gmail takes one per message).
        q.message = mail::edit_headers(
            msg.data,
            {"X-Track-Opens", "X-Track-Clicks", "Bcc", std::string(kTagHeader),
             std::string(kMetadataHeader), std::string(kScheduledAtHeader), "Feedback-ID"},
            add);
        // Its Received field: the client's address and EHLO name, and an authenticated
        // submission's protocol, ESMTPSA over STARTTLS (RFC 3848).
        q.origin = {.client_ip = msg.remote_ip.empty() ? ip_ : msg.remote_ip,
                    .helo = msg.helo,
                    .protocol = mail::smtp_protocol(msg.esmtp, msg.tls, true)};

        auto outcome = co_await queue_email(deps_, std::move(q));
        if (auto* r = std::get_if<Refused>(&outcome)) {
            if (r->status == 429)
                co_return reply(451, "4.7.1 Sending rate exceeded; try again in " +
                                         std::to_string(r->retry_after_s) + " s");
            if (r->status == 403) co_return reply(550, "5.7.1 " + r->message);
            co_return reply(451, "4.3.0 Temporary failure, try again");
        }
        co_return reply(250, "2.0.0 Ok: queued as " + std::get<Queued>(outcome).id);
    }

    // A failed AUTH: counted, logged with the client's address (and the key's displayable
    // prefix when it has the shape of a key, never more of it), answered late once the
    // client or the prefix has failed more than twice.
    asio::awaitable<Reply> failed(const std::string& user) {
        const std::string prefix = looks_like_api_key(user) ? user.substr(0, 11) : "";
        auto* throttle = deps_.auth_throttle;
        std::chrono::milliseconds delay{0};
        if (throttle) {
            const auto [wait, n] = throttle->failed(client_, prefix, AuthThrottle::Clock::now());
            delay = wait;
            log::event(log::Level::warn, "smtp auth failed",
                       {{"listener", "submission"},
                        {"client_ip", ip_},
                        {"key_prefix", prefix},
                        {"failures", n},
                        {"window_s", static_cast<std::int64_t>(throttle->options().window.count())},
                        {"locked_out", n >= throttle->options().max_failures}});
        } else {
            log::event(log::Level::warn, "smtp auth failed",
                       {{"listener", "submission"}, {"client_ip", ip_}, {"key_prefix", prefix}});
        }
        if (delay.count() > 0) {
            asio::steady_timer wait(co_await asio::this_coro::executor, delay);
            co_await wait.async_wait(use_nothrow_awaitable);
        }
        co_return reply(535, "5.7.8 Authentication credentials invalid");
    }

    // The key is checked again at every MAIL FROM: one revoked meanwhile stops the session's
    // sending at its next transaction, as the next HTTP request would be refused.
    asio::awaitable<std::optional<Reply>> check_key() {
        if (account_.empty()) co_return reply(530, "5.7.0 Authentication required");
        auto hash = key_hash_;
        auto key = co_await deps_.accounts.find_api_key(std::move(hash));
        if (!key && key.error() != store::errc::not_found)
            co_return reply(451, "4.3.0 Temporary failure, try again");
        if (!key || key->revoked_at) {
            account_.clear();
            co_return reply(530, "5.7.0 The API key was revoked; authenticate again");
        }
        key_ = std::move(*key);
        co_return std::nullopt;
    }

    // The account's domain named `domain`, if it may send from `address` of it. A test key's
    // sandbox sender needs none (domain/test_mode.hpp): a Domain without an id stands for it,
    // and queue_email checks the sender again.
    asio::awaitable<std::variant<store::Domain, Reply>> sending_domain(std::string domain,
                                                                       std::string address) {
        auto account = account_;
        auto d = co_await deps_.domains.find_domain_by_name(std::move(account), domain);
        if (!d && d.error() != store::errc::not_found)
            co_return reply(451, "4.3.0 Temporary failure, try again");
        // A key tied to a domain sends only from it (RFC 3463 X.7.1: not authorized).
        if (!domain::key_may_send_from(key_, d ? d->id : std::string())) {
            auto why = co_await key_domain_refusal(deps_, key_, domain);
            if (!why) co_return reply(451, "4.3.0 Temporary failure, try again");
            co_return reply(550, "5.7.1 " + *why);
        }
        if (domain::sends_from_sandbox(key_, address)) co_return store::Domain{.name = domain};
        switch (d ? domain::may_send_from(d->status, d->sending)
                  : domain::SendCheck::not_verified) {
            case domain::SendCheck::not_verified:
                co_return reply(550, "5.7.1 The domain " + domain +
                                         " is not a verified domain of this account");
            case domain::SendCheck::sending_disabled:
                co_return reply(550, "5.7.1 Sending is disabled for the domain " + domain);
            case domain::SendCheck::ok:
                break;
        }
        co_return std::move(*d);
    }

    const Deps& deps_;
    std::string ip_;
    std::string client_;  // core::client_of(ip_)
    std::string account_;
    std::string key_hash_;
    store::ApiKey key_;  // the key of the AUTH, as last read
    std::size_t rcpts_ = 0;
    std::optional<store::Domain> mail_domain_;  // the MAIL FROM domain, checked at MAIL
};

// ---- inbound ----

class Inbound final : public smtp::SessionHandler {
  public:
    Inbound(const Deps& d, std::string ip) : deps_(d), ip_(std::move(ip)) {}

    asio::awaitable<Reply> on_auth(std::string, std::string, std::string) override {
        co_return reply(502, "5.5.1 AUTH not available here");
    }

    asio::awaitable<Reply> on_mail_from(std::string, std::size_t) override {
        co_return reply(250, "2.1.0 Sender OK");
    }

    asio::awaitable<Reply> on_rcpt_to(std::string address) override {
        // RFC 5321 §4.5.1: "postmaster" alone is this server's postmaster, which is
        // postmaster@<smtp.hostname> — received like any address of a domain that takes mail.
        if (core::ascii_iequals(address, "postmaster"))
            address = "postmaster@" + core::ascii_lower(deps_.smtp_hostname);
        auto m = mail::parse_mailbox(address);
        if (!std::holds_alternative<mail::Mailbox>(m))
            co_return reply(501, "5.1.3 Bad recipient address syntax");
        auto box = std::get<mail::Mailbox>(std::move(m));
        // bounces+<token>@<smtp.hostname>, or @<the email's return path>: a report about an
        // email we sent (DESIGN §7, docs/domains.md#return-path).
        constexpr std::string_view kBounce = "bounces+";
        const bool at_server = box.domain == core::ascii_lower(deps_.smtp_hostname);
        std::optional<store::Email> bounced;
        if (box.local.rfind(kBounce, 0) == 0) {
            auto token = box.local.substr(kBounce.size());
            auto email = co_await deps_.emails.find_email_by_return_token(std::move(token));
            if (!email && email.error() != store::errc::not_found)
                co_return reply(451, "4.3.0 Temporary failure, try again");
            if (email &&
                domain::bounce_host_matches(box.domain, email->return_path, deps_.smtp_hostname))
                bounced = std::move(*email);
            else if (at_server)
                co_return reply(550, "5.1.1 No such bounce address");
            // Elsewhere, not a bounce address of ours: mail like any other (refused below
            // unless its domain takes mail), never relayed.
        }
        if (bounced) {
            auto email = std::move(bounced);
            // Several bounce addresses in one transaction: the report is about each email.
            if (std::none_of(report_for_.begin(), report_for_.end(),
                             [&](const store::Email& e) { return e.id == email->id; }))
                report_for_.push_back(std::move(*email));
            co_return reply(250, "2.1.5 Recipient OK");
        }
        auto domain = box.domain;
        auto named = co_await deps_.inbound.inbound_domains(std::move(domain));
        if (!named) co_return reply(451, "4.3.0 Temporary failure, try again");
        std::vector<store::Domain> owners;  // the accounts whose domain of that name takes mail
        for (auto& d : *named)
            if (domain::receives_mail(d.status, d.inbound)) owners.push_back(std::move(d));
        if (owners.empty())
            co_return reply(550,
                            "5.7.1 Relaying denied: " + box.domain + " does not receive mail here");
        targets_.emplace_back(box.address(), std::move(owners));
        co_return reply(250, "2.1.5 Recipient OK");
    }

    asio::awaitable<Reply> on_message(smtp::ReceivedMessage msg) override {
        if (!report_for_.empty()) {
            auto r = co_await apply_report(msg.data);
            if (targets_.empty()) co_return r;
        }
        auto pool = deps_.blocking;
        auto parsed = co_await parse_off_thread(std::move(pool), msg.data);
        // SPF, DKIM and DMARC once for the message, kept with every copy; the mail is
        // stored whatever they say (docs/inbound.md, "Authentication").
        std::string from_domain;
        if (!parsed.from.empty())
            if (auto m = mail::parse_mailbox(parsed.from.front().address);
                auto* box = std::get_if<mail::Mailbox>(&m))
                from_domain = box->domain;
        const std::string auth_in_ip = msg.remote_ip.empty() ? ip_ : msg.remote_ip;
        // The Received field of each stored copy (below): the sender's address and name, and
        // ESMTP or ESMTPS (RFC 3848), as Postfix writes it at an MX.
        const auto protocol = mail::smtp_protocol(msg.esmtp, msg.tls, false);
        mail::AuthInput auth_in{.client_ip = auth_in_ip,
                                .helo = msg.helo,
                                .mail_from = msg.mail_from,
                                .from_domain = std::move(from_domain),
                                .message = msg.data};
        auto auth_pool = deps_.inbound_auth ? deps_.inbound_auth : deps_.blocking;
        const auto authentication =
            co_await authenticate_inbound(deps_.resolver, std::move(auth_pool), std::move(auth_in));
        const auto now = deps_.clock.now_ms();
        auto addrs = [](const std::vector<mail::ParsedAddress>& list) {
            json::array a;
            for (const auto& x : list) a.emplace_back(core::ascii_lower(x.address));
            return a;
        };
        const auto to = addrs(parsed.to), cc = addrs(parsed.cc);
        std::vector<store::InboundEmail> rows;
        std::vector<store::Event> events;
        std::string first_id;
        for (const auto& [address, owners] : targets_) {
            json::array bcc;
            const auto a = core::ascii_lower(address);
            if (std::find(to.begin(), to.end(), json::value(a)) == to.end() &&
                std::find(cc.begin(), cc.end(), json::value(a)) == cc.end())
                bcc.emplace_back(a);
            for (const auto& d : owners) {
                auto id = new_id("in_", now);
                // Each copy is received for one address, under its own id (RFC 5321 §4.4:
                // a "for" clause names the one recipient).
                auto received = mail::received_field({.helo = msg.helo,
                                                      .client_ip = auth_in_ip,
                                                      .by = deps_.smtp_hostname,
                                                      .with = protocol,
                                                      .id = id,
                                                      .for_address = address,
                                                      .at = now});
                store::InboundEmail e{
                    .id = std::move(id),
                    .account_id = d.account_id,
                    .domain_id = d.id,
                    .from_email = parsed.from.empty() ? msg.mail_from : parsed.from.front().address,
                    .from_name = parsed.from.empty() ? "" : parsed.from.front().name,
                    .to_address = address,
                    .subject = parsed.subject,
                    .reply_to = parsed.reply_to.empty() ? "" : parsed.reply_to.front().address,
                    .cc_json = cc.empty() ? "null" : json::serialize(cc),
                    .bcc_json = bcc.empty() ? "null" : json::serialize(bcc),
                    .authentication_json = authentication,
                    .raw = received + msg.data,
                    .received_at = now};
                int index = 0;
                for (const auto& att : parsed.attachments)
                    e.attachments.push_back({.index = index++,
                                             .filename = att.filename,
                                             .content_type = att.content_type,
                                             .size = static_cast<std::int64_t>(att.content.size()),
                                             .content_id = att.content_id});
                if (first_id.empty()) first_id = e.id;
                events.push_back(domain::make_event(
                    domain::EventKind::inbound_received, e.account_id, std::nullopt,
                    domain::inbound_event_data({.id = e.id,
                                                .from_email = e.from_email,
                                                .from_name = e.from_name,
                                                .to_address = e.to_address,
                                                .subject = e.subject,
                                                .attachments = e.attachments.size(),
                                                .authentication = authentication}),
                    now));
                rows.push_back(std::move(e));
            }
        }
        auto stored = co_await deps_.inbound.create_inbound(std::move(rows), std::move(events));
        if (!stored) {
            log::error("inbound: storing a message: {}", stored.error().message());
            co_return reply(451, "4.3.0 Temporary failure, try again");
        }
        co_return reply(250, "2.0.0 Ok: queued as " + first_id);
    }

    void on_reset() override {
        targets_.clear();
        report_for_.clear();
    }

  private:
    // A DSN (RFC 3464) bounces the recipients it reports failed; an ARF report (RFC 5965)
    // marks the email COMPLAINED. Either suppresses the addresses. Other mail to a bounce
    // address is accepted and dropped.
    asio::awaitable<Reply> apply_report(std::string raw) {
        auto parse = [raw = std::move(raw)] { return mail::parse_report(raw); };
        auto pool = deps_.blocking;
        const auto report = co_await core::run_blocking(std::move(pool), std::move(parse));
        for (const auto& email : report_for_) {
            if (!co_await apply_report_to(report, email))
                co_return reply(451, "4.3.0 Temporary failure, try again");
        }
        co_return reply(250, "2.0.0 Ok: report taken");
    }

    // Applies a parsed report to one email; false when the store could not record it. The
    // delivery policy decides what each failed recipient of a DSN comes to; the email's
    // rules what a complaint does.
    asio::awaitable<bool> apply_report_to(const mail::Report& report, const store::Email& email) {
        const auto now = deps_.clock.now_ms();
        domain::Outcomes outcomes{.at = now};
        if (report.kind == mail::Report::Kind::dsn) {
            for (const auto& rr : report.recipients) {
                auto r = std::find_if(email.recipients.begin(), email.recipients.end(),
                                      [&](const store::Recipient& x) {
                                          return core::ascii_lower(x.address) == rr.address;
                                      });
                if (r == email.recipients.end()) continue;
                if (auto d = domain::decide_report(rr.action, rr.status, rr.diagnostic))
                    outcomes.recipients.push_back(
                        domain::outcome_of(r->id, r->attempts, std::move(*d)));
            }
        } else if (report.kind == mail::Report::Kind::arf) {
            std::vector<std::string> named;
            for (const auto& rr : report.recipients) named.push_back(rr.address);
            outcomes = domain::complaint_outcomes(email, named, report.feedback_type, now);
        }
        if (outcomes.recipients.empty() && !outcomes.complaint) co_return true;
        auto decide = [outcomes = std::move(outcomes)](const store::Email& current) {
            return domain::apply_outcomes(current, outcomes);
        };
        auto account = email.account_id;
        auto id = email.id;
        if (auto r = co_await deps_.emails.change_email(std::move(account), std::move(id), true,
                                                        std::move(decide));
            !r) {
            log::error("report for {}: {}", email.id, r.error().message());
            co_return false;
        }
        co_return true;
    }

    const Deps& deps_;
    std::string ip_;
    std::vector<std::pair<std::string, std::vector<store::Domain>>> targets_;
    std::vector<store::Email> report_for_;  // the emails whose bounce addresses were given
};

}  // namespace

std::unique_ptr<smtp::SessionHandler> make_submission_handler(const Deps& deps, std::string ip) {
    return std::make_unique<Submission>(deps, std::move(ip));
}

std::unique_ptr<smtp::SessionHandler> make_inbound_handler(const Deps& deps, std::string ip) {
    return std::make_unique<Inbound>(deps, std::move(ip));
}

}  // namespace posthorn::api
