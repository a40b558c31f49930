// SqliteStore: mail received for the users' domains.
#include "core/id.hpp"
#include "store/sqlite/detail/impl.hpp"
#include "store/sqlite/detail/indexed_list.hpp"

namespace posthorn::store::sqlite {
namespace {

constexpr const char* kInboundColumns =
    "i.id, i.account_id, COALESCE(i.domain_id, ''), i.from_email, COALESCE(i.from_name, ''), "
    "i.to_address, i.subject, COALESCE(i.reply_to, ''), COALESCE(i.cc, 'null'), "
    "COALESCE(i.bcc, 'null'), i.received_at, COALESCE(i.authentication, 'null')";

InboundEmail read_inbound(const Stmt& s) {
    return InboundEmail{.id = s.text(0),
                        .account_id = s.text(1),
                        .domain_id = s.text(2),
                        .from_email = s.text(3),
                        .from_name = s.text(4),
                        .to_address = s.text(5),
                        .subject = s.text(6),
                        .reply_to = s.text(7),
                        .cc_json = s.text(8),
                        .bcc_json = s.text(9),
                        .authentication_json = s.text(11),
                        .received_at = s.int64(10)};
}

Result<void> attachments_of(Db& db, InboundEmail& e) {
    auto a = db.prepare(
        "SELECT idx, COALESCE(filename, ''), content_type, size, COALESCE(content_id, '') "
        "FROM inbound_attachments WHERE inbound_id = ?1 ORDER BY idx");
    if (!a) return a.error();
    a->bind(1, e.id);
    for (;;) {
        auto row = a->step();
        if (!row) return row.error();
        if (!*row) return {};
        e.attachments.push_back({.index = static_cast<int>(a->int64(0)),
                                 .filename = a->text(1),
                                 .content_type = a->text(2),
                                 .size = a->int64(3),
                                 .content_id = a->text(4)});
    }
}

}  // namespace

asio::awaitable<Result<std::vector<Domain>>> SqliteStore::inbound_domains(std::string name) {
    auto job = [name = std::move(name)](Db& db) -> Result<std::vector<Domain>> {
        auto s = db.prepare(
            "SELECT id, account_id, status, inbound FROM domains WHERE name = ?1 "
            "ORDER BY created_at");
        if (!s) return s.error();
        s->bind(1, name);
        std::vector<Domain> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return out;
            out.push_back(
                Domain{.id = s->text(0),
                       .account_id = s->text(1),
                       .name = name,
                       .status = detail::read_name(s->text(2), domain::DomainStatus::not_started),
                       .inbound = s->int64(3) != 0});
        }
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::create_inbound(std::vector<InboundEmail> emails,
                                                          std::vector<Event> events) {
    const bool any_events = !events.empty();
    auto job = [emails = std::move(emails), events = std::move(events)](Db& db) -> Result<void> {
        for (const auto& e : emails) {
            auto s = db.prepare(
                "INSERT INTO inbound_emails (id, account_id, domain_id, from_email, from_name, "
                "to_address, subject, reply_to, cc, bcc, raw, received_at, authentication) VALUES "
                "(?1, ?2, ?3, "
                "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
            if (!s) return s.error();
            auto opt = [](const std::string& v) {
                return v.empty() || v == "null" ? std::optional<std::string>{} : v;
            };
            auto r = s->bind(1, e.id)
                         .bind(2, e.account_id)
                         .bind(3, e.domain_id)
                         .bind(4, e.from_email)
                         .bind(5, opt(e.from_name))
                         .bind(6, e.to_address)
                         .bind(7, e.subject)
                         .bind(8, opt(e.reply_to))
                         .bind(9, opt(e.cc_json))
                         .bind(10, opt(e.bcc_json))
                         .bind_blob(11, e.raw)
                         .bind(12, e.received_at)
                         .bind(13, opt(e.authentication_json))
                         .run();
            if (!r) return r;
            auto count = db.prepare(
                "INSERT INTO inbound_counts (account_id, n) VALUES (?1, 1) "
                "ON CONFLICT (account_id) DO UPDATE SET n = n + 1");
            if (!count) return count.error();
            if (auto cr = count->bind(1, e.account_id).run(); !cr) return cr;
            for (const auto& a : e.attachments) {
                auto as = db.prepare(
                    "INSERT INTO inbound_attachments (inbound_id, idx, filename, content_type, "
                    "size, content_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
                if (!as) return as.error();
                auto ar = as->bind(1, e.id)
                              .bind(2, a.index)
                              .bind(3, opt(a.filename))
                              .bind(4, a.content_type)
                              .bind(5, a.size)
                              .bind(6, opt(a.content_id))
                              .run();
                if (!ar) return ar;
            }
        }
        for (const auto& ev : events)
            if (auto r = insert_event(db, ev); !r) return r;
        return {};
    };
    auto r = co_await impl_->writer.write<void>(std::move(job));
    if (r && any_events) impl_->events_written();
    if (r && impl_->search_index) impl_->search_index->poke();
    co_return r;
}

asio::awaitable<Result<Page<InboundEmail>>> SqliteStore::list_inbound(SearchQuery q) {
    // A search of three characters or more in the order of time goes by the index
    // (detail/search_index.hpp) for the inbound emails it holds, and scans the rest.
    const bool indexed = impl_->search_index && q.search && detail::indexable(*q.search) &&
                         q.sort_by == "received_at";
    auto job = [q = std::move(q), indexed](Db& db) -> Result<Page<InboundEmail>> {
        std::string where = " FROM inbound_emails i WHERE i.account_id = ?1";
        if (q.start) where += " AND i.received_at >= ?2";
        if (q.end) where += " AND i.received_at <= ?3";
        if (q.search)
            where +=
                " AND (i.from_email LIKE ?4 ESCAPE '\\' OR COALESCE(i.from_name, '') LIKE ?4 "
                "ESCAPE '\\' OR i.to_address LIKE ?4 ESCAPE '\\' OR i.subject LIKE ?4 "
                "ESCAPE '\\')";
        std::string column = "received_at";
        if (q.sort_by == "subject" || q.sort_by == "from_email") column = q.sort_by;
        const char* dir = q.order == SortOrder::asc ? " ASC" : " DESC";
        const std::string order = " ORDER BY i." + column + dir + ", i.id" + dir;
        auto bind = [&](Stmt& s) {
            s.bind(1, q.account_id);
            if (q.start) s.bind(2, *q.start);
            if (q.end) s.bind(3, *q.end);
            if (q.search) s.bind(4, detail::like_pattern(*q.search));
        };
        Page<InboundEmail> page;
        if (indexed) {
            auto mark = db.prepare("SELECT value FROM search.marks WHERE name = 'inbound'");
            if (!mark) return mark.error();
            auto mrow = mark->step();
            if (!mrow) return mrow.error();
            const std::int64_t through = *mrow ? mark->int64(0) : 0;
            std::vector<detail::TailRow> tail;
            // Driven by the rows above the mark (CROSS JOIN keeps them the outer loop).
            auto t = db.prepare(
                "SELECT i.received_at, i.id FROM (SELECT rowid AS r FROM inbound_emails "
                "WHERE rowid > ?9) AS tail CROSS JOIN" +
                where.substr(std::string(" FROM").size()) + " AND i.rowid = tail.r" + order);
            if (!t) return t.error();
            bind(*t);
            t->bind(9, through);
            for (;;) {
                auto row = t->step();
                if (!row) return row.error();
                if (!*row) break;
                tail.emplace_back(t->int64(0), t->text(1));
            }
            auto found = detail::indexed_page(db, detail::kInboundBySenderRecipientOrSubject,
                                              {.account_id = q.account_id,
                                               .needle = *q.search,
                                               .start = q.start,
                                               .end = q.end,
                                               .descending = q.order != SortOrder::asc,
                                               .offset = (q.page - 1) * q.limit,
                                               .limit = q.limit},
                                              tail);
            if (!found) return found.error();
            page.total = found->total;
            for (const auto& id : found->ids) {
                auto one =
                    db.prepare(std::string("SELECT ") + kInboundColumns +
                               " FROM inbound_emails i WHERE i.account_id = ?1 AND i.id = ?2");
                if (!one) return one.error();
                one->bind(1, q.account_id).bind(2, id);
                auto row = one->step();
                if (!row) return row.error();
                if (*row) page.items.push_back(read_inbound(*one));
            }
            for (auto& e : page.items)
                if (auto r = attachments_of(db, e); !r) return r.error();
            return page;
        }
        {
            // Without a filter, the account's kept count (migration 014); otherwise counted.
            const bool unfiltered = !q.search && !q.start && !q.end;
            auto c =
                db.prepare(unfiltered ? std::string("SELECT COALESCE((SELECT n FROM "
                                                    "inbound_counts WHERE account_id = ?1), 0)")
                                      : "SELECT COUNT(*)" + where);
            if (!c) return c.error();
            if (unfiltered)
                c->bind(1, q.account_id);
            else
                bind(*c);
            auto row = c->step();
            if (!row) return row.error();
            page.total = c->int64(0);
        }
        auto s = db.prepare(std::string("SELECT ") + kInboundColumns + where + order +
                            " LIMIT ?5 OFFSET ?6");
        if (!s) return s.error();
        bind(*s);
        s->bind(5, q.limit).bind(6, (q.page - 1) * q.limit);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            page.items.push_back(read_inbound(*s));
        }
        for (auto& e : page.items)
            if (auto r = attachments_of(db, e); !r) return r.error();
        return page;
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<InboundEmail>> SqliteStore::find_inbound(std::string account_id,
                                                                std::string id) {
    auto job = [account_id = std::move(account_id),
                id = std::move(id)](Db& db) -> Result<InboundEmail> {
        auto s = db.prepare(std::string("SELECT ") + kInboundColumns +
                            ", i.raw FROM inbound_emails i WHERE i.account_id = ?1 AND i.id = ?2");
        if (!s) return s.error();
        s->bind(1, account_id).bind(2, id);
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return errc::not_found;
        auto e = read_inbound(*s);
        e.raw = s->text(12);
        if (auto r = attachments_of(db, e); !r) return r.error();
        return e;
    };
    co_return co_await impl_->read(std::move(job));
}

}  // namespace posthorn::store::sqlite
