// The event outbox rows, shared by the parts of SqliteStore that write events. Private to
// store/sqlite.
#pragma once

#include <string>
#include <string_view>

#include "store/sqlite/detail/db.hpp"
#include "store/types.hpp"

namespace posthorn::store::sqlite::detail {

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

// Writes the event; the events_fan_out trigger adds its webhook deliveries.
Result<void> insert_event(Db& db, const Event& e);

}  // namespace posthorn::store::sqlite::detail
