// SqliteStore: the suppression list — an account's reads and changes of it (the API), and
// the entries delivery's outcomes add (write_change, through insert_suppression).
#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {

namespace {

constexpr const char* kSuppressionColumns =
    "account_id, address, reason, coalesce(source_email_id, ''), created_at";

Suppression read_suppression(const Stmt& s) {
    return Suppression{.account_id = s.text(0),
                       .address = s.text(1),
                       .reason = detail::read_name(s.text(2), domain::SuppressionReason::manual),
                       .email_id = s.text(3),
                       .created_at = s.int64(4)};
}

Result<Suppression> one_suppression(Db& db, const std::string& account_id,
                                    const std::string& address) {
    auto s = db.prepare(std::string("SELECT ") + kSuppressionColumns +
                        " FROM suppressions WHERE account_id = ?1 AND address = ?2");
    if (!s) return s.error();
    s->bind_ref(1, account_id).bind_ref(2, address);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    return read_suppression(*s);
}

// The filters of a list: ?1 the account, ?2 a substring of the address (NULL: any), ?3 the
// reason (NULL: any). The addresses are lower-case, and so is the search (the API's).
constexpr const char* kListWhere =
    " FROM suppressions WHERE account_id = ?1 AND (?2 IS NULL OR instr(address, ?2) > 0) "
    "AND (?3 IS NULL OR reason = ?3)";

void bind_filters(Stmt& s, const SuppressionQuery& q) {
    s.bind_ref(1, q.account_id).bind(2, q.search);
    if (q.reason) s.bind_ref(3, domain::name(*q.reason));
}

}  // namespace

namespace detail {

Result<bool> insert_suppression(Db& db, const SuppressionAdd& add) {
    using R = Result<bool>;  // a bool and an error code would be ambiguous
    const auto& e = add.entry;
    // An address the account suppresses already keeps its entry, and raises nothing.
    auto s = db.prepare(
        "INSERT OR IGNORE INTO suppressions (account_id, address, reason, source_email_id, "
        "created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!s) return R(boost::system::in_place_error, s.error());
    if (auto r = s->bind_ref(1, e.account_id)
                     .bind_ref(2, e.address)
                     .bind_ref(3, domain::name(e.reason))
                     .bind(4, e.email_id.empty() ? std::optional<std::string>{} : e.email_id)
                     .bind(5, e.created_at)
                     .run();
        !r)
        return R(boost::system::in_place_error, r.error());
    if (db.changes() == 0) return R(false);
    if (auto r = insert_event(db, add.event); !r)
        return R(boost::system::in_place_error, r.error());
    return R(true);
}

}  // namespace detail

asio::awaitable<Result<Page<Suppression>>> SqliteStore::list_suppressions(SuppressionQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<Page<Suppression>> {
        Page<Suppression> page;
        auto c = db.prepare(std::string("SELECT count(*)") + kListWhere);
        if (!c) return c.error();
        bind_filters(*c, q);
        auto counted = c->step();
        if (!counted) return counted.error();
        page.total = c->int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, address ASC"
                                                      : " ORDER BY created_at DESC, address DESC";
        auto s = db.prepare(std::string("SELECT ") + kSuppressionColumns + kListWhere + order +
                            " LIMIT ?4 OFFSET ?5");
        if (!s) return s.error();
        bind_filters(*s, q);
        s->bind(4, q.limit).bind(5, (q.page - 1) * q.limit);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return page;
            page.items.push_back(read_suppression(*s));
        }
    });
}

asio::awaitable<Result<Suppression>> SqliteStore::find_suppression(std::string account_id,
                                                                   std::string address) {
    return impl_->read([account_id = std::move(account_id), address = std::move(address)](Db& db) {
        return one_suppression(db, account_id, address);
    });
}

asio::awaitable<Result<SuppressionAdded>> SqliteStore::add_suppression(SuppressionAdd add) {
    auto job = [add = std::move(add)](Db& db) -> Result<SuppressionAdded> {
        auto added = detail::insert_suppression(db, add);
        if (!added) return added.error();
        if (*added) return SuppressionAdded{.entry = add.entry, .added = true};
        auto held = one_suppression(db, add.entry.account_id, add.entry.address);
        if (!held) return held.error();
        return SuppressionAdded{.entry = std::move(*held), .added = false};
    };
    auto r = co_await impl_->writer.write<SuppressionAdded>(std::move(job));
    if (r && r->added) impl_->events_written();
    co_return r;
}

asio::awaitable<Result<Suppression>> SqliteStore::remove_suppression(std::string account_id,
                                                                     std::string address,
                                                                     SuppressionRemoval removal) {
    auto job = [account_id = std::move(account_id), address = std::move(address),
                removal = std::move(removal)](Db& db) -> Result<Suppression> {
        auto held = one_suppression(db, account_id, address);
        if (!held) return held.error();
        auto s = db.prepare("DELETE FROM suppressions WHERE account_id = ?1 AND address = ?2");
        if (!s) return s.error();
        if (auto r = s->bind_ref(1, account_id).bind_ref(2, address).run(); !r) return r.error();
        if (auto r = insert_event(db, removal(*held)); !r) return r.error();
        return held;
    };
    auto r = co_await impl_->writer.write<Suppression>(std::move(job));
    if (r) impl_->events_written();
    co_return r;
}

}  // namespace posthorn::store::sqlite
