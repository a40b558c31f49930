#include "store/sqlite/detail/events.hpp"

#include "domain/vocabulary.hpp"

namespace posthorn::store::sqlite::detail {

Result<void> insert_event(Db& db, const Event& e) {
    auto s = db.prepare(
        "INSERT INTO events (id, account_id, type, email_id, data, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!s) return s.error();
    return s->bind(1, e.id)
        .bind(2, e.account_id)
        .bind_ref(3, domain::name(e.kind))
        .bind(4, e.email_id)
        .bind(5, e.data_json)
        .bind(6, e.created_at)
        .run();
}

}  // namespace posthorn::store::sqlite::detail
