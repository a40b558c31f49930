// The event outbox rows, shared by the parts of SqliteStore that write events. Private to
// store/sqlite.
#pragma once

#include "store/sqlite/detail/db.hpp"
#include "store/types.hpp"

namespace posthorn::store::sqlite::detail {

// Writes the event into the outbox; route_events() gives it its webhook deliveries.
Result<void> insert_event(Db& db, const Event& e);

// Adds each bump to its statistics counter (stat_counters, migration 028) at the end of the
// open transaction: kept in db.pending_stats() until write_pending_stats.
void add_stats(Db& db, const std::vector<StatBump>& stats);

// Writes the open transaction's pending bumps, those of one counter summed into one (a group
// commit of sends of one account and hour: one upsert a counter, not one a send), making a
// counter's row when there is none; the Writer runs it just before each COMMIT.
error_code write_pending_stats(Db& db);

}  // namespace posthorn::store::sqlite::detail
