// The event outbox rows, shared by the parts of SqliteStore that write events. Private to
// store/sqlite.
#pragma once

#include "store/sqlite/detail/db.hpp"
#include "store/types.hpp"

namespace posthorn::store::sqlite::detail {

// Writes the event into the outbox; route_events() gives it its webhook deliveries.
Result<void> insert_event(Db& db, const Event& e);

}  // namespace posthorn::store::sqlite::detail
