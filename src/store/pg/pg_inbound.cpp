// PgStore: mail received for the users' domains.
#include <map>

#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

constexpr const char* kInboundColumns =
    "i.id, i.account_id, coalesce(i.domain_id, ''), i.from_email, coalesce(i.from_name, ''), "
    "i.to_address, i.subject, coalesce(i.reply_to, ''), coalesce(i.cc, 'null'), "
    "coalesce(i.bcc, 'null'), i.received_at, coalesce(i.authentication, 'null')";

InboundEmail read_inbound(const Row& r) {
    return InboundEmail{.id = r.text(0),
                        .account_id = r.text(1),
                        .domain_id = r.text(2),
                        .from_email = r.text(3),
                        .from_name = r.text(4),
                        .to_address = r.text(5),
                        .subject = r.text(6),
                        .reply_to = r.text(7),
                        .cc_json = r.text(8),
                        .bcc_json = r.text(9),
                        .authentication_json = r.text(11),
                        .received_at = r.int64(10)};
}

// The attachments of `emails`, each to its own, in the order of their indexes.
Result<void> attachments_of(Conn& c, std::vector<InboundEmail>& emails) {
    if (emails.empty()) return {};
    std::vector<std::string_view> ids;
    std::map<std::string, InboundEmail*> by_id;
    for (auto& e : emails) {
        ids.emplace_back(e.id);
        by_id[e.id] = &e;
    }
    auto rows = c.exec(
        "SELECT inbound_id, idx, coalesce(filename, ''), content_type, size, "
        "coalesce(content_id, '') FROM inbound_attachments WHERE inbound_id = ANY ($1::text[]) "
        "ORDER BY inbound_id, idx",
        Params().texts(ids));
    if (!rows) return rows.error();
    for (int i = 0; i < rows->size(); ++i) {
        const auto r = rows->row(i);
        auto it = by_id.find(r.text(0));
        if (it == by_id.end()) continue;
        it->second->attachments.push_back({.index = r.int32(1),
                                           .filename = r.text(2),
                                           .content_type = r.text(3),
                                           .size = r.int64(4),
                                           .content_id = r.text(5)});
    }
    return {};
}

// An empty value, or a JSON null, is stored as NULL.
std::optional<std::string_view> opt(const std::string& v) {
    if (v.empty() || v == "null") return std::nullopt;
    return std::string_view(v);
}

}  // namespace

asio::awaitable<Result<std::vector<Domain>>> PgStore::inbound_domains(std::string name) {
    auto job = [name = std::move(name)](Conn& c) -> Result<std::vector<Domain>> {
        auto rows = c.exec(
            "SELECT id, account_id, status, inbound FROM domains WHERE name = $1 "
            "ORDER BY created_at, id",
            Params().add(name));
        if (!rows) return rows.error();
        std::vector<Domain> out;
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            out.push_back(
                Domain{.id = r.text(0),
                       .account_id = r.text(1),
                       .name = name,
                       .status = detail::read_name(r.text(2), domain::DomainStatus::not_started),
                       .inbound = r.boolean(3)});
        }
        return out;
    };
    co_return co_await impl_->read(std::move(job), false);
}

asio::awaitable<Result<void>> PgStore::create_inbound(std::vector<InboundEmail> emails,
                                                      std::vector<Event> events) {
    const bool any_events = !events.empty();
    auto job = [emails = std::move(emails), events = std::move(events)](Conn& c,
                                                                        Batch& b) -> Result<void> {
        for (const auto& e : emails) {
            auto r = c.exec(
                "INSERT INTO inbound_emails (id, account_id, domain_id, from_email, from_name, "
                "to_address, subject, reply_to, cc, bcc, raw, received_at, authentication) VALUES "
                "($1, $2, "
                "nullif($3, ''), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                Params()
                    .add(e.id)
                    .add(e.account_id)
                    .add(e.domain_id)
                    .add(e.from_email)
                    .add(opt(e.from_name))
                    .add(e.to_address)
                    .add(e.subject)
                    .add(opt(e.reply_to))
                    .add(opt(e.cc_json))
                    .add(opt(e.bcc_json))
                    .bytes(e.raw)
                    .add(e.received_at)
                    .add(opt(e.authentication_json)));
            if (!r) return r.error();
            for (const auto& a : e.attachments) {
                auto ar = c.exec(
                    "INSERT INTO inbound_attachments (inbound_id, idx, filename, content_type, "
                    "size, content_id) VALUES ($1, $2, $3, $4, $5, $6)",
                    Params()
                        .add(e.id)
                        .add(a.index)
                        .add(opt(a.filename))
                        .add(a.content_type)
                        .add(a.size)
                        .add(opt(a.content_id)));
                if (!ar) return ar.error();
            }
        }
        for (const auto& ev : events)
            if (auto r = detail::insert_event(c, b, ev); !r) return r;
        return {};
    };
    auto r = co_await impl_->writer.write<void>(std::move(job));
    if (r && any_events) impl_->events_written();
    co_return r;
}

asio::awaitable<Result<Page<InboundEmail>>> PgStore::list_inbound(SearchQuery q) {
    auto job = [q = std::move(q)](Conn& c) -> Result<Page<InboundEmail>> {
        Params p;
        std::string where = " FROM inbound_emails i WHERE i.account_id = " + p.arg(q.account_id);
        if (q.start) where += " AND i.received_at >= " + p.arg(*q.start);
        if (q.end) where += " AND i.received_at <= " + p.arg(*q.end);
        if (q.search) {
            const auto pattern = p.arg(detail::like_pattern(*q.search));
            where += " AND (i.from_email ILIKE " + pattern + " OR i.from_name ILIKE " + pattern +
                     " OR i.to_address ILIKE " + pattern + " OR i.subject ILIKE " + pattern + ")";
        }
        std::string column = "received_at";
        if (q.sort_by == "subject" || q.sort_by == "from_email") column = q.sort_by;
        const char* dir = q.order == SortOrder::asc ? " ASC" : " DESC";
        const std::string order = " ORDER BY i." + column + dir + ", i.id" + dir;
        Page<InboundEmail> page;
        auto total = c.exec("SELECT count(*)" + where, p);
        if (!total) return total.error();
        page.total = total->row(0).int64(0);
        const auto limit = p.arg(q.limit);
        const auto offset = p.arg((q.page - 1) * q.limit);
        auto rows = c.exec(std::string("SELECT ") + kInboundColumns + where + order + " LIMIT " +
                               limit + " OFFSET " + offset,
                           p);
        if (!rows) return rows.error();
        page.items = rows->map(read_inbound);
        if (auto r = attachments_of(c, page.items); !r) return r.error();
        return page;
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<InboundEmail>> PgStore::find_inbound(std::string account_id,
                                                            std::string id) {
    auto job = [account_id = std::move(account_id),
                id = std::move(id)](Conn& c) -> Result<InboundEmail> {
        // By the primary key alone, and the account compared here, as detail::email_by_id.
        auto rows = c.exec(std::string("SELECT ") + kInboundColumns +
                               ", i.raw FROM inbound_emails i WHERE i.id = $1",
                           Params().add(id));
        if (!rows) return rows.error();
        if (rows->empty()) return errc::not_found;
        std::vector<InboundEmail> one{read_inbound(rows->row(0))};
        if (one[0].account_id != account_id) return errc::not_found;
        one[0].raw = rows->row(0).text(12);
        if (auto r = attachments_of(c, one); !r) return r.error();
        return std::move(one[0]);
    };
    co_return co_await impl_->read(std::move(job));
}

}  // namespace posthorn::store::pg
