-- Version 9: the request log kept in the order it is read, (account_id, created_at, id),
-- as its primary key: one B-tree written per request logged, where the rows by id and the
-- index (account_id, created_at, id) were two. GET /v1/logs reads an account's entries in
-- that order, and nothing reads an entry by its id alone. Expiry deletes each account's
-- entries older than the cutoff: a range of the key per account.
--
-- The table is rebuilt (a table's key cannot be altered): made anew, filled, the old one
-- dropped with its index and its trigger, the new one renamed, the trigger made again.

CREATE TABLE request_logs_by_account (
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    id           TEXT NOT NULL,
    method       TEXT NOT NULL,
    url          TEXT NOT NULL,
    status       INTEGER NOT NULL,
    duration_ms  INTEGER NOT NULL,
    ip           TEXT NOT NULL DEFAULT '',
    user_agent   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (account_id, created_at, id)
) WITHOUT ROWID;

INSERT INTO request_logs_by_account (account_id, created_at, id, method, url, status,
                                     duration_ms, ip, user_agent)
    SELECT account_id, created_at, id, method, url, status, duration_ms, ip, user_agent
      FROM request_logs;
DROP TABLE request_logs;  -- with its index and its count trigger
ALTER TABLE request_logs_by_account RENAME TO request_logs;

CREATE TRIGGER request_logs_count_delete AFTER DELETE ON request_logs
BEGIN
    UPDATE request_log_counts SET n = n - 1 WHERE account_id = OLD.account_id;
END;
