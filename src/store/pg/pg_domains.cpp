// PgStore: domains, their DKIM keys and their verification outcomes; the outbox's events.
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {

namespace detail {

Result<void> insert_event(Conn& c, Batch& b, const Event& e) {
    auto r = c.queue(
        "INSERT INTO events (id, account_id, type, email_id, data, created_at) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        Params()
            .add(e.id)
            .add(e.account_id)
            .add(domain::name(e.kind))
            .add(e.email_id)
            .add(e.data_json)
            .add(e.created_at));
    if (r) return r;
    b.notify(kEventChannel);
    return {};
}

}  // namespace detail

namespace {

constexpr const char* kDomainColumns =
    "id, account_id, name, status, token, sending, inbound, open_tracking, click_tracking, "
    "records, first_verify_at, last_checked_at, next_check_at, verified_at, created_at, "
    "updated_at, dkim_selector, dkim_pending, dkim_rotated_at, tracking_label, "
    "return_path_label, return_path_verified";

Domain read_domain(const Row& r) {
    return Domain{.id = r.text(0),
                  .account_id = r.text(1),
                  .name = r.text(2),
                  .status = detail::read_name(r.text(3), domain::DomainStatus::not_started),
                  .token = r.text(4),
                  .sending = r.boolean(5),
                  .inbound = r.boolean(6),
                  .open_tracking = r.boolean(7),
                  .click_tracking = r.boolean(8),
                  .records_json = r.text(9),
                  .first_verify_at = r.opt_int64(10),
                  .last_checked_at = r.opt_int64(11),
                  .next_check_at = r.opt_int64(12),
                  .verified_at = r.opt_int64(13),
                  .created_at = r.int64(14),
                  .updated_at = r.int64(15),
                  .dkim_selector = r.text(16),
                  .dkim_pending = r.opt_text(17).value_or(""),
                  .dkim_rotated_at = r.opt_int64(18),
                  .tracking_label = r.text(19),
                  .return_path_label = r.text(20),
                  .return_path_verified = r.boolean(21)};
}

Result<std::vector<Domain>> read_domains(const Result<Rows>& rows) {
    if (!rows) return rows.error();
    return rows->map(read_domain);
}

Result<Domain> one_domain(Conn& c, const char* where, const std::string& account_id,
                          const std::string& value) {
    auto rows = c.exec(std::string("SELECT ") + kDomainColumns +
                           " FROM domains WHERE account_id = $1 AND " + where,
                       Params().add(account_id).add(value));
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    return read_domain(rows->row(0));
}

// Whether an UPDATE found its row.
Result<void> found(const Result<Rows>& r) {
    if (!r) return r.error();
    if (r->affected() == 0) return errc::not_found;
    return {};
}

}  // namespace

asio::awaitable<Result<void>> PgStore::create_domain(Domain d, std::vector<DkimKey> keys) {
    // The domain and its keys in one job: a name taken already (errc::conflict) keeps none.
    auto job = [d = std::move(d), keys = std::move(keys)](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec(
            "INSERT INTO domains (id, account_id, name, status, token, sending, inbound, "
            "open_tracking, click_tracking, records, created_at, updated_at, dkim_selector, "
            "tracking_label, return_path_label) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
            "$11, $12, $13, $14, $15)",
            Params()
                .add(d.id)
                .add(d.account_id)
                .add(d.name)
                .add(domain::name(d.status))
                .add(d.token)
                .add(d.sending)
                .add(d.inbound)
                .add(d.open_tracking)
                .add(d.click_tracking)
                .add(d.records_json)
                .add(d.created_at)
                .add(d.updated_at)
                .add(d.dkim_selector)
                .add(d.tracking_label)
                .add(d.return_path_label));
        if (!r) return r.error();
        for (const auto& k : keys) {
            auto kr = c.exec(
                "INSERT INTO dkim_keys (id, domain_id, selector, private_key, public_key, active, "
                "created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                Params()
                    .add(k.id)
                    .add(d.id)
                    .add(k.selector)
                    .bytes(k.sealed_private_key)
                    .add(k.public_key)
                    .add(k.active)
                    .add(k.created_at));
            if (!kr) return kr.error();
        }
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<Domain>> PgStore::find_domain_by_id(std::string account_id, std::string id) {
    return impl_->read([account_id = std::move(account_id), id = std::move(id)](
                           Conn& c) { return one_domain(c, "id = $2", account_id, id); },
                       false);
}

asio::awaitable<Result<Domain>> PgStore::find_domain_by_name(std::string account_id,
                                                             std::string name) {
    // Cached until a change of a key or a domain on any node (Impl::read_cached).
    std::string key = account_id + '\0' + name;
    return impl_->read_cached(
        impl_->domains, std::move(key),
        [account_id = std::move(account_id), name = std::move(name)](Conn& c) {
            return one_domain(c, "name = $2", account_id, name);
        });
}

asio::awaitable<Result<Page<Domain>>> PgStore::list_domains(ListQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) -> Result<Page<Domain>> {
        Page<Domain> page;
        auto total = c.exec("SELECT count(*) FROM domains WHERE account_id = $1",
                            Params().add(q.account_id));
        if (!total) return total.error();
        page.total = total->row(0).int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, id ASC"
                                                      : " ORDER BY created_at DESC, id DESC";
        auto items = read_domains(
            c.exec(std::string("SELECT ") + kDomainColumns + " FROM domains WHERE account_id = $1" +
                       order + " LIMIT $2 OFFSET $3",
                   Params().add(q.account_id).add(q.limit).add((q.page - 1) * q.limit)));
        if (!items) return items.error();
        page.items = std::move(*items);
        return page;
    });
}

asio::awaitable<Result<void>> PgStore::update_domain_settings(std::string account_id,
                                                              std::string domain_id,
                                                              DomainSettings st, UnixMs now) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id), st, now](
                   Conn& c, Batch&) -> Result<void> {
        // An unset setting is NULL, and keeps the column's value.
        return found(
            c.exec("UPDATE domains SET sending = coalesce($3, sending), "
                   "inbound = coalesce($4, inbound), open_tracking = coalesce($5, open_tracking), "
                   "click_tracking = coalesce($6, click_tracking), updated_at = $7, "
                   "tracking_label = coalesce($8::text, tracking_label), "
                   "records = coalesce($9::text, records), "
                   "return_path_label = coalesce($10::text, return_path_label), "
                   "return_path_verified = ($10::text IS NULL AND return_path_verified) "
                   "WHERE account_id = $1 AND id = $2",
                   Params()
                       .add(account_id)
                       .add(domain_id)
                       .add(st.sending)
                       .add(st.inbound)
                       .add(st.open_tracking)
                       .add(st.click_tracking)
                       .add(now)
                       .add(st.tracking_label)
                       .add(st.records_json)
                       .add(st.return_path_label)));
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> PgStore::delete_domain(std::string account_id,
                                                     std::string domain_id) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id)](
                   Conn& c, Batch&) -> Result<void> {
        // The keys go with it (ON DELETE CASCADE); emails and inbound emails keep their rows,
        // their domain_id set to NULL (ON DELETE SET NULL).
        return found(c.exec("DELETE FROM domains WHERE account_id = $1 AND id = $2",
                            Params().add(account_id).add(domain_id)));
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> PgStore::record_domain_check(DomainCheck check) {
    const bool any_event = check.event.has_value();
    auto job = [c = std::move(check)](Conn& conn, Batch& b) -> Result<void> {
        auto r = found(conn.exec(
            "UPDATE domains SET status = $3, records = $4, last_checked_at = $5, "
            "next_check_at = $6, first_verify_at = $7, verified_at = $8, updated_at = $5, "
            "return_path_verified = (return_path_label = $9 AND $10) "
            "WHERE account_id = $1 AND id = $2",
            Params()
                .add(c.account_id)
                .add(c.domain_id)
                .add(domain::name(c.status))
                .add(c.records_json)
                .add(c.checked_at)
                .add(c.next_check_at)
                .add(c.first_verify_at)
                .add(c.verified_at)
                .add(c.return_path_label)
                .add(c.return_path_verified)));
        if (!r) return r;
        if (c.event) return detail::insert_event(conn, b, *c.event);
        return {};
    };
    auto r = co_await impl_->write_lookups<void>(std::move(job));
    if (r && any_event) impl_->events_written();
    co_return r;
}

asio::awaitable<Result<void>> PgStore::postpone_domain_check(std::string account_id,
                                                             std::string domain_id,
                                                             UnixMs next_check_at) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id),
                next_check_at](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec("UPDATE domains SET next_check_at = $3 WHERE account_id = $1 AND id = $2",
                        Params().add(account_id).add(domain_id).add(next_check_at));
        if (!r) return r.error();
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<std::vector<Domain>>> PgStore::domains_due(UnixMs now, int limit) {
    return impl_->read(
        [now, limit](Conn& c) {
            return read_domains(c.exec(std::string("SELECT ") + kDomainColumns +
                                           " FROM domains WHERE next_check_at <= $1 "
                                           "ORDER BY next_check_at, id LIMIT $2",
                                       Params().add(now).add(limit)));
        },
        false);
}

asio::awaitable<Result<std::vector<DkimKey>>> PgStore::dkim_keys(std::string domain_id) {
    // Cached until a change of a key or a domain on any node (Impl::read_cached).
    std::string key = domain_id;
    return impl_->read_cached(
        impl_->dkim_keys, std::move(key),
        [domain_id = std::move(domain_id)](Conn& c) -> Result<std::vector<DkimKey>> {
            auto rows = c.exec(
                "SELECT id, domain_id, selector, private_key, public_key, active, created_at "
                "FROM dkim_keys WHERE domain_id = $1 ORDER BY selector",
                Params().add(domain_id));
            if (!rows) return rows.error();
            std::vector<DkimKey> out;
            for (int i = 0; i < rows->size(); ++i) {
                const auto r = rows->row(i);
                out.push_back(DkimKey{.id = r.text(0),
                                      .domain_id = r.text(1),
                                      .selector = r.text(2),
                                      .sealed_private_key = r.text(3),
                                      .public_key = r.text(4),
                                      .active = r.boolean(5),
                                      .created_at = r.int64(6)});
            }
            return out;
        });
}

asio::awaitable<Result<std::vector<DkimZoneEntry>>> PgStore::dkim_zone() {
    return impl_->read([](Conn& c) -> Result<std::vector<DkimZoneEntry>> {
        auto rows = c.exec(
            "SELECT k.selector, d.token, k.public_key, d.name FROM dkim_keys k "
            "JOIN domains d ON d.id = k.domain_id ORDER BY d.name, d.id, k.selector");
        if (!rows) return rows.error();
        std::vector<DkimZoneEntry> out;
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            out.push_back(DkimZoneEntry{.selector = r.text(0),
                                        .token = r.text(1),
                                        .public_key = r.text(2),
                                        .domain = r.text(3)});
        }
        return out;
    });
}

asio::awaitable<Result<void>> PgStore::start_dkim_rotation(std::string account_id,
                                                           std::string domain_id, DkimKey k) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id),
                k = std::move(k)](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec(
            "UPDATE domains SET dkim_pending = $3 "
            "WHERE account_id = $1 AND id = $2 AND dkim_pending IS NULL AND dkim_selector <> $3",
            Params().add(account_id).add(domain_id).add(k.selector));
        if (!r) return r.error();
        if (r->affected() == 0) {
            auto e = c.exec("SELECT 1 FROM domains WHERE account_id = $1 AND id = $2",
                            Params().add(account_id).add(domain_id));
            if (!e) return e.error();
            return e->empty() ? errc::not_found : errc::conflict;
        }
        auto del = c.exec("DELETE FROM dkim_keys WHERE domain_id = $1 AND selector = $2",
                          Params().add(domain_id).add(k.selector));
        if (!del) return del.error();
        auto ins = c.exec(
            "INSERT INTO dkim_keys (id, domain_id, selector, private_key, public_key, active, "
            "created_at) VALUES ($1, $2, $3, $4, $5, false, $6)",
            Params()
                .add(k.id)
                .add(domain_id)
                .add(k.selector)
                .bytes(k.sealed_private_key)
                .add(k.public_key)
                .add(k.created_at));
        if (!ins) return ins.error();
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> PgStore::finish_dkim_rotation(std::string domain_id,
                                                            std::string selector, UnixMs now) {
    auto job = [domain_id = std::move(domain_id), selector = std::move(selector), now](
                   Conn& c, Batch&) -> Result<void> {
        auto r = found(c.exec(
            "UPDATE domains SET dkim_selector = $2, dkim_pending = NULL, dkim_rotated_at = $3, "
            "updated_at = $3 WHERE id = $1 AND dkim_pending = $2",
            Params().add(domain_id).add(selector).add(now)));
        if (!r) return r;
        auto k = c.exec("UPDATE dkim_keys SET active = (selector = $2) WHERE domain_id = $1",
                        Params().add(domain_id).add(selector));
        if (!k) return k.error();
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<std::vector<Domain>>> PgStore::tracking_domains(std::string label,
                                                                       std::string name) {
    // Cached until a change of a key or a domain on any node (Impl::read_cached).
    std::string key = label + '\0' + name;
    return impl_->read_cached(
        impl_->tracking_hosts, std::move(key),
        [label = std::move(label), name = std::move(name)](Conn& c) {
            return read_domains(c.exec(std::string("SELECT ") + kDomainColumns +
                                           " FROM domains WHERE name = $1 AND tracking_label = $2"
                                           " ORDER BY created_at, id",
                                       Params().add(name).add(label)));
        });
}

asio::awaitable<Result<std::vector<Domain>>> PgStore::domains_rotating(int limit) {
    return impl_->read(
        [limit](Conn& c) {
            return read_domains(c.exec(std::string("SELECT ") + kDomainColumns +
                                           " FROM domains WHERE dkim_pending IS NOT NULL "
                                           "ORDER BY updated_at, id LIMIT $1",
                                       Params().add(limit)));
        },
        false);
}

asio::awaitable<Result<std::vector<Domain>>> PgStore::domains_with_keys_before(
    domain::DomainStatus status, UnixMs made_before, int limit) {
    return impl_->read(
        [status, made_before, limit](Conn& c) {
            return read_domains(c.exec(
                std::string("SELECT ") + kDomainColumns +
                    " FROM domains d WHERE d.status = $1 AND d.dkim_pending IS NULL AND "
                    "EXISTS (SELECT 1 FROM dkim_keys k WHERE k.domain_id = d.id AND k.active "
                    "AND k.created_at <= $2) ORDER BY d.updated_at, d.id LIMIT $3",
                Params().add(domain::name(status)).add(made_before).add(limit)));
        },
        false);
}

}  // namespace posthorn::store::pg
