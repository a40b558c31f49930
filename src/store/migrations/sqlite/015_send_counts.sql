-- Version 15: the accepted sends of each account per second (SendRateStore, store.hpp), so
-- that the send rate can be counted in the store. One node on SQLite counts in memory
-- (api/rate_limiter.hpp); the table is here because every back end keeps the same contract.
-- Rows older than the window are dropped as the account's counts are added to.

CREATE TABLE send_counts (
    account_id  TEXT NOT NULL,
    second      INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (account_id, second)
) WITHOUT ROWID;
