-- Version 2: per-account request-log counts, kept by triggers, so that the `total` of an
-- unfiltered GET /v1/logs costs one row read instead of a scan of the account's entries.

CREATE TABLE request_log_counts (
    account_id  TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    n           INTEGER NOT NULL
);

INSERT INTO request_log_counts (account_id, n)
    SELECT account_id, COUNT(*) FROM request_logs GROUP BY account_id;

CREATE TRIGGER request_logs_count_insert AFTER INSERT ON request_logs
BEGIN
    INSERT INTO request_log_counts (account_id, n) VALUES (NEW.account_id, 1)
        ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER request_logs_count_delete AFTER DELETE ON request_logs
BEGIN
    UPDATE request_log_counts SET n = n - 1 WHERE account_id = OLD.account_id;
END;
