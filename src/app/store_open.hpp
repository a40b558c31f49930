// app/store_open.hpp — picks the back end named by database.url and opens it.
#pragma once

#include <memory>
#include <string>

#include "app/config.hpp"
#include "store/store.hpp"

namespace posthorn::app {

enum class OpenMode {
    create,    // make the data dir and the database when missing (serve, account create)
    existing,  // an install that is there already (every other command): a missing database,
               // or one without posthorn's schema, is store::errc::no_schema, and nothing is
               // made, not even the data dir
};

// Throws ConfigError for a back end this build does not have; answers the store error
// otherwise (logged, except no_schema: the caller says it, with no_database_message).
Result<std::unique_ptr<store::Store>> open_store(const Config& config, std::size_t readers,
                                                 OpenMode mode = OpenMode::create);

// What to tell the operator when open_store answers no_schema: where it looked, and which
// setting to check ("no database at ./data/posthorn.db; is --config / data_dir right?").
std::string no_database_message(const Config& config);

// Whether database.url names a store several nodes may share (PostgreSQL): what must be one
// across nodes is then kept in it (the send rate), not in each process.
bool store_is_shared(const Config& config);

// database.url as it may be logged: with its password (a PostgreSQL URL's) replaced by ***.
std::string database_for_log(const Config& config);

}  // namespace posthorn::app
