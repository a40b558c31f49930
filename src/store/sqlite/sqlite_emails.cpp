// SqliteStore: emails (with their envelopes), recipients, raw messages and idempotency keys.
#include "core/id.hpp"
#include "store/detail/tag_codec.hpp"
#include "store/sqlite/detail/impl.hpp"
#include "store/sqlite/detail/indexed_list.hpp"

namespace posthorn::store::sqlite {
namespace {

constexpr const char* kEmailColumns =
    "e.id, e.account_id, COALESCE(e.domain_id, ''), e.status, e.from_email, "
    "COALESCE(e.from_name, ''), e.to_display, e.subject, e.message_id, e.return_token, "
    "e.track_opens, e.track_clicks, e.source, e.size_bytes, e.created_at, e.queued_at, "
    "e.sent_at, e.delivered_at, e.failed_at, e.opened_at, e.clicked_at, "
    "COALESCE(e.envelope_id, ''), COALESCE(e.api_key_id, ''), COALESCE(e.tags, ''), "
    "COALESCE(e.metadata, ''), e.test, COALESCE(e.return_path, ''), e.scheduled_at";
// The columns after kEmailColumns' (the range of the email's recipients: email_where).
constexpr int kAfterEmail = 28;

Email read_email(const Stmt& s) {
    return Email{.id = s.text(0),
                 .account_id = s.text(1),
                 .domain_id = s.text(2),
                 .envelope_id = s.text(21),
                 .status = detail::read_name(s.text(3), domain::EmailStatus::queued),
                 .from_email = s.text(4),
                 .from_name = s.text(5),
                 .to_display = s.text(6),
                 .subject = s.text(7),
                 .message_id = s.text(8),
                 .return_token = s.text(9),
                 .return_path = s.text(26),
                 .track_opens = s.int64(10) != 0,
                 .track_clicks = s.int64(11) != 0,
                 .source = s.text(12),
                 .api_key_id = s.text(22),
                 .size_bytes = s.int64(13),
                 .created_at = s.int64(14),
                 .queued_at = s.int64(15),
                 .sent_at = s.opt_int64(16),
                 .delivered_at = s.opt_int64(17),
                 .failed_at = s.opt_int64(18),
                 .opened_at = s.opt_int64(19),
                 .clicked_at = s.opt_int64(20),
                 .scheduled_at = s.opt_int64(27),
                 .tags = store::detail::decode_tags(s.view(23)),
                 .metadata_json = s.text(24),
                 .test = s.int64(25) != 0};
}

Result<std::optional<StoredResponse>> idempotent(Db& db, const std::string& account_id,
                                                 const std::string& key, UnixMs now) {
    auto s = db.prepare(
        "SELECT response_status, response_body FROM idempotency_keys "
        "WHERE account_id = ?1 AND key = ?2 AND expires_at > ?3");
    if (!s) return s.error();
    s->bind(1, account_id).bind(2, key).bind(3, now);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return std::optional<StoredResponse>{};
    return std::optional<StoredResponse>(
        StoredResponse{.status = static_cast<int>(s->int64(0)), .body = s->text(1)});
}

Result<void> insert_email(Db& db, const NewEmail& n) {
    const auto& e = n.email;
    auto body = db.prepare("INSERT INTO email_bodies (raw) VALUES (?1)");
    if (!body) return body.error();
    if (auto br = body->bind_blob(1, n.raw).run(); !br) return br;
    const auto body_id = db.last_insert_rowid();
    // The recipients first, one after another: their ids are consecutive (SQLite gives a new
    // row the largest id plus one), and the email row holds their range (migration 010).
    std::int64_t first_recipient = 0, last_recipient = 0;
    for (const auto& rc : n.recipients) {
        auto rs = db.prepare(
            "INSERT INTO recipients (email_id, account_id, address, domain, type, status, "
            "next_attempt_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        if (!rs) return rs.error();
        auto rr = rs->bind_ref(1, e.id)
                      .bind_ref(2, e.account_id)
                      .bind_ref(3, rc.address)
                      .bind_ref(4, rc.domain)
                      .bind_ref(5, domain::name(rc.type))
                      .bind_ref(6, domain::name(rc.status))
                      .bind(7, rc.next_attempt_at)
                      .bind(8, e.created_at)
                      .run();
        if (!rr) return rr;
        last_recipient = db.last_insert_rowid();
        if (first_recipient == 0) first_recipient = last_recipient;
    }
    if (!n.recipients.empty() &&
        last_recipient - first_recipient + 1 != static_cast<std::int64_t>(n.recipients.size()))
        return errc::io;  // not a range: nothing of the email is kept
    auto s = db.prepare(
        "INSERT INTO emails (id, account_id, domain_id, status, from_email, from_name, "
        "to_display, subject, message_id, return_token, track_opens, track_clicks, source, "
        "size_bytes, created_at, queued_at, updated_at, envelope_id, total_recipients, body_id, "
        "first_recipient_id, last_recipient_id, api_key_id, tags, metadata, test, return_path, "
        "scheduled_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?15, "
        "?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)");
    if (!s) return s.error();
    // The text is bound without a copy: `n` outlives the statement's run.
    auto r = s->bind_ref(1, e.id)
                 .bind_ref(2, e.account_id)
                 // None (the sandbox sender of test mode): NULL, as for a deleted domain.
                 .bind(3, e.domain_id.empty() ? std::optional<std::string>{} : e.domain_id)
                 .bind_ref(4, domain::name(e.status))
                 .bind_ref(5, e.from_email)
                 .bind(6, e.from_name.empty() ? std::optional<std::string>{} : e.from_name)
                 .bind_ref(7, e.to_display)
                 .bind_ref(8, e.subject)
                 .bind_ref(9, e.message_id)
                 .bind_ref(10, e.return_token)
                 .bind(11, e.track_opens ? 1 : 0)
                 .bind(12, e.track_clicks ? 1 : 0)
                 .bind_ref(13, e.source)
                 .bind(14, e.size_bytes)
                 .bind(15, e.created_at)
                 .bind(16, e.queued_at)
                 .bind_ref(17, e.envelope_id)
                 .bind(18, n.total_recipients)
                 .bind(19, body_id)
                 .bind(20, n.recipients.empty() ? std::optional<std::int64_t>{} : first_recipient)
                 .bind(21, n.recipients.empty() ? std::optional<std::int64_t>{} : last_recipient)
                 .bind(22, e.api_key_id.empty() ? std::optional<std::string>{} : e.api_key_id)
                 .bind(23, e.tags.empty() ? std::optional<std::string>{}
                                          : std::optional(store::detail::encode_tags(e.tags)))
                 .bind(24, e.metadata_json.empty() ? std::optional<std::string>{}
                                                   : std::optional(e.metadata_json))
                 .bind(25, e.test ? 1 : 0)
                 .bind(26, e.return_path.empty() ? std::optional<std::string>{}
                                                 : std::optional(e.return_path))
                 .bind(27, e.scheduled_at)
                 .run();
    if (!r) return r;
    for (const auto& t : e.tags) {
        auto ts = db.prepare(
            "INSERT OR IGNORE INTO email_tags (account_id, name, value, email_id) "
            "VALUES (?1, ?2, ?3, ?4)");
        if (!ts) return ts.error();
        if (auto tr = ts->bind_ref(1, e.account_id)
                          .bind_ref(2, t.name)
                          .bind_ref(3, t.value)
                          .bind_ref(4, e.id)
                          .run();
            !tr)
            return tr;
    }
    // The account's count (migration 014), which a list without a filter answers.
    auto count = db.prepare(
        "INSERT INTO email_counts (account_id, n) VALUES (?1, 1) "
        "ON CONFLICT (account_id) DO UPDATE SET n = n + 1");
    if (!count) return count.error();
    if (auto cr = count->bind_ref(1, e.account_id).run(); !cr) return cr;
    if (n.idempotency_key) {
        auto ik = db.prepare(
            "INSERT INTO idempotency_keys (account_id, key, email_id, response_status, "
            "response_body, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        if (!ik) return ik.error();
        auto ir = ik->bind(1, e.account_id)
                      .bind(2, *n.idempotency_key)
                      .bind(3, e.id)
                      .bind(4, n.response.status)
                      .bind(5, n.response.body)
                      .bind(6, e.created_at)
                      .bind(7, n.idempotency_expires_at)
                      .run();
        if (!ir) return ir;
    }
    return {};
}

// WHERE and ORDER BY of a search over emails, or over their envelopes (`emails` false).
struct Filter {
    std::string where;
    std::string order;
};

Filter search_filter(const SearchQuery& q, bool emails) {
    Filter f;
    // An email's created_at is the millisecond of its id (migration 011), so a date bound
    // is also a bound of the key (?7, ?8: bind_filter), which the scan reads as a range.
    f.where = " WHERE e.account_id = ?1";
    if (q.start) f.where += " AND e.id >= ?7 AND e.created_at >= ?2";
    if (q.end) f.where += " AND e.id < ?8 AND e.created_at <= ?3";
    if (q.search) {
        if (emails)
            f.where +=
                " AND (e.subject LIKE ?4 ESCAPE '\\' OR EXISTS (SELECT 1 FROM recipients r "
                "WHERE r.id BETWEEN e.first_recipient_id AND e.last_recipient_id AND "
                "r.address LIKE ?4 ESCAPE '\\'))";
        else
            f.where +=
                " AND (e.subject LIKE ?4 ESCAPE '\\' OR e.from_email LIKE ?4 ESCAPE '\\' OR "
                "COALESCE(e.from_name, '') LIKE ?4 ESCAPE '\\' OR e.envelope_id LIKE ?4 ESCAPE "
                "'\\')";
    }
    // Statuses and tags: parameters from ?10 on (bind_filter), statuses first.
    int n = 10;
    if (!q.statuses.empty()) {
        f.where += " AND e.status IN (";
        for (std::size_t i = 0; i < q.statuses.size(); ++i)
            f.where += (i ? ", ?" : "?") + std::to_string(n++);
        f.where += ")";
    }
    // Each tag: the emails that carry it, a range of email_tags' key.
    for (std::size_t i = 0; i < q.tags.size(); ++i, n += 2)
        f.where +=
            " AND e.id IN (SELECT t.email_id FROM email_tags t WHERE t.account_id = ?1 "
            "AND t.name = ?" +
            std::to_string(n) + " AND t.value = ?" + std::to_string(n + 1) + ")";
    // By time: in the order of the key (an email's and its envelope's ids are made together).
    std::string column;
    if (q.sort_by == "to_email" && emails) column = "to_display";
    if (q.sort_by == "subject" && !emails) column = "subject";
    if (q.sort_by == "from_email" && !emails) column = "from_email";
    const char* dir = q.order == SortOrder::asc ? " ASC" : " DESC";
    f.order = column.empty() ? std::string(" ORDER BY e.id") + dir
                             : " ORDER BY e." + column + dir + ", e.id" + dir;
    return f;
}

void bind_filter(Stmt& s, const SearchQuery& q) {
    s.bind(1, q.account_id);
    if (q.start) s.bind(2, *q.start).bind(7, first_id_at("em_", *q.start));
    if (q.end) s.bind(3, *q.end).bind(8, first_id_at("em_", *q.end + 1));
    if (q.search) s.bind(4, detail::like_pattern(*q.search));
    int n = 10;
    for (const auto st : q.statuses) s.bind(n++, std::string(domain::name(st)));
    for (const auto& t : q.tags) {
        s.bind(n++, t.name);
        s.bind(n++, t.value);
    }
}

template <class T, class Read>
Result<Page<T>> search(Db& db, const SearchQuery& q, const std::string& select,
                       const std::string& from, bool emails, Read read) {
    const auto f = search_filter(q, emails);
    Page<T> page;
    {
        // Without a filter, the account's kept count (migration 014); otherwise counted.
        const bool unfiltered =
            !q.search && !q.start && !q.end && q.statuses.empty() && q.tags.empty();
        auto c = db.prepare(unfiltered ? std::string("SELECT COALESCE((SELECT n FROM email_counts "
                                                     "WHERE account_id = ?1), 0)")
                                       : "SELECT COUNT(*) " + from + f.where);
        if (!c) return c.error();
        if (unfiltered)
            c->bind(1, q.account_id);
        else
            bind_filter(*c, q);
        auto row = c->step();
        if (!row) return row.error();
        page.total = c->int64(0);
    }
    auto s = db.prepare(select + " " + from + f.where + f.order + " LIMIT ?5 OFFSET ?6");
    if (!s) return s.error();
    bind_filter(*s, q);
    s->bind(5, q.limit).bind(6, (q.page - 1) * q.limit);
    for (;;) {
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return page;
        page.items.push_back(read(*s));
    }
}

// The same search by the index (detail/search_index.hpp), for a search of three characters
// or more in the order of time: the emails the index holds are found there; the others (the
// tail: those whose recipients came after its mark) are scanned as search() does.
template <class T, class Read>
Result<Page<T>> indexed_search(Db& db, const SearchQuery& q, const std::string& select, bool emails,
                               Read read) {
    auto mark = db.prepare("SELECT value FROM search.marks WHERE name = 'recipients'");
    if (!mark) return mark.error();
    auto mrow = mark->step();
    if (!mrow) return mrow.error();
    const std::int64_t through = *mrow ? mark->int64(0) : 0;
    std::vector<detail::TailRow> tail;
    {
        // Driven by the recipients above the mark (CROSS JOIN keeps them the outer loop):
        // with a date bound the planner would rather walk every email in it.
        const auto f = search_filter(q, emails);
        auto t = db.prepare(
            "SELECT e.created_at, e.id FROM (SELECT DISTINCT email_id FROM recipients "
            "WHERE id > ?9 AND account_id = ?1) AS tail CROSS JOIN emails e" +
            f.where + " AND e.id = tail.email_id" + f.order);
        if (!t) return t.error();
        bind_filter(*t, q);
        t->bind(9, through);
        for (;;) {
            auto row = t->step();
            if (!row) return row.error();
            if (!*row) break;
            tail.emplace_back(t->int64(0), t->text(1));
        }
    }
    // Without a search or a date bound, the total is the account's kept count.
    const bool counted = !q.search && !q.start && !q.end;
    auto found = detail::indexed_page(
        db, emails ? detail::kEmailsBySubjectOrRecipient : detail::kEnvelopesBySenderSubjectOrId,
        {.account_id = q.account_id,
         .needle = q.search.value_or(""),
         .start = q.start,
         .end = q.end,
         .descending = q.order != SortOrder::asc,
         .offset = (q.page - 1) * q.limit,
         .limit = q.limit,
         .count = !counted},
        tail);
    if (!found) return found.error();
    Page<T> page{.total = found->total};
    if (counted) {
        auto c =
            db.prepare("SELECT COALESCE((SELECT n FROM email_counts WHERE account_id = ?1), 0)");
        if (!c) return c.error();
        c->bind(1, q.account_id);
        auto row = c->step();
        if (!row) return row.error();
        page.total = c->int64(0);
    }
    for (const auto& id : found->ids) {
        auto s = db.prepare(select + " FROM emails e WHERE e.account_id = ?1 AND e.id = ?2");
        if (!s) return s.error();
        s->bind(1, q.account_id).bind(2, id);
        auto row = s->step();
        if (!row) return row.error();
        if (*row) page.items.push_back(read(*s));  // (one deleted meanwhile is left out)
    }
    return page;
}

// Deeper than this many rows, a page in the order of time is read from the index of the
// account's documents (narrow rows) rather than the emails table (wide ones).
constexpr std::int64_t kDeepOffset = 2000;

// Whether `q` is answered by the index, in the order of time: a search it can answer (three
// characters or more), a date bound (counted in the index's narrow rows) or a deep page.
bool by_index(const SearchQuery& q, bool indexed) {
    // A status or a tag filter: the index of documents knows neither.
    if (!indexed || q.sort_by != "created_at" || !q.statuses.empty() || !q.tags.empty())
        return false;
    if (q.search) return detail::indexable(*q.search);
    return q.start || q.end || (q.page - 1) * q.limit > kDeepOffset;
}

}  // namespace

namespace {

// One email of create_email or create_emails, in the writer's open transaction: the check of
// its key and the insert share it, so of ten requests with one key exactly one inserts and
// nine replay its answer. Its statistics are added at the transaction's end, summed with the
// other jobs' (detail::add_stats).
Result<std::optional<StoredResponse>> store_new_email(Db& db, const NewEmail& n) {
    if (n.idempotency_key) {
        auto del = db.prepare(
            "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND "
            "expires_at <= ?3");
        if (!del) return del.error();
        auto dr = del->bind(1, n.email.account_id)
                      .bind(2, *n.idempotency_key)
                      .bind(3, n.email.created_at)
                      .run();
        if (!dr) return dr.error();
        auto seen = idempotent(db, n.email.account_id, *n.idempotency_key, n.email.created_at);
        if (!seen) return seen.error();
        if (*seen) return seen;
    }
    if (auto r = insert_email(db, n); !r) return r.error();
    detail::add_stats(db, n.stats);
    if (n.settle) {  // decided at once (NewEmail::settle), in this transaction
        auto e = detail::email_where(db, "e.account_id = ?1 AND e.id = ?2", n.email.account_id,
                                     n.email.id, true);
        if (!e) return e.error();
        if (const auto change = n.settle(*e))
            if (auto w = detail::write_change(db, *e, *change); !w) return w.error();
    }
    return std::optional<StoredResponse>{};
}

}  // namespace

// What follows a stored (not replayed) email's commit: its message kept in memory for
// delivery and delivery woken, or, settled at once, its events routed.
void SqliteStore::after_stored(const std::shared_ptr<const NewEmail>& email) {
    if (email->settle) {
        impl_->events_written();  // settled: nothing to deliver, its events to route
    } else {
        impl_->recent_messages.put(email->email.account_id, email->email.id, email, &email->raw);
    }
}

asio::awaitable<Result<std::optional<StoredResponse>>> SqliteStore::create_email(NewEmail n) {
    // Held by pointer: the job is moved many times on its way to the writer, the email not;
    // and once stored its message stays in memory for delivery (detail/recent_messages.hpp).
    auto email = std::make_shared<const NewEmail>(std::move(n));
    auto job = [p = email](Db& db) { return store_new_email(db, *p); };
    // A named job, not a lambda temporary, inside co_await (docs/architecture.md).
    auto r = co_await impl_->writer.write<std::optional<StoredResponse>>(std::move(job));
    if (r && !*r) {
        after_stored(email);
        if (!email->settle && impl_->queue_listener) impl_->queue_listener();
        if (impl_->search_index) impl_->search_index->poke();
    }
    co_return r;
}

asio::awaitable<Result<std::vector<std::optional<StoredResponse>>>> SqliteStore::create_emails(
    std::vector<NewEmail> emails) {
    using Answers = std::vector<std::optional<StoredResponse>>;
    std::vector<std::shared_ptr<const NewEmail>> held;
    held.reserve(emails.size());
    for (auto& n : emails) held.push_back(std::make_shared<const NewEmail>(std::move(n)));
    // One job: the writer runs a failing job in a savepoint of its own, so that either all
    // of them are written or, when one fails, none.
    auto job = [held](Db& db) -> Result<Answers> {
        Answers out;
        out.reserve(held.size());
        for (const auto& p : held) {
            auto r = store_new_email(db, *p);
            if (!r) return r.error();
            out.push_back(std::move(*r));
        }
        return out;
    };
    auto r = co_await impl_->writer.write<Answers>(std::move(job));
    if (!r) co_return r;
    bool queued = false, stored = false;
    for (std::size_t i = 0; i < held.size(); ++i) {
        if ((*r)[i]) continue;  // replayed: nothing written
        after_stored(held[i]);
        stored = true;
        queued = queued || !held[i]->settle;
    }
    if (queued && impl_->queue_listener) impl_->queue_listener();
    if (stored && impl_->search_index) impl_->search_index->poke();
    co_return r;
}

asio::awaitable<Result<std::optional<StoredResponse>>> SqliteStore::find_idempotent(
    std::string account_id, std::string key, UnixMs now) {
    return impl_->read_here([account_id = std::move(account_id), key = std::move(key),
                             now](Db& db) { return idempotent(db, account_id, key, now); });
}

namespace detail {

// The email `where` finds (?1 = a, ?2 = b unless empty), with its recipients when asked.
Result<Email> email_where(Db& db, const char* where, const std::string& a, const std::string& b,
                          bool with_recipients) {
    auto s = db.prepare(std::string("SELECT ") + kEmailColumns +
                        ", e.first_recipient_id, e.last_recipient_id FROM emails e WHERE " + where);
    if (!s) return s.error();
    s->bind(1, a);
    if (!b.empty()) s->bind(2, b);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    Email e = read_email(*s);
    if (!with_recipients) return e;
    // Its recipients: the range of ids the row holds (migration 010).
    auto r = db.prepare(
        "SELECT id, address, domain, type, status, attempts, next_attempt_at, last_response, "
        "sent_at, bounce_type, bounce_code, bounce_message, tls_policy, tls_version, "
        "tls_verified, tls_failure, held_at, lease_until "
        "FROM recipients WHERE id BETWEEN ?1 AND ?2 AND email_id = ?3 ORDER BY id");
    if (!r) return r.error();
    r->bind(1, s->opt_int64(kAfterEmail)).bind(2, s->opt_int64(kAfterEmail + 1)).bind_ref(3, e.id);
    for (;;) {
        auto rrow = r->step();
        if (!rrow) return rrow.error();
        if (!*rrow) break;
        const auto status = detail::read_name(r->text(4), domain::RecipientStatus::queued);
        Recipient rc{.id = r->int64(0),
                     .address = r->text(1),
                     .domain = r->text(2),
                     .type = detail::read_name(r->text(3), domain::RecipientType::to),
                     .status = status,
                     .attempts = static_cast<int>(r->int64(5)),
                     // A recipient not yet tried has none (migration 012): it is due since
                     // it was accepted.
                     .next_attempt_at = r->is_null(6) && status == domain::RecipientStatus::queued
                                            ? std::optional<UnixMs>(e.queued_at)
                                            : r->opt_int64(6),
                     .last_response = r->opt_text(7),
                     .sent_at = r->opt_int64(8),
                     .held_at = r->opt_int64(16),
                     .lease_until = r->opt_int64(17)};
        if (!r->is_null(9))
            rc.bounce =
                Bounce{.type = detail::read_name(r->text(9), domain::BounceType::undetermined),
                       .code = r->text(10),
                       .message = r->text(11)};
        if (!r->is_null(12))
            rc.tls = domain::TlsOutcome{.policy = r->text(12),
                                        .version = r->opt_text(13).value_or(""),
                                        .verified = r->opt_int64(14).value_or(0) != 0,
                                        .failure = r->opt_text(15).value_or("")};
        e.recipients.push_back(std::move(rc));
    }
    return e;
}

// Writes what the rules made of `e` (EmailStore::change_email).
Result<void> write_change(Db& db, const Email& e, const EmailChange& c) {
    auto u = db.prepare(
        "UPDATE emails SET status = ?3, sent_at = ?4, delivered_at = ?5, failed_at = ?6, "
        "opened_at = ?7, clicked_at = ?8, updated_at = ?9, "
        "scheduled_at = COALESCE(?10, scheduled_at) WHERE account_id = ?1 AND id = ?2");
    if (!u) return u.error();
    if (auto r = u->bind_ref(1, e.account_id)
                     .bind_ref(2, e.id)
                     .bind_ref(3, domain::name(c.status))
                     .bind(4, c.sent_at)
                     .bind(5, c.delivered_at)
                     .bind(6, c.failed_at)
                     .bind(7, c.opened_at)
                     .bind(8, c.clicked_at)
                     .bind(9, c.at)
                     .bind(10, c.scheduled_at)
                     .run();
        !r)
        return r;
    for (const auto& rc : c.recipients) {
        auto s = db.prepare(
            "UPDATE recipients SET status = ?3, attempts = ?4, next_attempt_at = ?5, "
            "last_response = ?6, sent_at = ?7, final_at = ?8, bounce_type = ?9, "
            "bounce_code = ?10, bounce_message = ?11, lease_owner = NULL, lease_until = NULL, "
            "updated_at = ?12, tls_policy = ?13, tls_version = ?14, tls_verified = ?15, "
            "tls_failure = ?16, held_at = ?17 WHERE id = ?1 AND email_id = ?2");
        if (!s) return s.error();
        s->bind(1, rc.id)
            .bind_ref(2, e.id)
            .bind_ref(3, domain::name(rc.status))
            .bind(4, rc.attempts)
            .bind(5, rc.next_attempt_at)
            .bind(6, rc.last_response)
            .bind(7, rc.sent_at)
            .bind(8, rc.final_at)
            .bind(12, c.at)
            .bind(17, rc.held_at);
        if (rc.bounce)
            s->bind_ref(9, domain::name(rc.bounce->type))
                .bind_ref(10, rc.bounce->code)
                .bind_ref(11, rc.bounce->message);
        if (rc.tls)
            s->bind_ref(13, rc.tls->policy)
                .bind_ref(14, rc.tls->version)
                .bind(15, rc.tls->verified ? 1 : 0)
                .bind_ref(16, rc.tls->failure);
        if (auto r = s->run(); !r) return r;
    }
    for (const auto& sup : c.suppressions)
        if (auto r = insert_suppression(db, sup); !r) return r.error();
    for (const auto& ev : c.events)
        if (auto r = insert_event(db, ev); !r) return r;
    add_stats(db, c.stats);
    return {};
}

}  // namespace detail

using detail::email_where;
using detail::write_change;

asio::awaitable<Result<Email>> SqliteStore::find_email(std::string account_id, std::string id) {
    auto job = [account_id = std::move(account_id), id = std::move(id)](Db& db) {
        return email_where(db, "e.account_id = ?1 AND e.id = ?2", account_id, id);
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::change_email(std::string account_id,
                                                        std::string email_id, bool with_recipients,
                                                        EmailDecision decide) {
    auto job = [account_id = std::move(account_id), email_id = std::move(email_id), with_recipients,
                decide = std::move(decide)](Db& db) -> Result<bool> {
        // By its id alone: the key begins with the account, so each account is looked in.
        auto e = account_id.empty()
                     ? email_where(db, "e.account_id IN (SELECT id FROM accounts) AND e.id = ?1",
                                   email_id, "", with_recipients)
                     : email_where(db, "e.account_id = ?1 AND e.id = ?2", account_id, email_id,
                                   with_recipients);
        using R = Result<bool>;  // a bool and an error code would be ambiguous
        if (!e) return R(boost::system::in_place_error, e.error());
        const auto change = decide(*e);
        if (!change) return R(false);
        if (auto w = write_change(db, *e, *change); !w)
            return R(boost::system::in_place_error, w.error());
        return R(!change->events.empty() || !change->suppressions.empty());
    };
    auto r = co_await impl_->writer.write<bool>(std::move(job));
    if (!r) co_return r.error();
    if (*r) impl_->events_written();
    co_return Result<void>{};
}

asio::awaitable<Result<Email>> SqliteStore::find_email_by_return_token(std::string token) {
    // A token made since version 8 begins with its email's id, which is its key; an
    // earlier one (26 random characters) is found through the index that holds only them.
    auto job = [token = std::move(token)](Db& db) {
        if (token.size() == 42)
            return email_where(db,
                               "e.account_id IN (SELECT id FROM accounts) AND e.id = ?1 AND "
                               "e.return_token = ?2",
                               "em_" + token.substr(0, 26), token);
        return email_where(db, "e.return_token = ?1 AND length(e.return_token) = 26", token, "");
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<std::string>> SqliteStore::email_raw(std::string account_id,
                                                            std::string id) {
    if (auto raw = impl_->recent_messages.find(account_id, id))
        return Impl::ready(Result<std::string>(std::move(*raw)));
    return impl_->read(
        [account_id = std::move(account_id), id = std::move(id)](Db& db) -> Result<std::string> {
            auto s = db.prepare(
                "SELECT b.raw FROM emails e JOIN email_bodies b ON b.id = e.body_id "
                "WHERE e.account_id = ?1 AND e.id = ?2");
            if (!s) return s.error();
            s->bind(1, account_id).bind(2, id);
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return errc::not_found;
            return s->text(0);
        });
}

asio::awaitable<Result<std::vector<Event>>> SqliteStore::email_events(std::string account_id,
                                                                      std::string id) {
    return impl_->read([account_id = std::move(account_id),
                        id = std::move(id)](Db& db) -> Result<std::vector<Event>> {
        // events_email (migration 001) finds them; rowid is the order they were written in.
        auto s = db.prepare(
            "SELECT id, account_id, type, email_id, data, created_at FROM events "
            "WHERE email_id = ?1 AND account_id = ?2 ORDER BY rowid");
        if (!s) return s.error();
        s->bind(1, id).bind(2, account_id);
        std::vector<Event> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            out.push_back(
                Event{.id = s->text(0),
                      .account_id = s->text(1),
                      .kind = detail::read_name(s->text(2), domain::EventKind::email_sent),
                      .email_id = s->opt_text(3),
                      .data_json = s->text(4),
                      .created_at = s->int64(5)});
        }
        return out;
    });
}

asio::awaitable<Result<Page<Email>>> SqliteStore::list_emails(SearchQuery q) {
    const bool indexed = by_index(q, impl_->search_index != nullptr);
    return impl_->read([q = std::move(q), indexed](Db& db) {
        const auto select = std::string("SELECT ") + kEmailColumns;
        if (indexed) return indexed_search<Email>(db, q, select, true, read_email);
        return search<Email>(db, q, select, "FROM emails e", true, read_email);
    });
}

asio::awaitable<Result<Page<Envelope>>> SqliteStore::list_envelopes(SearchQuery q) {
    const bool indexed = by_index(q, impl_->search_index != nullptr);
    return impl_->read([q = std::move(q), indexed](Db& db) {
        const std::string select =
            "SELECT e.envelope_id, e.account_id, e.id, e.subject, e.from_email, "
            "COALESCE(e.from_name, ''), e.total_recipients, e.created_at";
        auto read = [](const Stmt& s) {
            return Envelope{.id = s.text(0),
                            .account_id = s.text(1),
                            .email_id = s.text(2),
                            .subject = s.text(3),
                            .from_email = s.text(4),
                            .from_name = s.text(5),
                            .total_recipients = static_cast<int>(s.int64(6)),
                            .created_at = s.int64(7)};
        };
        if (indexed) return indexed_search<Envelope>(db, q, select, false, read);
        return search<Envelope>(db, q, select, "FROM emails e", false, read);
    });
}

// One writer: no claim runs while this job does, so the leases it reads stay as they are
// until its commit.
asio::awaitable<Result<void>> SqliteStore::change_email_locked(std::string account_id,
                                                               std::string email_id,
                                                               EmailDecision decide) {
    struct Wrote {
        bool events = false;
        bool due = false;  // a recipient left open: delivery may have work
    };
    auto job = [account_id = std::move(account_id), email_id = std::move(email_id),
                decide = std::move(decide)](Db& db) -> Result<Wrote> {
        auto e = email_where(db, "e.account_id = ?1 AND e.id = ?2", account_id, email_id, true);
        if (!e) return e.error();
        const auto change = decide(*e);
        if (!change) return Wrote{};
        if (auto w = write_change(db, *e, *change); !w) return w.error();
        Wrote out{.events = !change->events.empty() || !change->suppressions.empty()};
        for (const auto& rc : change->recipients)
            out.due = out.due || rc.status == domain::RecipientStatus::queued;
        return out;
    };
    auto r = co_await impl_->writer.write<Wrote>(std::move(job));
    if (!r) co_return r.error();
    if (r->events) impl_->events_written();
    if (r->due && impl_->queue_listener) impl_->queue_listener();
    co_return Result<void>{};
}

asio::awaitable<Result<std::vector<Email>>> SqliteStore::scheduled_due(UnixMs now, int limit) {
    return impl_->read([now, limit](Db& db) -> Result<std::vector<Email>> {
        auto s = db.prepare(std::string("SELECT ") + kEmailColumns +
                            " FROM emails e WHERE e.status = ?1 AND e.scheduled_at IS NOT NULL "
                            "AND e.scheduled_at <= ?2 ORDER BY e.status, e.scheduled_at LIMIT ?3");
        if (!s) return s.error();
        s->bind(1, std::string(domain::name(domain::EmailStatus::scheduled)))
            .bind(2, now)
            .bind(3, limit);
        std::vector<Email> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return out;
            out.push_back(read_email(*s));
        }
    });
}

}  // namespace posthorn::store::sqlite
