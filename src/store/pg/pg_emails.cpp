// PgStore: emails (with their envelopes), recipients, raw messages and idempotency keys; the
// lists of emails and envelopes.
#include "core/id.hpp"
#include "store/detail/tag_codec.hpp"
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

constexpr const char* kEmailColumns =
    "e.id, e.account_id, coalesce(e.domain_id, ''), e.status, e.from_email, "
    "coalesce(e.from_name, ''), e.to_display, e.subject, e.message_id, e.return_token, "
    "e.track_opens, e.track_clicks, e.source, e.size_bytes, e.created_at, e.queued_at, "
    "e.sent_at, e.delivered_at, e.failed_at, e.opened_at, e.clicked_at, e.envelope_id, "
    "coalesce(e.api_key_id, ''), coalesce(e.tags, ''), coalesce(e.metadata, ''), e.test, "
    "coalesce(e.return_path, ''), e.scheduled_at";

Email read_email(const Row& r) {
    return Email{.id = r.text(0),
                 .account_id = r.text(1),
                 .domain_id = r.text(2),
                 .envelope_id = r.text(21),
                 .status = detail::read_name(r.text(3), domain::EmailStatus::queued),
                 .from_email = r.text(4),
                 .from_name = r.text(5),
                 .to_display = r.text(6),
                 .subject = r.text(7),
                 .message_id = r.text(8),
                 .return_token = r.text(9),
                 .return_path = r.text(26),
                 .track_opens = r.boolean(10),
                 .track_clicks = r.boolean(11),
                 .source = r.text(12),
                 .api_key_id = r.text(22),
                 .size_bytes = r.int64(13),
                 .created_at = r.int64(14),
                 .queued_at = r.int64(15),
                 .sent_at = r.opt_int64(16),
                 .delivered_at = r.opt_int64(17),
                 .failed_at = r.opt_int64(18),
                 .opened_at = r.opt_int64(19),
                 .clicked_at = r.opt_int64(20),
                 .scheduled_at = r.opt_int64(27),
                 .tags = store::detail::decode_tags(r.text(23)),
                 .metadata_json = r.text(24),
                 .test = r.boolean(25)};
}

Result<std::optional<StoredResponse>> idempotent(Conn& c, const std::string& account_id,
                                                 const std::string& key, UnixMs now) {
    auto rows = c.exec(
        "SELECT response_status, response_body FROM idempotency_keys "
        "WHERE account_id = $1 AND key = $2 AND expires_at > $3",
        Params().add(account_id).add(key).add(now));
    if (!rows) return rows.error();
    if (rows->empty()) return std::optional<StoredResponse>{};
    const auto r = rows->row(0);
    return std::optional(StoredResponse{.status = r.int32(0), .body = r.text(1)});
}

// Takes the account's key for `n`, or answers the response of the email that holds it. The
// key goes in first: a create racing with another one (on this node, in the same batch, or
// on another node, whose insert then waits for this transaction) finds it taken and writes
// nothing. An expired key is taken over.
Result<std::optional<StoredResponse>> take_key(Conn& c, const NewEmail& n) {
    const auto& e = n.email;
    auto taken = c.exec(
        "INSERT INTO idempotency_keys (account_id, key, email_id, response_status, "
        "response_body, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) "
        "ON CONFLICT (account_id, key) DO UPDATE SET email_id = excluded.email_id, "
        "response_status = excluded.response_status, response_body = excluded.response_body, "
        "created_at = excluded.created_at, expires_at = excluded.expires_at "
        "WHERE idempotency_keys.expires_at <= excluded.created_at RETURNING 1",
        Params()
            .add(e.account_id)
            .add(*n.idempotency_key)
            .add(e.id)
            .add(n.response.status)
            .add(n.response.body)
            .add(e.created_at)
            .add(n.idempotency_expires_at));
    if (!taken) return taken.error();
    if (!taken->empty()) return std::optional<StoredResponse>{};
    auto held = idempotent(c, e.account_id, *n.idempotency_key, e.created_at);
    if (!held) return held.error();
    if (!*held) return errc::busy;  // held, yet not found: cannot be (nothing deletes keys)
    return held;
}

// Emails with their recipients and tags in one statement (one round trip, and one executor
// start on the server for all of them: that, not the rows, is most of what a statement of one
// email costs it): each column an array, a row a position; the recipients and the tags
// flattened, in the order given (the recipients' ids follow it). An open recipient not
// planned for later is due since its email was queued. Empty text is NULL where a column may
// be NULL.
Result<void> insert_emails(Conn& c, const std::vector<const NewEmail*>& emails) {
    if (emails.empty()) return {};
    std::vector<std::string_view> id, account, domain_id, envelope, status, from_email, from_name,
        to_display, subject, message_id, return_token, source, api_key, tags, metadata, return_path,
        raw;
    std::vector<std::string> addresses, encoded_tags;  // viewed by `p`: kept until the run
    std::vector<bool> track_opens, track_clicks, test;
    std::vector<std::int64_t> size, total, created, queued;
    std::vector<std::optional<std::int64_t>> scheduled;
    std::vector<std::string_view> r_email, r_account, r_address, r_domain, r_type, r_status;
    std::vector<std::int64_t> r_at;
    std::vector<std::optional<std::int64_t>> r_due;
    std::vector<std::string_view> t_account, t_name, t_value, t_email;
    addresses.reserve(emails.size());
    encoded_tags.reserve(emails.size());
    for (const NewEmail* n : emails) {
        const auto& e = n->email;
        id.emplace_back(e.id);
        account.emplace_back(e.account_id);
        domain_id.emplace_back(e.domain_id);
        envelope.emplace_back(e.envelope_id);
        status.emplace_back(domain::name(e.status));
        from_email.emplace_back(e.from_email);
        from_name.emplace_back(e.from_name);
        to_display.emplace_back(e.to_display);
        subject.emplace_back(e.subject);
        message_id.emplace_back(e.message_id);
        return_token.emplace_back(e.return_token);
        source.emplace_back(e.source);
        api_key.emplace_back(e.api_key_id);
        encoded_tags.push_back(store::detail::encode_tags(e.tags));  // "" for none
        tags.emplace_back(encoded_tags.back());
        metadata.emplace_back(e.metadata_json);
        return_path.emplace_back(e.return_path);
        raw.emplace_back(n->raw);
        track_opens.push_back(e.track_opens);
        track_clicks.push_back(e.track_clicks);
        test.push_back(e.test);
        size.push_back(e.size_bytes);
        total.push_back(n->total_recipients);
        created.push_back(e.created_at);
        queued.push_back(e.queued_at);
        scheduled.push_back(e.scheduled_at);
        std::string& joined = addresses.emplace_back();
        for (const auto& rc : n->recipients) {
            if (!joined.empty()) joined += '\n';
            joined += rc.address;
            r_email.emplace_back(e.id);
            r_account.emplace_back(e.account_id);
            r_at.push_back(e.created_at);
            r_address.emplace_back(rc.address);
            r_domain.emplace_back(rc.domain);
            r_type.emplace_back(domain::name(rc.type));
            r_status.emplace_back(domain::name(rc.status));
            r_due.push_back(rc.next_attempt_at ? rc.next_attempt_at
                            : rc.status == domain::RecipientStatus::queued
                                ? std::optional<std::int64_t>(e.queued_at)
                                : std::nullopt);
        }
        for (const auto& t : e.tags) {
            t_account.emplace_back(e.account_id);
            t_name.emplace_back(t.name);
            t_value.emplace_back(t.value);
            t_email.emplace_back(e.id);
        }
    }
    Params p;
    p.texts(id).texts(account).texts(domain_id).texts(envelope).texts(status);
    p.texts(from_email).texts(from_name).texts(to_display).texts(subject).texts(message_id);
    p.texts(return_token).texts(addresses).bools(track_opens).bools(track_clicks).texts(source);
    p.int8s(size).int8s(total).int8s(created).int8s(queued).byteas(raw);
    p.texts(api_key).texts(tags).texts(metadata).bools(test).texts(return_path);
    p.int8s(scheduled);
    p.texts(r_email).texts(r_account).int8s(r_at).texts(r_address).texts(r_domain);
    p.texts(r_type).texts(r_status).int8s(r_due);
    p.texts(t_account).texts(t_name).texts(t_value).texts(t_email);
    // Pipelined (Conn::queue): nothing of it is read back, so the writer goes on with the next
    // job without waiting for this statement's answer.
    const auto ec = c.queue(
        "WITH e AS (INSERT INTO emails (id, account_id, domain_id, envelope_id, status, "
        "from_email, from_name, to_display, subject, message_id, return_token, "
        "recipient_addresses, track_opens, track_clicks, source, size_bytes, total_recipients, "
        "created_at, queued_at, updated_at, raw, api_key_id, tags, metadata, test, return_path, "
        "scheduled_at) "
        "SELECT u.id, u.a, nullif(u.dom, ''), u.env, u.st, u.fe, nullif(u.fn, ''), u.td, u.sub, "
        "u.mid, u.tok, u.ra, u.op, u.cl, u.src, u.sz, u.tot, u.ca, u.qa, u.ca, u.raw, "
        "nullif(u.k, ''), nullif(u.tg, ''), nullif(u.md, ''), u.tst, nullif(u.rp, ''), u.sch "
        "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], "
        "$7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], "
        "$13::bool[], $14::bool[], $15::text[], $16::int8[], $17::int8[], $18::int8[], "
        "$19::int8[], $20::bytea[], $21::text[], $22::text[], $23::text[], $24::bool[], "
        "$25::text[], $26::int8[]) AS u (id, a, dom, env, st, fe, fn, td, sub, mid, tok, ra, "
        "op, cl, src, sz, tot, ca, qa, raw, k, tg, md, tst, rp, sch)), "
        // The tags (none: no row), in the same statement.
        "t AS (INSERT INTO email_tags (account_id, name, value, email_id) "
        "SELECT * FROM unnest($35::text[], $36::text[], $37::text[], $38::text[]) "
        "ON CONFLICT DO NOTHING), "
        // Each email waits for the search indexer (search_indexer.hpp), in the same statement.
        "w AS (INSERT INTO search_todo (email_id, account_id, subject, recipient_addresses, "
        "from_email, from_name, envelope_id) SELECT u.id, u.a, u.sub, u.ra, u.fe, nullif(u.fn, "
        "''), u.env FROM unnest($1::text[], $2::text[], $9::text[], $12::text[], $6::text[], "
        "$7::text[], $4::text[]) AS u (id, a, sub, ra, fe, fn, env)) "
        "INSERT INTO recipients (email_id, account_id, updated_at, address, domain, type, "
        "status, next_attempt_at) SELECT u.e, u.a, u.at, u.ad, u.d, u.t, u.s, u.due "
        "FROM unnest($27::text[], $28::text[], $29::int8[], $30::text[], $31::text[], "
        "$32::text[], $33::text[], $34::int8[]) WITH ORDINALITY "
        "AS u (e, a, at, ad, d, t, s, due, n) ORDER BY u.n",
        p);
    if (ec) return ec;
    return {};
}

// The recipients of `email_id`, in the order of their ids; `lock`: FOR UPDATE (a claim's
// SKIP LOCKED passes over them until the commit, and one that holds them is waited for).
Result<std::vector<Recipient>> recipients_of(Conn& c, const std::string& email_id,
                                             bool lock = false) {
    auto rows = c.exec(
        std::string(
            "SELECT id, address, domain, type, status, attempts, next_attempt_at, last_response, "
            "sent_at, bounce_type, bounce_code, bounce_message, tls_policy, tls_version, "
            "tls_verified, tls_failure, held_at, lease_until FROM recipients WHERE email_id = $1 "
            "ORDER BY id") +
            (lock ? " FOR UPDATE" : ""),
        Params().add(email_id));
    if (!rows) return rows.error();
    std::vector<Recipient> out;
    for (int i = 0; i < rows->size(); ++i) {
        const auto r = rows->row(i);
        Recipient rc{.id = r.int64(0),
                     .address = r.text(1),
                     .domain = r.text(2),
                     .type = detail::read_name(r.text(3), domain::RecipientType::to),
                     .status = detail::read_name(r.text(4), domain::RecipientStatus::queued),
                     .attempts = r.int32(5),
                     .next_attempt_at = r.opt_int64(6),
                     .last_response = r.opt_text(7),
                     .sent_at = r.opt_int64(8),
                     .held_at = r.opt_int64(16),
                     .lease_until = r.opt_int64(17)};
        if (!r.is_null(9))
            rc.bounce =
                Bounce{.type = detail::read_name(r.text(9), domain::BounceType::undetermined),
                       .code = r.text(10),
                       .message = r.text(11)};
        if (!r.is_null(12))
            rc.tls = domain::TlsOutcome{.policy = r.text(12),
                                        .version = r.opt_text(13).value_or(""),
                                        .verified = !r.is_null(14) && r.boolean(14),
                                        .failure = r.opt_text(15).value_or("")};
        out.push_back(std::move(rc));
    }
    return out;
}

// ---- the lists ----

// The WHERE and ORDER BY of a list of emails, or of their envelopes (`emails` false), its
// parameters bound as they are written.
struct Filter {
    Params params;
    std::string where;
    std::string order;
};

Filter search_filter(const SearchQuery& q, bool emails) {
    Filter f;
    auto& p = f.params;
    const auto account = p.arg(q.account_id);
    f.where = " WHERE e.account_id = " + account;
    // An email's created_at is the millisecond of its id, so a date bound is also a bound of
    // the id, which the index (account_id, id) reads as a range (as the SQLite back end does).
    if (q.start)
        f.where += " AND e.id >= " + p.arg(first_id_at("em_", *q.start)) +
                   " AND e.created_at >= " + p.arg(*q.start);
    if (q.end)
        f.where += " AND e.id < " + p.arg(first_id_at("em_", *q.end + 1)) +
                   " AND e.created_at <= " + p.arg(*q.end);
    if (q.search) {
        const auto pattern = p.arg(detail::like_pattern(*q.search));
        // What a search matches, in the columns of the table `t`.
        const auto match = [&](const char* t) {
            const std::string c = std::string(t) + ".";
            if (emails)
                return "(" + c + "subject ILIKE " + pattern + " OR " + c +
                       "recipient_addresses ILIKE " + pattern + ")";
            return "(" + c + "subject ILIKE " + pattern + " OR " + c + "from_email ILIKE " +
                   pattern + " OR " + c + "from_name ILIKE " + pattern + " OR " + c +
                   "envelope_id ILIKE " + pattern + ")";
        };
        if (emails && q.search->find('\n') != std::string::npos)
            // A needle with a line break: one address at a time, not across two.
            f.where += " AND (e.subject ILIKE " + pattern +
                       " OR EXISTS (SELECT 1 FROM recipients r WHERE r.email_id = e.id AND "
                       "r.address ILIKE " +
                       pattern + "))";
        else  // the index's matches, and the matches among the emails waiting for it
            f.where +=
                " AND e.id IN (SELECT s.email_id FROM email_search s WHERE s.account_id = " +
                account + " AND " + match("s") +
                " UNION ALL SELECT t.email_id FROM search_todo t WHERE t.account_id = " + account +
                " AND " + match("t") + ")";
    }
    if (!q.statuses.empty()) {
        f.where += " AND e.status IN (";
        for (std::size_t i = 0; i < q.statuses.size(); ++i)
            f.where += (i ? ", " : "") + p.arg(domain::name(q.statuses[i]));
        f.where += ")";
    }
    // Each tag: the emails that carry it, a range of email_tags' key.
    for (const auto& t : q.tags)
        f.where += " AND e.id IN (SELECT g.email_id FROM email_tags g WHERE g.account_id = " +
                   p.arg(q.account_id) + " AND g.name = " + p.arg(t.name) +
                   " AND g.value = " + p.arg(t.value) + ")";
    // By time: in the order of the id. Ties of another column by id, in the same direction.
    std::string column;
    if (q.sort_by == "to_email" && emails) column = "to_display";
    if (q.sort_by == "subject" && !emails) column = "subject";
    if (q.sort_by == "from_email" && !emails) column = "from_email";
    const char* dir = q.order == SortOrder::asc ? " ASC" : " DESC";
    f.order = column.empty() ? std::string(" ORDER BY e.id") + dir
                             : " ORDER BY e." + column + dir + ", e.id" + dir;
    return f;
}

template <class T, class Read>
Result<Page<T>> search(Conn& c, const SearchQuery& q, const std::string& select, bool emails,
                       Read read) {
    auto f = search_filter(q, emails);
    Page<T> page;
    auto total = c.exec("SELECT count(*) FROM emails e" + f.where, f.params);
    if (!total) return total.error();
    page.total = total->row(0).int64(0);
    const auto limit = f.params.arg(q.limit);
    const auto offset = f.params.arg((q.page - 1) * q.limit);
    auto rows = c.exec(
        select + " FROM emails e" + f.where + f.order + " LIMIT " + limit + " OFFSET " + offset,
        f.params);
    if (!rows) return rows.error();
    page.items = rows->map(read);
    return page;
}

}  // namespace

namespace detail {

// The one email `sql` finds (with `params`), with its recipients when asked; not found when it
// is not of `account_id` (of any account when it is empty).
Result<Email> one_email(Conn& c, const std::string& sql, const Params& params, bool with_recipients,
                        std::string_view account_id = {}) {
    auto rows = c.exec(sql, params);
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    Email e = read_email(rows->row(0));
    if (!account_id.empty() && e.account_id != account_id) return errc::not_found;
    if (!with_recipients) return e;
    auto rs = recipients_of(c, e.id);
    if (!rs) return rs.error();
    e.recipients = std::move(*rs);
    return e;
}

// The email `where` finds (with `params`), with its recipients when asked; `lock`: FOR
// UPDATE, so that changes of one email on several nodes come one after the other.
Result<Email> email_where(Conn& c, const std::string& where, const Params& params,
                          bool with_recipients, bool lock) {
    return one_email(c,
                     std::string("SELECT ") + kEmailColumns + " FROM emails e WHERE " + where +
                         (lock ? " FOR UPDATE" : ""),
                     params, with_recipients);
}

// The statements name the primary key alone, and the account is compared here: with the
// account in them, a plan made on a new table's statistics walked every email of the account
// through an index that begins with it (emails_account_to), a cost that grew with the table.
const std::string kEmailByIdSql =
    std::string("SELECT ") + kEmailColumns + " FROM emails e WHERE e.id = $1";
const char* const kEmailRawSql = "SELECT raw, account_id FROM emails WHERE id = $1";

Result<Email> email_by_id(Conn& c, const std::string& id, const std::string& account_id,
                          bool with_recipients, bool lock) {
    static const std::string kLocked = kEmailByIdSql + " FOR UPDATE";
    return one_email(c, lock ? kLocked : kEmailByIdSql, Params().add(id), with_recipients,
                     account_id);
}

Result<void> write_emails(Conn& c, Batch& b) {
    auto r = insert_emails(c, b.emails());
    b.emails().clear();
    return r;
}

error_code finish_batch(Conn& c, Batch& b) {
    if (auto r = write_emails(c, b); !r) return r.error();
    return add_stats(c, b.stats()).error();
}

Result<void> add_stats(Conn& c, const std::vector<StatBump>& stats) {
    if (stats.empty()) return {};
    std::vector<std::string_view> accounts, dimensions, kinds;
    std::vector<std::int64_t> hours, counts;
    for (const auto& s : stats) {
        accounts.push_back(s.account_id);
        dimensions.push_back(s.dimension);
        kinds.push_back(domain::name(s.kind));
        hours.push_back(s.hour);
        counts.push_back(s.count);
    }
    // One statement for a whole transaction (Writer's finish); the rows summed and taken in
    // the key's order, so that two writers adding to the same counters lock them in the
    // same order.
    auto r = c.exec(
        "INSERT INTO stat_counters (account_id, dimension, hour, kind, count) "
        "SELECT a, d, h, k, sum(n)::bigint FROM unnest($1::text[], $2::text[], $3::int8[], "
        "$4::text[], $5::int8[]) AS u (a, d, h, k, n) GROUP BY a, d, h, k "
        "ORDER BY a, d, h, k "
        "ON CONFLICT (account_id, dimension, hour, kind) "
        "DO UPDATE SET count = stat_counters.count + excluded.count",
        Params().texts(accounts).texts(dimensions).int8s(hours).texts(kinds).int8s(counts));
    if (!r) return r.error();
    return {};
}

// Writes what the rules made of `e` (EmailStore::change_email).
// Its statements are queued (Conn::queue): nothing is read back, and while the batch's jobs
// run together they go to the server with the next job's first statement.
Result<void> write_change(Conn& c, Batch& b, const Email& e, const EmailChange& ch) {
    auto u = c.queue(
        "UPDATE emails SET status = $2, sent_at = $3, delivered_at = $4, failed_at = $5, "
        "opened_at = $6, clicked_at = $7, updated_at = $8, "
        "scheduled_at = coalesce($9, scheduled_at) WHERE id = $1",
        Params()
            .add(e.id)
            .add(domain::name(ch.status))
            .add(ch.sent_at)
            .add(ch.delivered_at)
            .add(ch.failed_at)
            .add(ch.opened_at)
            .add(ch.clicked_at)
            .add(ch.at)
            .add(ch.scheduled_at));
    if (u) return u;
    for (const auto& rc : ch.recipients) {
        Params p;
        p.add(rc.id).add(e.id).add(domain::name(rc.status)).add(rc.attempts);
        p.add(rc.next_attempt_at).add(rc.last_response).add(rc.sent_at).add(rc.final_at);
        if (rc.bounce)
            p.add(domain::name(rc.bounce->type)).add(rc.bounce->code).add(rc.bounce->message);
        else
            p.null(detail::Type::text).null(detail::Type::text).null(detail::Type::text);
        p.add(ch.at);
        if (rc.tls)
            p.add(rc.tls->policy).add(rc.tls->version).add(rc.tls->verified).add(rc.tls->failure);
        else
            p.null(detail::Type::text)
                .null(detail::Type::text)
                .null(detail::Type::boolean)
                .null(detail::Type::text);
        p.add(rc.held_at);
        // The outcome lifts the lease.
        auto r = c.queue(
            "UPDATE recipients SET status = $3, attempts = $4, next_attempt_at = $5, "
            "last_response = $6, sent_at = $7, final_at = $8, bounce_type = $9, "
            "bounce_code = $10, bounce_message = $11, lease_owner = NULL, lease_until = NULL, "
            "updated_at = $12, tls_policy = $13, tls_version = $14, tls_verified = $15, "
            "tls_failure = $16, held_at = $17 WHERE id = $1 AND email_id = $2",
            p);
        if (r) return r;
    }
    for (const auto& s : ch.suppressions)
        if (auto r = detail::insert_suppression(c, b, s); !r) return r.error();
    for (const auto& ev : ch.events)
        if (auto r = detail::insert_event(c, b, ev); !r) return r;
    b.add_stats(ch.stats);  // written at the transaction's end (Batch::add_stats)
    return {};
}

}  // namespace detail

using detail::email_where;
using detail::write_change;

namespace {

// One email of create_email or create_emails, in the writer's open transaction (one that
// waits for delivery NOTIFYs the queue's channel with the commit).
Result<std::optional<StoredResponse>> store_new_email(Conn& c, Batch& b, const NewEmail& n) {
    if (n.idempotency_key) {
        auto held = take_key(c, n);
        if (!held) return held.error();
        if (*held) return held;  // replayed: nothing written
    }
    // With others when the batch runs together (Batch::emails); at once when it runs apart,
    // or when it is read back here.
    b.add_email(n);
    if (!c.pipeline_allowed() || n.settle || b.emails().size() >= detail::kEmailsPerStatement)
        if (auto r = detail::write_emails(c, b); !r) return r.error();
    b.add_stats(n.stats);  // written at the transaction's end (Batch::add_stats)
    if (!n.settle) {
        b.notify(detail::kQueueChannel);
        return std::optional<StoredResponse>{};
    }
    // Decided at once (NewEmail::settle), in this transaction: nothing to deliver.
    auto e = detail::email_by_id(c, n.email.id, n.email.account_id, true);
    if (!e) return e.error();
    if (const auto change = n.settle(*e))
        if (auto w = write_change(c, b, *e, *change); !w) return w.error();
    return std::optional<StoredResponse>{};
}

}  // namespace

asio::awaitable<Result<std::optional<StoredResponse>>> PgStore::create_email(NewEmail n) {
    // Held by pointer: the job is moved on its way to the writer, the email not.
    auto email = std::make_shared<const NewEmail>(std::move(n));
    auto job = [p = email](Conn& c, Batch& b) { return store_new_email(c, b, *p); };
    // A named job, not a lambda temporary, inside co_await (docs/architecture.md).
    auto r = co_await impl_->writer.write<std::optional<StoredResponse>>(std::move(job));
    if (r && !*r) {
        if (email->settle)
            impl_->events_written();
        else
            impl_->queued();
    }
    co_return r;
}

asio::awaitable<Result<std::vector<std::optional<StoredResponse>>>> PgStore::create_emails(
    std::vector<NewEmail> emails) {
    using Answers = std::vector<std::optional<StoredResponse>>;
    auto held = std::make_shared<const std::vector<NewEmail>>(std::move(emails));
    // One job: the writer runs a failing job in a savepoint of its own, so that either all
    // of them are written or, when one fails, none.
    auto job = [held](Conn& c, Batch& b) -> Result<Answers> {
        Answers out;
        out.reserve(held->size());
        for (const auto& n : *held) {
            auto r = store_new_email(c, b, n);
            if (!r) return r.error();
            out.push_back(std::move(*r));
        }
        return out;
    };
    auto r = co_await impl_->writer.write<Answers>(std::move(job));
    if (!r) co_return r;
    bool queued = false, settled = false;
    for (std::size_t i = 0; i < held->size(); ++i) {
        if ((*r)[i]) continue;  // replayed: nothing written
        ((*held)[i].settle ? settled : queued) = true;
    }
    if (settled) impl_->events_written();
    if (queued) impl_->queued();
    co_return r;
}

asio::awaitable<Result<std::optional<StoredResponse>>> PgStore::find_idempotent(
    std::string account_id, std::string key, UnixMs now) {
    return impl_->read([account_id = std::move(account_id), key = std::move(key),
                        now](Conn& c) { return idempotent(c, account_id, key, now); },
                       false);
}

asio::awaitable<Result<Email>> PgStore::find_email(std::string account_id, std::string id) {
    auto job = [account_id = std::move(account_id), id = std::move(id)](Conn& c) {
        return detail::email_by_id(c, id, account_id, true);
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<void>> PgStore::change_email(std::string account_id, std::string email_id,
                                                    bool with_recipients, EmailDecision decide) {
    auto job = [account_id = std::move(account_id), email_id = std::move(email_id), with_recipients,
                decide = std::move(decide)](Conn& c, Batch& b) -> Result<bool> {
        // An empty account: the email by its id in any account (a tracking token names only
        // the email). Locked until the commit: another node's change of it waits, then reads
        // what this one wrote.
        auto e = detail::email_by_id(c, email_id, account_id, with_recipients, true);
        if (!e) return detail::fail<bool>(e.error());
        const auto change = decide(*e);
        if (!change) return Result<bool>(false);
        if (auto w = write_change(c, b, *e, *change); !w) return detail::fail<bool>(w.error());
        return Result<bool>(!change->events.empty() || !change->suppressions.empty());
    };
    auto r = co_await impl_->writer.write<bool>(std::move(job));
    if (!r) co_return r.error();
    if (*r) impl_->events_written();
    co_return Result<void>{};
}

asio::awaitable<Result<Email>> PgStore::find_email_by_return_token(std::string token) {
    // A token made since version 8 of the SQLite schema begins with its email's id (found by
    // the key); an earlier one (26 random characters) through the index that holds only them.
    auto job = [token = std::move(token)](Conn& c) {
        if (token.size() == 42)
            return email_where(c, "e.id = $1 AND e.return_token = $2",
                               Params().add("em_" + token.substr(0, 26)).add(token), true, false);
        return email_where(c, "e.return_token = $1 AND length(e.return_token) = 26",
                           Params().add(token), true, false);
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<std::string>> PgStore::email_raw(std::string account_id, std::string id) {
    return impl_->read(
        [account_id = std::move(account_id), id = std::move(id)](Conn& c) -> Result<std::string> {
            auto rows = c.exec(detail::kEmailRawSql, Params().add(id));
            if (!rows) return rows.error();
            if (rows->empty() || rows->row(0).text(1) != account_id) return errc::not_found;
            return rows->row(0).text(0);
        },
        false);
}

asio::awaitable<Result<std::vector<Event>>> PgStore::email_events(std::string account_id,
                                                                  std::string id) {
    return impl_->read(
        [account_id = std::move(account_id),
         id = std::move(id)](Conn& c) -> Result<std::vector<Event>> {
            auto rows = c.exec(
                "SELECT id, account_id, type, email_id, data, created_at FROM events "
                "WHERE email_id = $1 AND account_id = $2 ORDER BY seq",
                Params().add(id).add(account_id));
            if (!rows) return rows.error();
            std::vector<Event> out;
            out.reserve(static_cast<std::size_t>(rows->size()));
            for (int i = 0; i < rows->size(); ++i) {
                const auto r = rows->row(i);
                out.push_back(
                    Event{.id = r.text(0),
                          .account_id = r.text(1),
                          .kind = detail::read_name(r.text(2), domain::EventKind::email_sent),
                          .email_id = r.opt_text(3),
                          .data_json = r.text(4),
                          .created_at = r.int64(5)});
            }
            return out;
        },
        false);
}

asio::awaitable<Result<Page<Email>>> PgStore::list_emails(SearchQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) {
        return search<Email>(c, q, std::string("SELECT ") + kEmailColumns, true, read_email);
    });
}

asio::awaitable<Result<Page<Envelope>>> PgStore::list_envelopes(SearchQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) {
        auto read = [](const Row& r) {
            return Envelope{.id = r.text(0),
                            .account_id = r.text(1),
                            .email_id = r.text(2),
                            .subject = r.text(3),
                            .from_email = r.text(4),
                            .from_name = r.text(5),
                            .total_recipients = r.int32(6),
                            .created_at = r.int64(7)};
        };
        return search<Envelope>(c, q,
                                "SELECT e.envelope_id, e.account_id, e.id, e.subject, "
                                "e.from_email, coalesce(e.from_name, ''), e.total_recipients, "
                                "e.created_at",
                                false, read);
    });
}

// The email locked first, as change_email locks it, then its recipients (FOR UPDATE, in the
// order of their ids, as change_queued locks them): a claim on any node passes over them until
// the commit, and a claim that holds them uncommitted is waited for, its leases then read.
asio::awaitable<Result<void>> PgStore::change_email_locked(std::string account_id,
                                                           std::string email_id,
                                                           EmailDecision decide) {
    struct Wrote {
        bool events = false;
        bool due = false;  // a recipient left open: delivery may have work
    };
    auto job = [account_id = std::move(account_id), email_id = std::move(email_id),
                decide = std::move(decide)](Conn& c, Batch& b) -> Result<Wrote> {
        auto e = detail::email_by_id(c, email_id, account_id, false, true);
        if (!e) return e.error();
        auto rs = recipients_of(c, e->id, true);
        if (!rs) return rs.error();
        e->recipients = std::move(*rs);
        const auto change = decide(*e);
        if (!change) return Wrote{};
        if (auto w = write_change(c, b, *e, *change); !w) return w.error();
        Wrote out{.events = !change->events.empty() || !change->suppressions.empty()};
        for (const auto& rc : change->recipients)
            out.due = out.due || rc.status == domain::RecipientStatus::queued;
        if (out.due) b.notify(detail::kQueueChannel);
        return out;
    };
    auto r = co_await impl_->writer.write<Wrote>(std::move(job));
    if (!r) co_return r.error();
    if (r->events) impl_->events_written();
    if (r->due) impl_->queued();
    co_return Result<void>{};
}

asio::awaitable<Result<std::vector<Email>>> PgStore::scheduled_due(UnixMs now, int limit) {
    return impl_->read([now, limit](Conn& c) -> Result<std::vector<Email>> {
        auto rows = c.exec(std::string("SELECT ") + kEmailColumns +
                               " FROM emails e WHERE e.status = $1 AND e.scheduled_at IS NOT NULL "
                               "AND e.scheduled_at <= $2 ORDER BY e.status, e.scheduled_at "
                               "LIMIT $3",
                           Params()
                               .add(std::string(domain::name(domain::EmailStatus::scheduled)))
                               .add(now)
                               .add(limit));
        if (!rows) return rows.error();
        return rows->map(read_email);
    });
}

}  // namespace posthorn::store::pg
