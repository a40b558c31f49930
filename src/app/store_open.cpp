#include "app/store_open.hpp"

#include <filesystem>

#include "core/log.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::app {

Result<std::unique_ptr<store::Store>> open_store(const Config& config, std::size_t readers) {
    const auto path = config.sqlite_path();
    if (path.empty())
        throw ConfigError(
            "database.url: only sqlite:// is available in this build (PostgreSQL "
            "support has not landed yet)");
    std::error_code fs_ec;
    std::filesystem::create_directories(config.server.data_dir, fs_ec);
    if (fs_ec)
        throw ConfigError("server.data_dir: cannot create '" + config.server.data_dir +
                          "': " + fs_ec.message());
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, fs_ec);
    auto s = store::sqlite::SqliteStore::open({.path = path, .readers = readers});
    if (!s) {
        log::error("cannot open the database {}: {}", path, s.error().message());
        return s.error();
    }
    return std::unique_ptr<store::Store>(std::move(*s));
}

}  // namespace posthorn::app
