// SqliteStore: the accounts' stored templates (TemplateStore).
#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {
namespace {

constexpr const char* kTemplateColumns =
    "id, account_id, name, subject, html, text, variables, created_at, updated_at";

Template read_template(const Stmt& s) {
    return Template{.id = s.text(0),
                    .account_id = s.text(1),
                    .name = s.text(2),
                    .subject = s.text(3),
                    .html = s.opt_text(4),
                    .text = s.opt_text(5),
                    .variables_json = s.text(6),
                    .created_at = s.int64(7),
                    .updated_at = s.int64(8)};
}

// The account's template whose `column` (id or name) is `value`.
Result<Template> one_template(Db& db, const std::string& account_id, const char* column,
                              const std::string& value) {
    auto s = db.prepare(std::string("SELECT ") + kTemplateColumns +
                        " FROM templates WHERE account_id = ?1 AND " + column + " = ?2");
    if (!s) return s.error();
    s->bind(1, account_id).bind(2, value);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    return read_template(*s);
}

}  // namespace

asio::awaitable<Result<void>> SqliteStore::create_template(Template t) {
    return impl_->writer.write<void>([t = std::move(t)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "INSERT INTO templates (id, account_id, name, subject, html, text, variables, "
            "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
        if (!s) return s.error();
        return s->bind(1, t.id)
            .bind(2, t.account_id)
            .bind(3, t.name)
            .bind(4, t.subject)
            .bind(5, t.html)
            .bind(6, t.text)
            .bind(7, t.variables_json)
            .bind(8, t.created_at)
            .bind(9, t.updated_at)
            .run();
    });
}

asio::awaitable<Result<Template>> SqliteStore::find_template(std::string account_id,
                                                             std::string id) {
    return impl_->read(
        [account_id = std::move(account_id), id = std::move(id)](Db& db) -> Result<Template> {
            return one_template(db, account_id, "id", id);
        });
}

asio::awaitable<Result<Template>> SqliteStore::find_template_by_name(std::string account_id,
                                                                     std::string name) {
    return impl_->read(
        [account_id = std::move(account_id), name = std::move(name)](Db& db) -> Result<Template> {
            return one_template(db, account_id, "name", name);
        });
}

asio::awaitable<Result<Page<Template>>> SqliteStore::list_templates(ListQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<Page<Template>> {
        Page<Template> page;
        auto c = db.prepare("SELECT COUNT(*) FROM templates WHERE account_id = ?1");
        if (!c) return c.error();
        c->bind(1, q.account_id);
        auto counted = c->step();
        if (!counted) return counted.error();
        page.total = c->int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, id ASC"
                                                      : " ORDER BY created_at DESC, id DESC";
        auto s =
            db.prepare(std::string("SELECT ") + kTemplateColumns +
                       " FROM templates WHERE account_id = ?1" + order + " LIMIT ?2 OFFSET ?3");
        if (!s) return s.error();
        s->bind(1, q.account_id).bind(2, q.limit).bind(3, (q.page - 1) * q.limit);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return page;
            page.items.push_back(read_template(*s));
        }
    });
}

asio::awaitable<Result<Template>> SqliteStore::update_template(Template t) {
    return impl_->writer.write<Template>([t = std::move(t)](Db& db) -> Result<Template> {
        auto s = db.prepare(
            "UPDATE templates SET name = ?3, subject = ?4, html = ?5, text = ?6, variables = ?7, "
            "updated_at = ?8 WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        if (auto r = s->bind(1, t.account_id)
                         .bind(2, t.id)
                         .bind(3, t.name)
                         .bind(4, t.subject)
                         .bind(5, t.html)
                         .bind(6, t.text)
                         .bind(7, t.variables_json)
                         .bind(8, t.updated_at)
                         .run();
            !r)
            return r.error();
        if (db.changes() == 0) return errc::not_found;
        return one_template(db, t.account_id, "id", t.id);
    });
}

asio::awaitable<Result<void>> SqliteStore::delete_template(std::string account_id, std::string id) {
    return impl_->writer.write<void>(
        [account_id = std::move(account_id), id = std::move(id)](Db& db) -> Result<void> {
            auto s = db.prepare("DELETE FROM templates WHERE account_id = ?1 AND id = ?2");
            if (!s) return s.error();
            if (auto r = s->bind(1, account_id).bind(2, id).run(); !r) return r;
            if (db.changes() == 0) return errc::not_found;
            return {};
        });
}

}  // namespace posthorn::store::sqlite
