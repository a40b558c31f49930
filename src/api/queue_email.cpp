#include "api/queue_email.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>

#include "api/domains.hpp"
#include "api/tracking.hpp"
#include "core/blocking.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/text.hpp"
#include "crypto/keys.hpp"
#include "domain/api_keys.hpp"
#include "domain/scheduling.hpp"
#include "domain/sending_domain.hpp"
#include "domain/stats.hpp"
#include "domain/test_mode.hpp"
#include "mail/parse.hpp"
#include "mail/trace.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

constexpr UnixMs kIdempotencyTtlMs = 24 * 3'600'000;  // our choice: keys are kept a day

std::string join_addresses(const std::vector<mail::Mailbox>& list) {
    std::string out;
    for (const auto& m : list) {
        if (!out.empty()) out += ", ";
        m.append_address(out);
    }
    return out;
}

// The local part of the bounce address (bounces+<token>@…): the email's id (its 26
// characters after "em_"), by which a bounce report finds its email through the primary
// key, then 16 random characters (82 bits) that make it unguessable (store.hpp,
// find_email_by_return_token).
std::string return_token(std::string_view email_id) {
    static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string out(email_id.substr(3));
    for (unsigned char c : crypto::random_string(16))
        out.push_back(kAlphabet[c % kAlphabet.size()]);
    return out;
}

// A message with this much content or less is built on the network thread that took the
// request (GMime takes tens of microseconds for it, less than handing it to another thread
// and back); a bigger one, up to the attachment limit, on the blocking pool.
constexpr std::size_t kInlineBuildBytes = 64 * 1024;

std::size_t content_bytes(const mail::MessageSpec& spec) {
    std::size_t n = spec.subject.size();
    if (spec.text) n += spec.text->size();
    if (spec.html) n += spec.html->size();
    for (const auto& a : spec.attachments) n += a.content.size();
    for (const auto& [name, value] : spec.headers) n += name.size() + value.size();
    return n;
}

// A store's failure: 503 STORE_UNAVAILABLE while it cannot be reached (as the other
// endpoints answer, detail::internal_error) or while the email's rows stay contended by other
// nodes' transactions after every try (errc::busy: nothing was stored, a retry succeeds), 500
// otherwise. Logged.
Refused store_failed(const std::string& what, const error_code& ec) {
    log::error("queue email: could not {}: {}", what, ec.message());
    if (ec == store::errc::unavailable)
        return {503, "STORE_UNAVAILABLE", "the store cannot be reached; nothing was accepted", 5};
    if (ec == store::errc::busy)
        return {503, "STORE_UNAVAILABLE", "the store is busy; nothing was accepted", 1};
    return {500, "INTERNAL_ERROR", "could not " + what};
}

metrics::Counter accepted_total(
    "posthorn_emails_accepted_total",
    "Emails accepted into the queue (stored durably), by the door they came in by.",
    metrics::one_label("door", {"api", "smtp"}));

// The answer of an email whose idempotency key another request (or an earlier email of the
// same batch) holds: that request's stored answer.
Queued replayed(const store::StoredResponse& r) {
    auto old = json::parse(r.body);
    std::string old_id = old.is_object() && old.as_object().contains("id")
                             ? std::string(old.as_object().at("id").as_string())
                             : std::string();
    return Queued{std::move(old_id), static_cast<unsigned>(r.status), r.body, true};
}

// The SenderId of every Feedback-ID posthorn writes: Gmail wants 5 to 15 characters, the
// same across the mail stream.
constexpr std::string_view kFeedbackSenderId = "posthorn";

// The fields put on every accepted message: its Received field (RFC 5321 §4.4: a server
// that accepts a message adds one) and its Feedback-ID, Gmail's a:b:c:SenderId from the
// narrowest group to the broadest: the email's first tag ("name=value"; empty without
// one: Gmail reports on the other fields), the sender domain, the account. Never anything
// of one recipient's or of the key.
struct OwnFields {
    std::string received, feedback_id;
};

OwnFields own_fields(const Deps& deps, const QueueRequest::Origin& origin, const domain::Email& e,
                     std::string_view domain_name, UnixMs now) {
    std::string protocol = origin.protocol;
    if (protocol.empty()) protocol = deps.public_url.starts_with("https://") ? "HTTPS" : "HTTP";
    const std::string tag = e.tags.empty() ? std::string() : e.tags[0].name + "=" + e.tags[0].value;
    return {mail::received_field({.helo = origin.helo,
                                  .client_ip = origin.client_ip,
                                  .by = deps.smtp_hostname,
                                  .with = std::move(protocol),
                                  .id = e.id,
                                  .at = now}),
            mail::feedback_id_field({tag, domain_name, e.account_id, kFeedbackSenderId})};
}

}  // namespace

asio::awaitable<Result<std::string>> key_domain_refusal(const Deps& deps, store::ApiKey key,
                                                        std::string from_domain) {
    std::string bound = key.domain_id.value_or("");
    auto account = key.account_id;
    auto id = bound;
    auto d = co_await deps.domains.find_domain_by_id(std::move(account), std::move(id));
    if (!d && d.error() != store::errc::not_found) co_return d.error();
    if (d) bound = d->name;
    co_return "this key may only send from " + bound + ", not from " + from_domain;
}

asio::awaitable<std::variant<PreparedEmail, Refused>> prepare_email(const Deps& deps,
                                                                    QueueRequest req) {
    using R = std::variant<PreparedEmail, Refused>;
    const auto from_domain = req.from.domain;
    // Test mode (domain/test_mode.hpp): a test key sends from the sandbox sender without a
    // domain (the email has none); its mail is settled at once and never delivered.
    const bool test = req.key.test;
    const bool sandbox = domain::sends_from_sandbox(req.key, req.from.address());
    auto account = req.account_id;
    Result<store::Domain> sender = store::errc::not_found;
    if (sandbox)
        sender = store::Domain{.name = from_domain};  // no domain: id "", no tracking
    else if (req.domain)
        sender = std::move(*req.domain);
    else
        sender = co_await deps.domains.find_domain_by_name(std::move(account), from_domain);
    if (!sender && sender.error() != store::errc::not_found)
        co_return R(store_failed("read the sender domain", sender.error()));
    if (!domain::key_may_send_from(req.key, sender ? sender->id : std::string())) {
        auto why = co_await key_domain_refusal(deps, req.key, from_domain);
        if (!why) co_return R(store_failed("read the key's domain", why.error()));
        co_return R(Refused{403, "FORBIDDEN", std::move(*why)});
    }
    const auto check = sandbox  ? domain::SendCheck::ok
                       : sender ? domain::may_send_from(sender->status, sender->sending)
                                : domain::SendCheck::not_verified;
    switch (check) {
        case domain::SendCheck::not_verified:
            co_return R(Refused{403, "DOMAIN_NOT_VERIFIED",
                                "the domain " + from_domain +
                                    " is not a verified domain of this account" +
                                    (domain::is_sandbox_sender(req.from.address())
                                         ? std::string(" (") + std::string(domain::kSandboxSender) +
                                               " sends only with a test key)"
                                         : std::string())});
        case domain::SendCheck::sending_disabled:
            co_return R(Refused{403, "SENDING_DISABLED",
                                "sending is disabled for the domain " + from_domain});
        case domain::SendCheck::ok:
            break;
    }

    const auto now = deps.clock.now_ms();
    auto denied = co_await deps.rate_limiter.reserve(req.account_id, now);
    if (!denied) co_return R(store_failed("count the send rate", denied.error()));
    if (*denied)
        co_return R(Refused{429, "RATE_LIMITED",
                            "more than " + std::to_string(deps.sending.send_rate_per_minute) +
                                " emails per minute; retry after " +
                                std::to_string((*denied)->retry_after_s) + " s",
                            (*denied)->retry_after_s});
    PreparedEmail prepared{.source = req.source,
                           .slot = RateSlot(deps.rate_limiter, req.account_id, now)};
    auto& n = prepared.email;
    auto& e = n.email;
    e.id = new_id("em_", now);
    e.account_id = req.account_id;
    e.domain_id = sender->id;
    e.from_email = req.from.address();
    e.from_name = req.from.name;
    e.to_display = join_addresses(req.to);
    e.subject = std::move(req.subject);
    e.message_id = req.message_id.empty() ? e.id + "@" + deps.smtp_hostname : req.message_id;
    e.return_token = return_token(e.id);
    // Its envelope sender's domain, decided now and kept (domain::envelope_domain).
    e.return_path = domain::envelope_domain(sender->name, sender->return_path_label,
                                            sender->return_path_verified);
    // Test mail is read by nobody, so there is nothing to track: its HTML is kept as given.
    e.track_opens = !test && req.track_opens.value_or(sender->open_tracking);
    e.track_clicks = !test && req.track_clicks.value_or(sender->click_tracking);
    e.test = test;
    e.source = req.source;
    e.api_key_id = req.key.id;
    e.tags = std::move(req.tags);
    e.metadata_json = std::move(req.metadata_json);
    // The id's millisecond (`now`, or later if another thread had just made an id a
    // millisecond later, or the clock stepped back): the store keeps an account's emails in
    // the order of their ids, and lists them by time in that order.
    e.created_at = e.queued_at = id_time(e.id, "em_");
    e.envelope_id = new_id("env_", now);
    n.total_recipients = static_cast<int>(req.to.size() + req.cc.size() + req.bcc.size());
    // One delivery per address, whatever field named it.
    auto add = [&](const std::vector<mail::Mailbox>& list, domain::RecipientType type) {
        for (const auto& m : list) {
            auto address = m.address();
            if (std::any_of(n.recipients.begin(), n.recipients.end(),
                            [&](const auto& r) { return r.address == address; }))
                continue;
            // No next_attempt_at: due at once, claimed in the order of ids (the store's
            // "fresh" recipients, migration 012).
            n.recipients.push_back(
                {.address = std::move(address), .domain = m.domain, .type = type});
        }
    };
    add(req.to, domain::RecipientType::to);
    add(req.cc, domain::RecipientType::cc);
    add(req.bcc, domain::RecipientType::bcc);
    // Scheduled (domain/scheduling.hpp): SCHEDULED, its recipients due at its time, which the
    // queue waits for as for a retry. A time not ahead any more sends at once.
    if (req.scheduled_at && domain::waits(*req.scheduled_at, now)) {
        e.status = domain::EmailStatus::scheduled;
        e.scheduled_at = req.scheduled_at;
        for (auto& r : n.recipients) r.next_attempt_at = req.scheduled_at;
    }
    n.stats = domain::accepted_stats(e);  // counted as accepted when stored (domain/stats.hpp)
    auto answered = e.status;             // stored QUEUED; a test email's answer: how it ends
    if (test) {
        // Settled in the write that stores it (NewEmail::settle): never queued. The answer
        // says the status it ends with (the rule on these recipients, numbered as stored).
        n.settle = [now](const domain::Email& current) {
            return domain::settle_test_email(current, now);
        };
        domain::Email preview = e;
        preview.recipients = n.recipients;
        std::int64_t rid = 0;
        for (auto& r : preview.recipients) r.id = ++rid;
        if (auto settled = domain::settle_test_email(preview, now)) answered = settled->status;
    }

    // Tracked mail's URLs: under the domain's own tracking host once it is verified.
    const std::string tracking_base =
        e.track_opens || e.track_clicks
            ? domain::tracking_base(deps.public_url, sender->tracking_label, sender->name,
                                    tracking_verified(*sender))
            : std::string();
    auto own = own_fields(deps, req.origin, e, sender->name, now);
    if (auto* spec = std::get_if<mail::MessageSpec>(&req.message)) {
        spec->trace = std::move(own.received);
        spec->service_fields = std::move(own.feedback_id);
        if (spec->html && (e.track_opens || e.track_clicks))
            spec->html = track_email_html(deps, tracking_base, e.id, *spec->html, e.track_opens,
                                          e.track_clicks);
        spec->message_id = e.message_id;
        spec->date = now;
        if (content_bytes(*spec) <= kInlineBuildBytes) {
            n.raw = mail::build_message(*spec);  // tens of microseconds: no thread hop
        } else {
            auto build = [spec = std::move(*spec)] { return mail::build_message(spec); };
            auto blocking = deps.blocking;
            n.raw = co_await core::run_blocking(std::move(blocking), std::move(build));
        }
    } else {
        n.raw = std::get<std::string>(std::move(req.message));
        if (e.track_opens || e.track_clicks) {  // SMTP: the HTML parts of the message as sent
            auto edit = [&deps, &tracking_base, id = e.id, opens = e.track_opens,
                         clicks = e.track_clicks](const std::string& html) {
                return track_email_html(deps, tracking_base, id, html, opens, clicks);
            };
            auto job = [raw = n.raw, edit = std::move(edit)] {
                return mail::edit_html_parts(raw, edit);
            };
            auto blocking = deps.blocking;
            auto edited = co_await core::run_blocking(std::move(blocking), std::move(job));
            if (edited) n.raw = std::move(*edited);
        }
        // Ours above the client's fields (trace fields are prepended, RFC 5322 §3.6.7), the
        // Feedback-ID at the end of its header block (smtp_doors drops any of the client's).
        n.raw = mail::add_fields(n.raw, own.received, own.feedback_id);
    }
    e.size_bytes = static_cast<std::int64_t>(n.raw.size());

    // INTERFACE.md's answer, written as json::serialize would write the object (its fields
    // in this order) without building one: 2.5k instructions a send fewer, 3% of the I/O
    // thread's (callgrind).
    const auto created_at = format_iso8601(e.created_at);
    const auto from = req.from.display();
    std::string body;
    body.reserve(96 + e.id.size() + e.to_display.size() + e.subject.size() + from.size());
    const std::pair<std::string_view, std::string_view> fields[] = {
        {"{\"id\":", e.id},
        {",\"status\":", domain::name(answered)},
        {",\"created_at\":", created_at},
        {",\"to\":", e.to_display},
        {",\"subject\":", e.subject},
        {",\"from\":", from}};
    for (const auto& [key, value] : fields) {
        body += key;
        core::append_json_string(body, value);
    }
    if (e.scheduled_at) {
        body += ",\"scheduled_at\":";
        core::append_json_string(body, format_iso8601(*e.scheduled_at));
    }
    body += '}';
    n.response = {.status = 200, .body = std::move(body)};
    n.idempotency_key = req.idempotency_key;
    n.idempotency_expires_at = now + kIdempotencyTtlMs;
    co_return R(std::move(prepared));
}

asio::awaitable<std::variant<Queued, Refused>> store_email(const Deps& deps, PreparedEmail p) {
    using R = std::variant<Queued, Refused>;
    auto id = p.email.email.id;
    auto body = p.email.response.body;
    auto stored = co_await deps.emails.create_email(std::move(p.email));
    if (!stored) co_return R(store_failed("queue the email", stored.error()));
    if (*stored) co_return R(replayed(**stored));  // another request with the key won the race
    p.slot.keep();
    accepted_total.inc(p.source == "smtp" ? 1 : 0);
    co_return R(Queued{std::move(id), 200, std::move(body), false});
}

asio::awaitable<std::variant<std::vector<Queued>, Refused>> store_emails(
    const Deps& deps, std::vector<PreparedEmail> emails) {
    using R = std::variant<std::vector<Queued>, Refused>;
    std::vector<store::NewEmail> news;
    std::vector<Queued> out;
    news.reserve(emails.size());
    out.reserve(emails.size());
    for (auto& p : emails) {
        out.push_back(Queued{.id = p.email.email.id, .body = p.email.response.body});
        news.push_back(std::move(p.email));
    }
    auto stored = co_await deps.emails.create_emails(std::move(news));
    if (!stored) co_return R(store_failed("queue the emails", stored.error()));
    for (std::size_t i = 0; i < emails.size(); ++i) {
        if (const auto& seen = (*stored)[i]) {
            out[i] = replayed(*seen);  // its slot goes back with `emails`
            continue;
        }
        emails[i].slot.keep();
        accepted_total.inc(emails[i].source == "smtp" ? 1 : 0);
    }
    co_return R(std::move(out));
}

asio::awaitable<std::variant<Queued, Refused>> queue_email(const Deps& deps, QueueRequest req) {
    using R = std::variant<Queued, Refused>;
    auto prepared = co_await prepare_email(deps, std::move(req));
    if (auto* refused = std::get_if<Refused>(&prepared)) co_return R(std::move(*refused));
    auto p = std::get<PreparedEmail>(std::move(prepared));
    co_return co_await store_email(deps, std::move(p));
}

void log_refused_send(std::string_view door, std::string_view account_id,
                      std::string_view client_ip, std::string_view code, std::string_view why) {
    log::event(log::Level::info, "send refused",
               {{"door", door},
                {"account_id", account_id},
                {"client_ip", client_ip},
                {"code", code},
                {"reason", why}});
}

}  // namespace posthorn::api
