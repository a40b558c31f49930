// POST /v1/emails/batch: a JSON array of 1 to kMaxBatchEmails sends, each the body of
// POST /v1/emails and read by the same code (prepare_send), stored together in one
// transaction (store_emails: one commit for all of them, where a hundred single sends pay a
// hundred requests and share commits only by chance). docs/sending.md, "Batches".
//
// Answer 200 {"data": [...]}, one result per item in their order: the single send's answer
// with its "index", or {"index", "error": {code, message, status}}. With ?atomic=true any
// refused item refuses the whole batch and nothing is stored: 422 BATCH_REJECTED naming the
// refused items ("errors"), or 429 RATE_LIMITED when the send rate alone refused them.
#include <boost/json/array.hpp>

#include <algorithm>

#include "api/emails.hpp"
#include "api/queue_email.hpp"
#include "core/text.hpp"

namespace posthorn::api {

using detail::Context;

namespace {

using Step = std::variant<PreparedEmail, http::Response>;

// {"index":i, …the fields of `object`…}: `object` is a JSON object written by us.
void append_indexed(std::string& out, std::size_t i, std::string_view object) {
    out += "{\"index\":";
    out += std::to_string(i);
    if (object.size() > 2) out += ',';
    out.append(object.substr(1));
}

// 422 BATCH_REJECTED (atomic): which items were refused, and why; or 429 when only the send
// rate refused them (retry after the longest Retry-After of theirs).
http::Response atomic_refusal(const std::vector<Step>& steps) {
    std::size_t refused = 0;
    bool only_rate = true;
    int retry_after = 0;
    for (const auto& s : steps) {
        const auto* res = std::get_if<http::Response>(&s);
        if (!res || res->status < 400) continue;
        ++refused;
        if (res->status != 429) {
            only_rate = false;
            continue;
        }
        for (const auto& [name, value] : res->headers)
            if (name == "Retry-After") retry_after = std::max(retry_after, std::stoi(value));
    }
    if (only_rate) {
        auto res = http::error_response(
            429, "RATE_LIMITED",
            "the batch's " + std::to_string(steps.size()) +
                " emails are more than the send rate allows now; nothing was stored; retry "
                "after " +
                std::to_string(retry_after) + " s");
        res.headers.emplace_back("Retry-After", std::to_string(std::max(retry_after, 1)));
        return res;
    }
    std::string body = R"({"code":"BATCH_REJECTED","message":)";
    core::append_json_string(body, std::to_string(refused) + " of the " +
                                       std::to_string(steps.size()) +
                                       " emails were refused (errors); with atomic=true none "
                                       "was stored");
    body += R"(,"status":422,"errors":[)";
    bool first = true;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto* res = std::get_if<http::Response>(&steps[i]);
        if (!res || res->status < 400) continue;
        if (!first) body += ',';
        first = false;
        append_indexed(body, i, res->body);
    }
    body += "]}";
    return http::Response{.status = 422, .body = std::move(body)};
}

}  // namespace

asio::awaitable<http::Response> send_batch(Context ctx) {
    const auto& deps = ctx.deps;
    if (auto err = check_params(ctx.req, {"atomic"})) co_return detail::validation_error(*err);
    bool atomic = false;
    if (auto a = ctx.req.param("atomic")) {
        if (*a != "true" && *a != "false")
            co_return detail::validation_error("atomic must be true or false");
        atomic = *a == "true";
    }
    if (!ctx.body.is_array())
        co_return detail::validation_error(
            "body must be a JSON array of emails, each the body of POST /v1/emails");
    auto& items = ctx.body.as_array();
    if (items.empty() || items.size() > kMaxBatchEmails)
        co_return detail::validation_error("a batch holds 1 to " + std::to_string(kMaxBatchEmails) +
                                           " emails, not " + std::to_string(items.size()));
    // Each item's key: its own idempotencyKey, else the header's followed by "/<index>".
    auto header = idempotency_header(ctx.req);
    if (auto* e = std::get_if<http::Response>(&header)) co_return std::move(*e);
    const auto header_key = std::get<0>(std::move(header));

    // Every item checked, counted and built in turn (no store write yet).
    std::vector<Step> steps;
    steps.reserve(items.size());
    bool any_refused = false;
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::optional<std::string> key;
        if (header_key) key = *header_key + "/" + std::to_string(i);
        auto key_copy = ctx.key;
        auto item = std::move(items[i]);  // the same storage: moved, not copied
        auto client_ip = ctx.req.remote_ip;
        auto step = co_await prepare_send(deps, std::move(key_copy), std::move(item),
                                          std::move(key), std::move(client_ip));
        if (const auto* res = std::get_if<http::Response>(&step); res && res->status >= 400) {
            any_refused = true;
            log_refused_answer(ctx.account_id, ctx.req.remote_ip, *res);
        }
        steps.push_back(std::move(step));
    }
    if (atomic && any_refused) co_return atomic_refusal(steps);  // the slots go back

    // Those ready, stored in one transaction.
    std::vector<PreparedEmail> ready;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (auto* p = std::get_if<PreparedEmail>(&steps[i])) {
            ready.push_back(std::move(*p));
            where.push_back(i);
        }
    std::vector<Queued> queued;
    if (!ready.empty()) {
        auto stored = co_await store_emails(deps, std::move(ready));
        if (auto* refused = std::get_if<Refused>(&stored)) {
            // Nothing of the batch was stored: the store's answer for all of it.
            auto res = http::error_response(refused->status, refused->code, refused->message);
            if (refused->retry_after_s > 0)
                res.headers.emplace_back("Retry-After", std::to_string(refused->retry_after_s));
            co_return res;
        }
        queued = std::get<std::vector<Queued>>(std::move(stored));
    }

    std::string body = "{\"data\":[";
    std::size_t next = 0;  // of `queued`, in the order of `where`
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i > 0) body += ',';
        if (next < where.size() && where[next] == i) {
            append_indexed(body, i, queued[next++].body);
            continue;
        }
        const auto& res = std::get<http::Response>(steps[i]);
        if (res.status < 400) {  // replayed by its idempotency key
            append_indexed(body, i, res.body);
            continue;
        }
        body += "{\"index\":" + std::to_string(i) + ",\"error\":";
        body += res.body;
        body += '}';
    }
    body += "]}";
    co_return http::Response{.status = 200, .body = std::move(body)};
}

}  // namespace posthorn::api
