// SqliteStore: domains, their DKIM keys and their verification outcomes.
#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {
namespace {

constexpr const char* kDomainColumns =
    "id, account_id, name, status, token, sending, inbound, open_tracking, click_tracking, "
    "records, first_verify_at, last_checked_at, next_check_at, verified_at, created_at, "
    "updated_at, dkim_selector, dkim_pending, dkim_rotated_at, tracking_label, "
    "return_path_label, return_path_verified";

Domain read_domain(const Stmt& s) {
    return Domain{.id = s.text(0),
                  .account_id = s.text(1),
                  .name = s.text(2),
                  .status = detail::read_name(s.text(3), domain::DomainStatus::not_started),
                  .token = s.text(4),
                  .sending = s.int64(5) != 0,
                  .inbound = s.int64(6) != 0,
                  .open_tracking = s.int64(7) != 0,
                  .click_tracking = s.int64(8) != 0,
                  .records_json = s.text(9),
                  .first_verify_at = s.opt_int64(10),
                  .last_checked_at = s.opt_int64(11),
                  .next_check_at = s.opt_int64(12),
                  .verified_at = s.opt_int64(13),
                  .created_at = s.int64(14),
                  .updated_at = s.int64(15),
                  .dkim_selector = s.text(16),
                  .dkim_pending = s.opt_text(17).value_or(""),
                  .dkim_rotated_at = s.opt_int64(18),
                  .tracking_label = s.text(19),
                  .return_path_label = s.text(20),
                  .return_path_verified = s.int64(21) != 0};
}

Result<std::vector<Domain>> read_domains(Stmt& s) {
    std::vector<Domain> out;
    for (;;) {
        auto row = s.step();
        if (!row) return row.error();
        if (!*row) return out;
        out.push_back(read_domain(s));
    }
}

Result<Domain> one_domain(Db& db, const char* where, const std::string& account_id,
                          const std::string& value) {
    auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                        " FROM domains WHERE account_id = ?1 AND " + where);
    if (!s) return s.error();
    s->bind(1, account_id).bind(2, value);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    return read_domain(*s);
}

}  // namespace

asio::awaitable<Result<void>> SqliteStore::create_domain(Domain d, std::vector<DkimKey> keys) {
    auto job = [d = std::move(d), keys = std::move(keys)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "INSERT INTO domains (id, account_id, name, status, token, sending, inbound, "
            "open_tracking, click_tracking, records, created_at, updated_at, dkim_selector, "
            "tracking_label, return_path_label) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
            "?10, ?11, ?12, ?13, ?14, ?15)");
        if (!s) return s.error();
        auto r = s->bind(1, d.id)
                     .bind(2, d.account_id)
                     .bind(3, d.name)
                     .bind_ref(4, domain::name(d.status))
                     .bind(5, d.token)
                     .bind(6, d.sending ? 1 : 0)
                     .bind(7, d.inbound ? 1 : 0)
                     .bind(8, d.open_tracking ? 1 : 0)
                     .bind(9, d.click_tracking ? 1 : 0)
                     .bind(10, d.records_json)
                     .bind(11, d.created_at)
                     .bind(12, d.updated_at)
                     .bind(13, d.dkim_selector)
                     .bind(14, d.tracking_label)
                     .bind(15, d.return_path_label)
                     .run();
        if (!r) return r.error();
        for (const auto& k : keys) {
            auto ks = db.prepare(
                "INSERT INTO dkim_keys (id, domain_id, selector, private_key, public_key, active, "
                "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
            if (!ks) return ks.error();
            auto kr = ks->bind(1, k.id)
                          .bind(2, d.id)
                          .bind(3, k.selector)
                          .bind_blob(4, k.sealed_private_key)
                          .bind(5, k.public_key)
                          .bind(6, k.active ? 1 : 0)
                          .bind(7, k.created_at)
                          .run();
            if (!kr) return kr.error();
        }
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<Domain>> SqliteStore::find_domain_by_id(std::string account_id,
                                                               std::string id) {
    return impl_->read([account_id = std::move(account_id), id = std::move(id)](Db& db) {
        return one_domain(db, "id = ?2", account_id, id);
    });
}

asio::awaitable<Result<Domain>> SqliteStore::find_domain_by_name(std::string account_id,
                                                                 std::string name) {
    std::string key = account_id + '\0' + name;
    return impl_->read_cached(impl_->domains, key,
                              [account_id = std::move(account_id), name = std::move(name)](Db& db) {
                                  return one_domain(db, "name = ?2", account_id, name);
                              });
}

asio::awaitable<Result<Page<Domain>>> SqliteStore::list_domains(ListQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<Page<Domain>> {
        Page<Domain> page;
        {
            auto c = db.prepare("SELECT COUNT(*) FROM domains WHERE account_id = ?1");
            if (!c) return c.error();
            c->bind(1, q.account_id);
            auto row = c->step();
            if (!row) return row.error();
            page.total = c->int64(0);
        }
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, id ASC"
                                                      : " ORDER BY created_at DESC, id DESC";
        auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                            " FROM domains WHERE account_id = ?1" + order + " LIMIT ?2 OFFSET ?3");
        if (!s) return s.error();
        s->bind(1, q.account_id).bind(2, q.limit).bind(3, (q.page - 1) * q.limit);
        auto items = read_domains(*s);
        if (!items) return items.error();
        page.items = std::move(*items);
        return page;
    });
}

asio::awaitable<Result<void>> SqliteStore::update_domain_settings(std::string account_id,
                                                                  std::string domain_id,
                                                                  DomainSettings st, UnixMs now) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id), st,
                now](Db& db) -> Result<void> {
        auto s = db.prepare(
            "UPDATE domains SET sending = COALESCE(?3, sending), inbound = COALESCE(?4, inbound), "
            "open_tracking = COALESCE(?5, open_tracking), "
            "click_tracking = COALESCE(?6, click_tracking), updated_at = ?7, "
            "tracking_label = COALESCE(?8, tracking_label), records = COALESCE(?9, records), "
            "return_path_label = COALESCE(?10, return_path_label), "
            "return_path_verified = CASE WHEN ?10 IS NULL THEN return_path_verified ELSE 0 END "
            "WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        auto as_int = [](std::optional<bool> b) -> std::optional<std::int64_t> {
            if (!b) return std::nullopt;
            return *b ? 1 : 0;
        };
        auto r = s->bind(1, account_id)
                     .bind(2, domain_id)
                     .bind(3, as_int(st.sending))
                     .bind(4, as_int(st.inbound))
                     .bind(5, as_int(st.open_tracking))
                     .bind(6, as_int(st.click_tracking))
                     .bind(7, now)
                     .bind(8, st.tracking_label)
                     .bind(9, st.records_json)
                     .bind(10, st.return_path_label)
                     .run();
        if (!r) return r.error();
        if (db.changes() == 0) return errc::not_found;
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::delete_domain(std::string account_id,
                                                         std::string domain_id) {
    auto job = [account_id = std::move(account_id),
                domain_id = std::move(domain_id)](Db& db) -> Result<void> {
        // The keys go with it (ON DELETE CASCADE); emails and inbound emails keep their rows,
        // their domain_id set to NULL (ON DELETE SET NULL).
        auto s = db.prepare("DELETE FROM domains WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        if (auto r = s->bind(1, account_id).bind(2, domain_id).run(); !r) return r.error();
        if (db.changes() == 0) return errc::not_found;
        return {};
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::record_domain_check(DomainCheck c) {
    const bool any_event = c.event.has_value();
    auto job = [c = std::move(c)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "UPDATE domains SET status = ?3, records = ?4, last_checked_at = ?5, "
            "first_verify_at = ?7, next_check_at = ?6, verified_at = ?8, updated_at = ?5, "
            "return_path_verified = CASE WHEN return_path_label = ?9 THEN ?10 ELSE 0 END "
            "WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        auto r = s->bind(1, c.account_id)
                     .bind(2, c.domain_id)
                     .bind_ref(3, domain::name(c.status))
                     .bind(4, c.records_json)
                     .bind(5, c.checked_at)
                     .bind(6, c.next_check_at)
                     .bind(7, c.first_verify_at)
                     .bind(8, c.verified_at)
                     .bind(9, c.return_path_label)
                     .bind(10, c.return_path_verified ? 1 : 0)
                     .run();
        if (!r) return r.error();
        if (db.changes() == 0) return errc::not_found;
        if (c.event) return insert_event(db, *c.event);
        return {};
    };
    auto r = co_await impl_->write_lookups<void>(std::move(job));
    // Its event is in the outbox: wake the router, as change_email and create_inbound do
    // (it used not to, and a domain.verified waited for the router's next poll).
    if (r && any_event) impl_->events_written();
    co_return r;
}

asio::awaitable<Result<void>> SqliteStore::postpone_domain_check(std::string account_id,
                                                                 std::string domain_id,
                                                                 UnixMs next_check_at) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id),
                next_check_at](Db& db) -> Result<void> {
        auto s =
            db.prepare("UPDATE domains SET next_check_at = ?3 WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        return s->bind(1, account_id).bind(2, domain_id).bind(3, next_check_at).run();
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<std::vector<Domain>>> SqliteStore::domains_due(UnixMs now, int limit) {
    return impl_->read([now, limit](Db& db) -> Result<std::vector<Domain>> {
        auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                            " FROM domains WHERE next_check_at IS NOT NULL AND next_check_at <= ?1"
                            " ORDER BY next_check_at LIMIT ?2");
        if (!s) return s.error();
        s->bind(1, now).bind(2, limit);
        return read_domains(*s);
    });
}

asio::awaitable<Result<std::vector<DkimKey>>> SqliteStore::dkim_keys(std::string domain_id) {
    const std::string key = domain_id;
    return impl_->read_cached(
        impl_->dkim_keys, key,
        [domain_id = std::move(domain_id)](Db& db) -> Result<std::vector<DkimKey>> {
            auto s = db.prepare(
                "SELECT id, domain_id, selector, private_key, public_key, active, created_at "
                "FROM dkim_keys WHERE domain_id = ?1 ORDER BY selector");
            if (!s) return s.error();
            s->bind(1, domain_id);
            std::vector<DkimKey> out;
            for (;;) {
                auto row = s->step();
                if (!row) return row.error();
                if (!*row) return out;
                out.push_back(DkimKey{.id = s->text(0),
                                      .domain_id = s->text(1),
                                      .selector = s->text(2),
                                      .sealed_private_key = s->text(3),
                                      .public_key = s->text(4),
                                      .active = s->int64(5) != 0,
                                      .created_at = s->int64(6)});
            }
        });
}

asio::awaitable<Result<std::vector<DkimZoneEntry>>> SqliteStore::dkim_zone() {
    return impl_->read([](Db& db) -> Result<std::vector<DkimZoneEntry>> {
        auto s = db.prepare(
            "SELECT k.selector, d.token, k.public_key, d.name FROM dkim_keys k "
            "JOIN domains d ON d.id = k.domain_id ORDER BY d.name, d.id, k.selector");
        if (!s) return s.error();
        std::vector<DkimZoneEntry> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return out;
            out.push_back(DkimZoneEntry{.selector = s->text(0),
                                        .token = s->text(1),
                                        .public_key = s->text(2),
                                        .domain = s->text(3)});
        }
    });
}

asio::awaitable<Result<void>> SqliteStore::start_dkim_rotation(std::string account_id,
                                                               std::string domain_id, DkimKey k) {
    auto job = [account_id = std::move(account_id), domain_id = std::move(domain_id),
                k = std::move(k)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "UPDATE domains SET dkim_pending = ?3 "
            "WHERE account_id = ?1 AND id = ?2 AND dkim_pending IS NULL AND dkim_selector <> ?3");
        if (!s) return s.error();
        if (auto r = s->bind(1, account_id).bind(2, domain_id).bind(3, k.selector).run(); !r)
            return r.error();
        if (db.changes() == 0) {
            auto e = db.prepare("SELECT 1 FROM domains WHERE account_id = ?1 AND id = ?2");
            if (!e) return e.error();
            auto row = e->bind(1, account_id).bind(2, domain_id).step();
            if (!row) return row.error();
            return *row ? errc::conflict : errc::not_found;
        }
        auto del = db.prepare("DELETE FROM dkim_keys WHERE domain_id = ?1 AND selector = ?2");
        if (!del) return del.error();
        if (auto r = del->bind(1, domain_id).bind(2, k.selector).run(); !r) return r.error();
        auto ins = db.prepare(
            "INSERT INTO dkim_keys (id, domain_id, selector, private_key, public_key, active, "
            "created_at) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6)");
        if (!ins) return ins.error();
        return ins->bind(1, k.id)
            .bind(2, domain_id)
            .bind(3, k.selector)
            .bind_blob(4, k.sealed_private_key)
            .bind(5, k.public_key)
            .bind(6, k.created_at)
            .run();
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::finish_dkim_rotation(std::string domain_id,
                                                                std::string selector, UnixMs now) {
    auto job = [domain_id = std::move(domain_id), selector = std::move(selector),
                now](Db& db) -> Result<void> {
        auto s = db.prepare(
            "UPDATE domains SET dkim_selector = ?2, dkim_pending = NULL, dkim_rotated_at = ?3, "
            "updated_at = ?3 WHERE id = ?1 AND dkim_pending = ?2");
        if (!s) return s.error();
        if (auto r = s->bind(1, domain_id).bind(2, selector).bind(3, now).run(); !r)
            return r.error();
        if (db.changes() == 0) return errc::not_found;
        auto k = db.prepare("UPDATE dkim_keys SET active = (selector = ?2) WHERE domain_id = ?1");
        if (!k) return k.error();
        return k->bind(1, domain_id).bind(2, selector).run();
    };
    return impl_->write_lookups<void>(std::move(job));
}

asio::awaitable<Result<std::vector<Domain>>> SqliteStore::tracking_domains(std::string label,
                                                                           std::string name) {
    const std::string key = label + '\0' + name;
    return impl_->read_cached(
        impl_->tracking_hosts, key,
        [label = std::move(label), name = std::move(name)](Db& db) -> Result<std::vector<Domain>> {
            auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                                " FROM domains WHERE name = ?1 AND tracking_label = ?2"
                                " ORDER BY created_at, id");
            if (!s) return s.error();
            s->bind(1, name).bind(2, label);
            return read_domains(*s);
        });
}

asio::awaitable<Result<std::vector<Domain>>> SqliteStore::domains_rotating(int limit) {
    return impl_->read([limit](Db& db) -> Result<std::vector<Domain>> {
        auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                            " FROM domains WHERE dkim_pending IS NOT NULL"
                            " ORDER BY updated_at, id LIMIT ?1");
        if (!s) return s.error();
        s->bind(1, limit);
        return read_domains(*s);
    });
}

asio::awaitable<Result<std::vector<Domain>>> SqliteStore::domains_with_keys_before(
    domain::DomainStatus status, UnixMs made_before, int limit) {
    return impl_->read([status, made_before, limit](Db& db) -> Result<std::vector<Domain>> {
        auto s = db.prepare(std::string("SELECT ") + kDomainColumns +
                            " FROM domains d WHERE d.status = ?1 AND d.dkim_pending IS NULL AND "
                            "EXISTS (SELECT 1 FROM dkim_keys k WHERE k.domain_id = d.id AND "
                            "k.active = 1 AND k.created_at <= ?2) ORDER BY d.updated_at, d.id "
                            "LIMIT ?3");
        if (!s) return s.error();
        s->bind_ref(1, domain::name(status)).bind(2, made_before).bind(3, limit);
        return read_domains(*s);
    });
}

}  // namespace posthorn::store::sqlite
