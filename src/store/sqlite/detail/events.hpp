// The event outbox rows, shared by the parts of SqliteStore that write events. Private to
// store/sqlite.
#pragma once

#include "store/sqlite/detail/db.hpp"
#include "store/types.hpp"

namespace posthorn::store::sqlite::detail {

// Writes the event into the outbox; route_events() gives it its webhook deliveries.
Result<void> insert_event(Db& db, const Event& e);

// Adds each bump to its statistics counter (stat_counters, migration 028), making the row
// when there is none.
Result<void> add_stats(Db& db, const std::vector<StatBump>& stats);

// The bumps with those of one counter summed into one (a batch's: one upsert a counter).
std::vector<StatBump> summed_stats(std::vector<StatBump> stats);

}  // namespace posthorn::store::sqlite::detail
