-- Version 7: the request log's per-account counts are kept by the writer, one update per
-- account for each batch of entries it inserts (store/sqlite/sqlite_store.cpp, append_log),
-- instead of by a trigger that ran an upsert for every entry. Deleted entries are still
-- counted down by request_logs_count_delete (the retention job deletes in bulk, hourly).

DROP TRIGGER request_logs_count_insert;
