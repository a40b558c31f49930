// PgStore: the suppression list — an account's reads and changes of it (the API), and the
// entries delivery's outcomes add (write_change, through insert_suppression).
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {

namespace {

constexpr const char* kSuppressionColumns =
    "account_id, address, reason, coalesce(source_email_id, ''), created_at";

Suppression read_suppression(const Row& r) {
    return Suppression{.account_id = r.text(0),
                       .address = r.text(1),
                       .reason = detail::read_name(r.text(2), domain::SuppressionReason::manual),
                       .email_id = r.text(3),
                       .created_at = r.int64(4)};
}

// `lock`: FOR UPDATE, so that a removal racing another on another node finds the entry
// gone once the first commits.
Result<Suppression> one_suppression(Conn& c, const std::string& account_id,
                                    const std::string& address, bool lock = false) {
    auto rows = c.exec(std::string("SELECT ") + kSuppressionColumns +
                           " FROM suppressions WHERE account_id = $1 AND address = $2" +
                           (lock ? " FOR UPDATE" : ""),
                       Params().add(account_id).add(address));
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    return read_suppression(rows->row(0));
}

// The filters of a list: $1 the account, $2 a substring of the address (NULL: any), $3 the
// reason (NULL: any). The addresses are lower-case, and so is the search (the API's).
constexpr const char* kListWhere =
    " FROM suppressions WHERE account_id = $1 AND ($2::text IS NULL OR strpos(address, $2) > 0) "
    "AND ($3::text IS NULL OR reason = $3)";

Params filters(const SuppressionQuery& q) {
    Params p;
    p.add(q.account_id).add(q.search);
    if (q.reason)
        p.add(domain::name(*q.reason));
    else
        p.null(detail::Type::text);
    return p;
}

}  // namespace

namespace detail {

Result<bool> insert_suppression(Conn& c, Batch& b, const SuppressionAdd& add) {
    const auto& e = add.entry;
    // An address the account suppresses already keeps its entry, and raises nothing.
    auto rows = c.exec(
        "INSERT INTO suppressions (account_id, address, reason, source_email_id, created_at) "
        "VALUES ($1, $2, $3, nullif($4, ''), $5) ON CONFLICT DO NOTHING RETURNING 1",
        Params()
            .add(e.account_id)
            .add(e.address)
            .add(domain::name(e.reason))
            .add(e.email_id)
            .add(e.created_at));
    if (!rows) return fail<bool>(rows.error());
    if (rows->empty()) return Result<bool>(false);
    if (auto r = insert_event(c, b, add.event); !r) return fail<bool>(r.error());
    return Result<bool>(true);
}

}  // namespace detail

asio::awaitable<Result<Page<Suppression>>> PgStore::list_suppressions(SuppressionQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) -> Result<Page<Suppression>> {
        Page<Suppression> page;
        auto counted = c.exec(std::string("SELECT count(*)") + kListWhere, filters(q));
        if (!counted) return counted.error();
        page.total = counted->row(0).int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, address ASC"
                                                      : " ORDER BY created_at DESC, address DESC";
        auto p = filters(q);
        p.add(q.limit).add((q.page - 1) * q.limit);
        auto rows = c.exec(std::string("SELECT ") + kSuppressionColumns + kListWhere + order +
                               " LIMIT $4 OFFSET $5",
                           p);
        if (!rows) return rows.error();
        page.items = rows->map(read_suppression);
        return page;
    });
}

asio::awaitable<Result<Suppression>> PgStore::find_suppression(std::string account_id,
                                                               std::string address) {
    return impl_->read([account_id = std::move(account_id), address = std::move(address)](
                           Conn& c) { return one_suppression(c, account_id, address); },
                       false);
}

asio::awaitable<Result<SuppressionAdded>> PgStore::add_suppression(SuppressionAdd add) {
    auto job = [add = std::move(add)](Conn& c, Batch& b) -> Result<SuppressionAdded> {
        auto added = detail::insert_suppression(c, b, add);
        if (!added) return added.error();
        if (*added) return SuppressionAdded{.entry = add.entry, .added = true};
        auto held = one_suppression(c, add.entry.account_id, add.entry.address);
        if (!held) return held.error();
        return SuppressionAdded{.entry = std::move(*held), .added = false};
    };
    auto r = co_await impl_->writer.write<SuppressionAdded>(std::move(job));
    if (r && r->added) impl_->events_written();
    co_return r;
}

asio::awaitable<Result<Suppression>> PgStore::remove_suppression(std::string account_id,
                                                                 std::string address,
                                                                 SuppressionRemoval removal) {
    auto job = [account_id = std::move(account_id), address = std::move(address),
                removal = std::move(removal)](Conn& c, Batch& b) -> Result<Suppression> {
        auto held = one_suppression(c, account_id, address, true);
        if (!held) return held.error();
        auto r = c.exec("DELETE FROM suppressions WHERE account_id = $1 AND address = $2",
                        Params().add(account_id).add(address));
        if (!r) return r.error();
        if (auto e = detail::insert_event(c, b, removal(*held)); !e) return e.error();
        return held;
    };
    auto r = co_await impl_->writer.write<Suppression>(std::move(job));
    if (r) impl_->events_written();
    co_return r;
}

}  // namespace posthorn::store::pg
