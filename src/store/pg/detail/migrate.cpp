#include "core/log.hpp"
#include "store/errors.hpp"
#include "store/pg/detail/migrations.hpp"

namespace posthorn::store::pg::detail {
namespace {

// The key of the advisory lock the migrations are applied under: "posthorn" in ASCII.
constexpr const char* kLock = "SELECT pg_advisory_lock(8102099357864587886)";
constexpr const char* kUnlock = "SELECT pg_advisory_unlock(8102099357864587886)";

Result<int> apply(Conn& c, const std::vector<Migration>& all, bool create) {
    if (!create) {  // an existing install only: look before writing anything
        auto table = c.exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
        if (!table) return table.error();
        if (!table->row(0).boolean(0)) return errc::no_schema;
        auto rows = c.exec("SELECT EXISTS (SELECT 1 FROM schema_migrations)");
        if (!rows) return rows.error();
        if (!rows->row(0).boolean(0)) return errc::no_schema;
    }
    if (auto r = c.run("CREATE TABLE IF NOT EXISTS schema_migrations ("
                       "version integer PRIMARY KEY, name text NOT NULL, "
                       "applied_at timestamptz NOT NULL DEFAULT now())");
        !r)
        return r.error();
    auto v = c.exec("SELECT coalesce(max(version), 0) FROM schema_migrations");
    if (!v) return v.error();
    int version = v->row(0).int32(0);
    const int known = all.empty() ? 0 : all.back().version;
    if (version > known) {
        log::error(
            "store: the database's schema is version {}; this posthorn knows up to {}: "
            "upgrade posthorn",
            version, known);
        return errc::newer_schema;
    }
    for (const auto& m : all) {
        if (m.version <= version) continue;
        log::info("store: applying migration {}", m.name);
        // All or nothing: a migration that fails leaves the database as it was.
        if (auto r = c.run("BEGIN"); !r) return r.error();
        auto done = [&]() -> Result<void> {
            if (auto r = c.run(m.sql); !r) return r;
            auto r = c.exec("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                            Params().add(m.version).add(m.name));
            if (!r) return r.error();
            return c.run("COMMIT");
        }();
        if (!done) {
            log::error("store: migration {} failed: {}", m.name, done.error().message());
            (void)c.run("ROLLBACK");
            return done.error();
        }
        version = m.version;
    }
    return version;
}

}  // namespace

Result<int> migrate(Conn& conn, const std::vector<Migration>& all, bool create) {
    if (auto r = conn.run(kLock); !r) return r.error();
    auto version = apply(conn, all, create);
    (void)conn.run(kUnlock);
    return version;
}

}  // namespace posthorn::store::pg::detail
