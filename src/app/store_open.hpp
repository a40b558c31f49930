// app/store_open.hpp — picks the back end named by database.url and opens it.
#pragma once

#include <memory>
#include <string>

#include "app/config.hpp"
#include "store/store.hpp"

namespace posthorn::app {

// Creates the data dir when needed. Throws ConfigError for a back end this build does not
// have; answers the store error otherwise.
Result<std::unique_ptr<store::Store>> open_store(const Config& config, std::size_t readers);

// Whether database.url names a store several nodes may share (PostgreSQL): what must be one
// across nodes is then kept in it (the send rate), not in each process.
bool store_is_shared(const Config& config);

// database.url as it may be logged: with its password (a PostgreSQL URL's) replaced by ***.
std::string database_for_log(const Config& config);

}  // namespace posthorn::app
