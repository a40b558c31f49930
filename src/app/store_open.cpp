#include "app/store_open.hpp"

#include <filesystem>

#include "core/log.hpp"
#include "store/pg/pg_store.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::app {

namespace {

// database.url = postgresql://… or postgres://…: the shared store of several nodes. The URL
// is logged with its password replaced by *** (store::pg::redact_url), never as it is.
Result<std::unique_ptr<store::Store>> open_pg(const Config& config, std::size_t readers,
                                              OpenMode mode) {
    const auto shown = database_for_log(config);
    log::info("store: PostgreSQL at {}", shown);
    auto s = store::pg::PgStore::open(
        {.url = config.database.url, .readers = readers, .create = mode == OpenMode::create});
    if (!s && s.error() == store::errc::no_schema) return s.error();
    if (!s) {
        log::error("cannot open the database {}: {}", shown, s.error().message());
        return s.error();
    }
    return std::unique_ptr<store::Store>(std::move(*s));
}

}  // namespace

bool store_is_shared(const Config& config) { return store::pg::is_pg_url(config.database.url); }

std::string database_for_log(const Config& config) {
    return store::pg::redact_url(config.database.url);
}

std::string no_database_message(const Config& config) {
    if (store::pg::is_pg_url(config.database.url))
        return "no posthorn schema in the database " + database_for_log(config) +
               "; is --config / database.url right?";
    return "no database at " + config.sqlite_path() + "; is --config / data_dir right?";
}

Result<std::unique_ptr<store::Store>> open_store(const Config& config, std::size_t readers,
                                                 OpenMode mode) {
    const bool create = mode == OpenMode::create;
    std::error_code fs_ec;
    if (create) std::filesystem::create_directories(config.server.data_dir, fs_ec);
    if (fs_ec)
        throw ConfigError("server.data_dir: cannot create '" + config.server.data_dir +
                          "': " + fs_ec.message());
    if (store::pg::is_pg_url(config.database.url)) return open_pg(config, readers, mode);
    const auto path = config.sqlite_path();
    if (path.empty())
        throw ConfigError("database.url: '" + database_for_log(config) +
                          "' names no back end this build has (sqlite:// or postgresql://)");
    const auto parent = std::filesystem::path(path).parent_path();
    if (create && !parent.empty()) std::filesystem::create_directories(parent, fs_ec);
    auto s = store::sqlite::SqliteStore::open({.path = path, .readers = readers, .create = create});
    if (!s && s.error() == store::errc::no_schema) return s.error();
    if (!s) {
        log::error("cannot open the database {}: {}", path, s.error().message());
        return s.error();
    }
    return std::unique_ptr<store::Store>(std::move(*s));
}

}  // namespace posthorn::app
