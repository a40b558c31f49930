// app/store_open.hpp — picks the back end named by database.url and opens it.
#pragma once

#include <memory>

#include "app/config.hpp"
#include "store/store.hpp"

namespace posthorn::app {

// Creates the data dir when needed. Throws ConfigError for a back end this build does not
// have; answers the store error otherwise.
Result<std::unique_ptr<store::Store>> open_store(const Config& config, std::size_t readers);

}  // namespace posthorn::app
