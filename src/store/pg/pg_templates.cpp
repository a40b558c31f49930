// PgStore: the accounts' stored templates (TemplateStore).
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

constexpr const char* kTemplateColumns =
    "t.id, t.account_id, t.name, t.subject, t.html, t.text, t.variables, t.created_at, "
    "t.updated_at";

Template read_template(const Row& r) {
    return Template{.id = r.text(0),
                    .account_id = r.text(1),
                    .name = r.text(2),
                    .subject = r.text(3),
                    .html = r.opt_text(4),
                    .text = r.opt_text(5),
                    .variables_json = r.text(6),
                    .created_at = r.int64(7),
                    .updated_at = r.int64(8)};
}

Result<Template> one_template(const Result<Rows>& rows) {
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    return read_template(rows->row(0));
}

// The account's template whose `column` (id or name) is `value`.
Result<Template> find_one(Conn& c, const std::string& account_id, const char* column,
                          const std::string& value) {
    return one_template(c.exec(std::string("SELECT ") + kTemplateColumns +
                                   " FROM templates t WHERE t.account_id = $1 AND t." + column +
                                   " = $2",
                               Params().add(account_id).add(value)));
}

}  // namespace

asio::awaitable<Result<void>> PgStore::create_template(Template t) {
    return impl_->writer.write<void>([t = std::move(t)](Conn& c, Batch&) -> Result<void> {
        Params p;
        p.add(t.id).add(t.account_id).add(t.name).add(t.subject).add(t.html).add(t.text);
        p.add(t.variables_json).add(t.created_at).add(t.updated_at);
        auto r = c.exec(
            "INSERT INTO templates (id, account_id, name, subject, html, text, variables, "
            "created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            p);
        if (!r) return r.error();
        return {};
    });
}

asio::awaitable<Result<Template>> PgStore::find_template(std::string account_id, std::string id) {
    return impl_->read([account_id = std::move(account_id),
                        id = std::move(id)](Conn& c) { return find_one(c, account_id, "id", id); },
                       false);
}

asio::awaitable<Result<Template>> PgStore::find_template_by_name(std::string account_id,
                                                                 std::string name) {
    return impl_->read([account_id = std::move(account_id), name = std::move(name)](
                           Conn& c) { return find_one(c, account_id, "name", name); },
                       false);
}

asio::awaitable<Result<Page<Template>>> PgStore::list_templates(ListQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) -> Result<Page<Template>> {
        Page<Template> page;
        auto total = c.exec("SELECT count(*) FROM templates WHERE account_id = $1",
                            Params().add(q.account_id));
        if (!total) return total.error();
        page.total = total->row(0).int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY t.created_at ASC, t.id ASC"
                                                      : " ORDER BY t.created_at DESC, t.id DESC";
        auto rows =
            c.exec(std::string("SELECT ") + kTemplateColumns +
                       " FROM templates t WHERE t.account_id = $1" + order + " LIMIT $2 OFFSET $3",
                   Params().add(q.account_id).add(q.limit).add((q.page - 1) * q.limit));
        if (!rows) return rows.error();
        page.items = rows->map(read_template);
        return page;
    });
}

asio::awaitable<Result<Template>> PgStore::update_template(Template t) {
    return impl_->writer.write<Template>([t = std::move(t)](Conn& c, Batch&) -> Result<Template> {
        Params p;
        p.add(t.account_id).add(t.id).add(t.name).add(t.subject).add(t.html).add(t.text);
        p.add(t.variables_json).add(t.updated_at);
        return one_template(
            c.exec(std::string("UPDATE templates t SET name = $3, subject = $4, html = $5, "
                               "text = $6, variables = $7, updated_at = $8 "
                               "WHERE t.account_id = $1 AND t.id = $2 RETURNING ") +
                       kTemplateColumns,
                   p));
    });
}

asio::awaitable<Result<void>> PgStore::delete_template(std::string account_id, std::string id) {
    return impl_->writer.write<void>(
        [account_id = std::move(account_id), id = std::move(id)](Conn& c, Batch&) -> Result<void> {
            auto r = c.exec("DELETE FROM templates WHERE account_id = $1 AND id = $2",
                            Params().add(account_id).add(id));
            if (!r) return r.error();
            if (r->affected() == 0) return errc::not_found;
            return {};
        });
}

}  // namespace posthorn::store::pg
