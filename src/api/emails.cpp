#include "api/emails.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "api/email_labels.hpp"
#include "api/queue_email.hpp"
#include "api/send_request.hpp"
#include "api/templates.hpp"
#include "core/blocking.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "crypto/keys.hpp"
#include "domain/api_keys.hpp"
#include "domain/scheduling.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

json::value iso_or_null(const std::optional<UnixMs>& t) {
    return t ? json::value(format_iso8601(*t)) : json::value(nullptr);
}

std::string from_display(const store::Email& e) {
    if (e.from_name.empty()) return e.from_email;
    const auto at = e.from_email.rfind('@');
    return mail::Mailbox{.name = e.from_name,
                         .local = e.from_email.substr(0, at),
                         .domain = e.from_email.substr(at + 1)}
        .display();
}

// The tags as the account gave them, and its metadata object (null when none).
json::array tags_json(const std::vector<store::Tag>& tags) {
    json::array out;
    for (const auto& t : tags) out.push_back(json::object{{"name", t.name}, {"value", t.value}});
    return out;
}

json::value metadata_json(const std::string& stored) {
    if (stored.empty()) return nullptr;
    error_code ec;
    auto v = json::parse(stored, ec);
    return ec ? json::value(nullptr) : v;  // written by us as a JSON object: never fails
}

json::object email_summary(const store::Email& e) {
    return {{"id", e.id},
            {"status", domain::name(e.status)},
            {"created_at", format_iso8601(e.created_at)},
            {"queued_at", format_iso8601(e.queued_at)},
            {"sent_at", iso_or_null(e.sent_at)},
            // The time it was scheduled for (docs/sending.md "Scheduled send"); null: at once.
            {"scheduled_at", iso_or_null(e.scheduled_at)},
            {"failed_at", iso_or_null(e.failed_at)},
            {"to", e.to_display},
            {"subject", e.subject},
            {"from", from_display(e)},
            {"tags", tags_json(e.tags)},
            {"metadata", metadata_json(e.metadata_json)},
            // Sent with a test key: never delivered (docs/test-mode.md).
            {"test", e.test}};
}

// The list filters shared by GET /v1/email and GET /v1/emails/envelope.
std::optional<http::Response> filters(const http::Request& req, store::SearchQuery& q,
                                      std::initializer_list<std::string_view> sort_fields) {
    if (auto err = parse_sort_by(req, sort_fields, q.sort_by))
        return detail::validation_error(*err);
    if (auto err = parse_date_bounds(req, q.start, q.end)) return detail::validation_error(*err);
    if (auto s = req.param("search"); s && !s->empty()) q.search = std::string(*s);
    return std::nullopt;
}

// GET /v1/email's own filters: status (one or several, comma-separated: any of them) and
// tag=name:value (repeatable: every one of them). A value that names nothing is refused.
std::optional<http::Response> email_filters(const http::Request& req, store::SearchQuery& q) {
    if (auto v = req.param("status")) {
        std::string_view list = *v;
        for (;;) {
            const auto comma = list.find(',');
            const auto item = list.substr(0, comma);
            std::string upper(item);  // the names are upper-case; either case is taken
            for (auto& c : upper)
                if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
            auto st = domain::from_name<domain::EmailStatus>(upper);
            if (!st) {
                std::string names;
                for (auto n : domain::kEmailStatusNames)
                    names += (names.empty() ? "" : ", ") + std::string(n);
                return detail::validation_error("status: '" + std::string(item) +
                                                "' is not a status of an email (" + names +
                                                "; several: comma-separated)");
            }
            if (std::find(q.statuses.begin(), q.statuses.end(), *st) == q.statuses.end())
                q.statuses.push_back(*st);
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    for (const auto& [name, value] : req.query) {
        if (name != "tag") continue;
        const auto colon = value.find(':');
        if (colon == std::string::npos)
            return detail::validation_error("tag must be name:value, e.g. tag=campaign:spring");
        store::Tag t{.name = value.substr(0, colon), .value = value.substr(colon + 1)};
        if (auto e = tag_part_error("tag: the name", t.name)) return detail::validation_error(*e);
        if (auto e = tag_part_error("tag: the value", t.value)) return detail::validation_error(*e);
        if (q.tags.size() >= kMaxTags)
            return detail::validation_error("tag is given more than " + std::to_string(kMaxTags) +
                                            " times (an email has at most " +
                                            std::to_string(kMaxTags) + " tags)");
        q.tags.push_back(std::move(t));
    }
    return std::nullopt;
}

http::Response replay(const store::StoredResponse& r) {
    return http::Response{.status = static_cast<unsigned>(r.status), .body = r.body};
}

http::Response refusal(const Refused& refused) {
    auto res = http::error_response(refused.status, refused.code, refused.message);
    if (refused.retry_after_s > 0)
        res.headers.emplace_back("Retry-After", std::to_string(refused.retry_after_s));
    return res;
}

}  // namespace

std::variant<std::optional<std::string>, http::Response> idempotency_header(
    const http::Request& req) {
    const auto h = req.header("idempotency-key");
    if (!h) return std::optional<std::string>{};
    if (h->empty() || h->size() > kMaxIdempotencyKeyBytes)
        return detail::validation_error("the Idempotency-Key header must be 1 to " +
                                        std::to_string(kMaxIdempotencyKeyBytes) + " bytes");
    return std::optional<std::string>(std::string(*h));
}

asio::awaitable<std::variant<PreparedEmail, http::Response>> prepare_send(
    const Deps& deps, store::ApiKey key, json::value body, std::optional<std::string> default_key,
    std::string client_ip) {
    using R = std::variant<PreparedEmail, http::Response>;
    const auto& limits = deps.sending;

    // An idempotent replay answers before anything else is looked at or counted.
    auto given = idempotency_key_of(body);
    if (auto* e = std::get_if<http::Response>(&given)) co_return R(std::move(*e));
    auto idempotency_key = std::get<0>(std::move(given));
    if (!idempotency_key) idempotency_key = std::move(default_key);
    if (idempotency_key) {
        auto account = key.account_id;
        auto k = *idempotency_key;
        auto seen = co_await deps.emails.find_idempotent(std::move(account), std::move(k),
                                                         deps.clock.now_ms());
        if (!seen) co_return R(detail::internal_error("read the idempotency key", seen.error()));
        if (*seen) co_return R(replay(**seen));
    }

    auto parsed = parse_send_request(body, {.max_recipients = limits.max_recipients,
                                            .max_attachment_bytes = limits.max_attachment_bytes});
    if (auto* e = std::get_if<http::Response>(&parsed)) co_return R(std::move(*e));
    // A send that names a template: its subject, html and text rendered from it. A plain
    // send does not enter apply_template (a coroutine frame per send).
    auto req = std::get<SendRequest>(std::move(parsed));
    if (req.template_ref) {
        auto template_account = key.account_id;
        auto filled = co_await apply_template(deps, std::move(template_account), std::move(req));
        if (auto* e = std::get_if<http::Response>(&filled)) co_return R(std::move(*e));
        req = std::get<SendRequest>(std::move(filled));
    }
    if (req.scheduled_at)
        if (auto why =
                domain::schedule_refusal("scheduled_at", *req.scheduled_at, deps.clock.now_ms()))
            co_return R(detail::validation_error(*why));

    auto account_id = key.account_id;
    QueueRequest q{.account_id = std::move(account_id),
                   .key = std::move(key),
                   .from = req.message.from,
                   .to = req.message.to,
                   .cc = req.message.cc,
                   .bcc = std::move(req.bcc),
                   .subject = req.message.subject,
                   .idempotency_key = std::move(idempotency_key),
                   .track_opens = req.track_opens,
                   .track_clicks = req.track_clicks,
                   .tags = std::move(req.labels.tags),
                   .metadata_json = std::move(req.labels.metadata_json),
                   .scheduled_at = req.scheduled_at};
    q.origin.client_ip = std::move(client_ip);  // the API's protocol: queue_email's default
    q.message = std::move(req.message);
    auto prepared = co_await prepare_email(deps, std::move(q));
    if (auto* refused = std::get_if<Refused>(&prepared)) co_return R(refusal(*refused));
    co_return R(std::get<PreparedEmail>(std::move(prepared)));
}

void log_refused_answer(std::string_view account_id, std::string_view client_ip,
                        const http::Response& res) {
    // The error body of DESIGN §4: {"code", "message", "status"}.
    error_code ec;
    const auto v = json::parse(res.body, ec);
    const auto* o = ec ? nullptr : v.if_object();
    auto text = [o](const char* key) {
        const auto* s = o ? o->if_contains(key) : nullptr;
        return s && s->is_string() ? std::string(s->get_string()) : std::string();
    };
    log_refused_send("api", account_id, client_ip, text("code"), text("message"));
}

// POST /v1/emails, checked and queued.
asio::awaitable<http::Response> checked_send(Context ctx) {
    // The Idempotency-Key header, or the body's idempotencyKey; both: the same key.
    auto header = idempotency_header(ctx.req);
    if (auto* e = std::get_if<http::Response>(&header)) co_return std::move(*e);
    auto header_key = std::get<0>(std::move(header));
    if (header_key) {
        auto given = idempotency_key_of(ctx.body);
        if (auto* e = std::get_if<http::Response>(&given)) co_return std::move(*e);
        if (const auto& k = std::get<0>(given); k && *k != *header_key)
            co_return detail::validation_error(
                "the Idempotency-Key header and idempotencyKey differ; give one of them, or "
                "the same key in both");
    }
    auto client_ip = ctx.req.remote_ip;
    auto prepared = co_await prepare_send(ctx.deps, std::move(ctx.key), std::move(ctx.body),
                                          std::move(header_key), std::move(client_ip));
    if (auto* res = std::get_if<http::Response>(&prepared)) co_return std::move(*res);
    auto p = std::get<PreparedEmail>(std::move(prepared));
    auto outcome = co_await store_email(ctx.deps, std::move(p));
    if (auto* refused = std::get_if<Refused>(&outcome)) co_return refusal(*refused);
    const auto& queued = std::get<Queued>(outcome);
    co_return http::Response{.status = queued.status, .body = queued.body};
}

asio::awaitable<http::Response> send_email(Context ctx) {
    auto account = ctx.account_id;
    auto ip = ctx.req.remote_ip;
    auto res = co_await checked_send(std::move(ctx));
    if (res.status >= 400) log_refused_answer(account, ip, res);
    co_return res;
}

// Reads the email `ctx` names for a key to `verb` ("read", "change"): 404 for none (or
// another account's), 403 for a sending key and an email it did not send
// (domain::may_read_email).
asio::awaitable<std::variant<store::Email, http::Response>> email_for_key(Context ctx,
                                                                          std::string id,
                                                                          std::string verb) {
    auto account = ctx.account_id;
    auto e = co_await ctx.deps.emails.find_email(std::move(account), std::move(id));
    if (!e) {
        if (e.error() == store::errc::not_found) co_return detail::not_found("email not found");
        co_return detail::internal_error("read the email", e.error());
    }
    if (!domain::may_read_email(ctx.key, e->api_key_id))
        co_return detail::forbidden("this key may only " + verb +
                                    " the emails it sent; a full-access key is needed to " + verb +
                                    " the account's other emails");
    co_return std::move(*e);
}

asio::awaitable<http::Response> get_email(Context ctx) {
    auto id = detail::param(ctx, "id");
    std::string verb = "read";  // named: GCC 12 and a coroutine's by-value temporaries
    auto found = co_await email_for_key(ctx, std::move(id), std::move(verb));
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    const auto* e = &std::get<store::Email>(found);
    auto o = email_summary(*e);
    o["delivered_at"] = iso_or_null(e->delivered_at);
    o["opened_at"] = iso_or_null(e->opened_at);
    o["clicked_at"] = iso_or_null(e->clicked_at);
    o["envelope_id"] = e->envelope_id;
    json::array recipients;
    for (const auto& r : e->recipients) {
        json::object rec{
            {"email", r.address},
            {"type", domain::name(r.type)},
            {"status", domain::name(r.status)},
            // Held by the operator (`posthorn queue hold`): QUEUED, and not attempted until
            // released. Only an open recipient can be held.
            {"held", r.held_at.has_value()},
            {"attempts", r.attempts},
            {"next_attempt_at", iso_or_null(r.next_attempt_at)},
            {"last_response", r.last_response ? json::value(*r.last_response) : nullptr},
            {"bounce", nullptr}};
        // Why it was given up (domain/delivery_policy.hpp): hard | soft | block |
        // undetermined, the enhanced status code and the reply.
        if (r.bounce)
            rec["bounce"] =
                json::object{{"type", domain::name(r.bounce->type)},
                             {"code", r.bounce->code.empty() ? json::value(nullptr)
                                                             : json::value(r.bounce->code)},
                             {"message", r.bounce->message}};
        // The TLS of its last attempt (docs/delivery.md, TLS policies); null before one.
        rec["tls"] = nullptr;
        if (r.tls)
            rec["tls"] =
                json::object{{"policy", r.tls->policy},
                             {"version", r.tls->version.empty() ? json::value(nullptr)
                                                                : json::value(r.tls->version)},
                             {"verified", r.tls->verified},
                             {"failure", r.tls->failure.empty() ? json::value(nullptr)
                                                                : json::value(r.tls->failure)}};
        recipients.push_back(std::move(rec));
    }
    o["recipients"] = std::move(recipients);
    co_return detail::json(200, o);
}

asio::awaitable<http::Response> list_emails(Context ctx) {
    if (auto err = check_params(ctx.req,
                                {"page", "limit", "sort_by", "sort_order", "search", "start_date",
                                 "end_date", "status", "tag"},
                                {"tag"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 10, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::SearchQuery q{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    if (auto err = filters(ctx.req, q, {"created_at", "to_email"})) co_return std::move(*err);
    if (auto err = email_filters(ctx.req, q)) co_return std::move(*err);
    auto page = co_await ctx.deps.emails.list_emails(std::move(q));
    if (!page) co_return detail::internal_error("list emails", page.error());
    json::array data;
    for (const auto& e : page->items) data.push_back(email_summary(e));
    // INTERFACE: this list answers flat fields rather than a pagination object.
    co_return detail::json(200, json::object{{"page", p.page},
                                             {"limit", p.limit},
                                             {"hasMore", p.page * p.limit < page->total},
                                             {"total", page->total},
                                             {"data", std::move(data)}});
}

asio::awaitable<http::Response> list_envelopes(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sort_by", "sort_order", "search",
                                          "start_date", "end_date"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::SearchQuery q{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    if (auto err = filters(ctx.req, q, {"created_at", "subject", "from_email"}))
        co_return std::move(*err);
    auto page = co_await ctx.deps.emails.list_envelopes(std::move(q));
    if (!page) co_return detail::internal_error("list envelopes", page.error());
    json::array data;
    for (const auto& v : page->items)
        data.push_back(json::object{
            {"id", v.id},
            {"email_id", v.email_id},
            {"subject", v.subject},
            {"from_email", v.from_email},
            {"from_name", v.from_name.empty() ? json::value(nullptr) : json::value(v.from_name)},
            {"total_recipients", v.total_recipients},
            {"created_at", format_iso8601(v.created_at)}});
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

namespace {

// The change a reschedule or a cancel asks for (domain/scheduling.hpp), as the decision that
// change_email_locked runs: a refusal is kept for the answer.
template <class Rule>
store::EmailDecision scheduling_decision(Rule rule, std::shared_ptr<std::string> refused) {
    return [rule = std::move(rule), refused = std::move(refused)](
               const store::Email& current) -> std::optional<store::EmailChange> {
        auto r = rule(current);
        if (auto* too_late = std::get_if<domain::TooLate>(&r)) {
            *refused = too_late->message;
            return std::nullopt;
        }
        refused->clear();  // the decision may run again
        return std::get<store::EmailChange>(std::move(r));
    };
}

// Writes `decide` (change_email_locked) and answers the email as it then stands, or 409 with
// the refusal.
asio::awaitable<http::Response> change_and_answer(Context ctx, std::string id,
                                                  store::EmailDecision decide,
                                                  std::shared_ptr<std::string> refused) {
    auto account = ctx.account_id;
    auto w =
        co_await ctx.deps.emails.change_email_locked(std::move(account), id, std::move(decide));
    if (!w) {
        if (w.error() == store::errc::not_found) co_return detail::not_found("email not found");
        co_return detail::internal_error("change the email", w.error());
    }
    if (!refused->empty()) co_return http::error_response(409, "CONFLICT", *refused);
    auto again = ctx.account_id;
    auto e = co_await ctx.deps.emails.find_email(std::move(again), std::move(id));
    if (!e) co_return detail::internal_error("read the email", e.error());
    co_return detail::json(200, email_summary(*e));
}

}  // namespace

// PATCH /v1/emails/{id} {"scheduled_at": …}: a SCHEDULED email moved to another time.
asio::awaitable<http::Response> reschedule_email(Context ctx) {
    if (!ctx.body.is_object())
        co_return detail::validation_error("body must be a JSON object with scheduled_at");
    for (const auto& [k, v] : ctx.body.as_object())
        if (k != "scheduled_at")
            co_return detail::validation_error("unknown field '" + std::string(k) +
                                               "' (only scheduled_at can be changed)");
    const auto* at = ctx.body.as_object().if_contains("scheduled_at");
    if (!at || !at->is_string())
        co_return detail::validation_error(
            "scheduled_at is required and must be a string (ISO 8601 with an offset)");
    auto when = parse_scheduled_at("scheduled_at", at->get_string());
    if (auto* msg = std::get_if<std::string>(&when)) co_return detail::validation_error(*msg);
    const auto time = std::get<UnixMs>(when);
    const auto now = ctx.deps.clock.now_ms();
    if (auto why = domain::schedule_refusal("scheduled_at", time, now))
        co_return detail::validation_error(*why);
    auto id = detail::param(ctx, "id");
    std::string verb = "change";
    auto found = co_await email_for_key(ctx, id, std::move(verb));
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    auto refused = std::make_shared<std::string>();
    auto decide = scheduling_decision(
        [time, now](const store::Email& e) { return domain::reschedule(e, time, now); }, refused);
    co_return co_await change_and_answer(std::move(ctx), std::move(id), std::move(decide),
                                         std::move(refused));
}

// POST /v1/emails/{id}/cancel: what is left of a SCHEDULED or QUEUED email is not sent.
asio::awaitable<http::Response> cancel_email(Context ctx) {
    if (ctx.body.is_object() && !ctx.body.as_object().empty())
        co_return detail::validation_error("the cancel takes no body");
    auto id = detail::param(ctx, "id");
    std::string verb = "change";
    auto found = co_await email_for_key(ctx, id, std::move(verb));
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    const auto now = ctx.deps.clock.now_ms();
    auto refused = std::make_shared<std::string>();
    auto decide = scheduling_decision(
        [now](const store::Email& e) { return domain::cancel(e, now); }, refused);
    co_return co_await change_and_answer(std::move(ctx), std::move(id), std::move(decide),
                                         std::move(refused));
}

}  // namespace posthorn::api
