-- Version 6: fewer B-trees written per email sent (one) and per request logged (one), after
-- version 5's indexes: two tables.
--
-- Every table and index an insert touches is one more page in the WAL at each commit and one
-- more page for the checkpoint to copy.
--
-- The raw messages are kept by an integer key, which the email row holds (body_id): their
-- table is one B-tree, where its text primary key (the email id) made two. They stay out of
-- the email rows, which are updated at every step of a delivery and on opens and clicks:
-- SQLite writes a row anew on each update, and a row that held its 100 KB message would
-- write the message again each time. A body goes with its email (trigger).

CREATE TABLE email_bodies_by_id (
    id   INTEGER PRIMARY KEY,
    raw  BLOB NOT NULL
);
ALTER TABLE emails ADD COLUMN body_id INTEGER;
-- The migrated bodies take their email's rowid as their key; new ones are numbered after.
INSERT INTO email_bodies_by_id (id, raw)
    SELECT e.rowid, b.raw FROM emails e JOIN email_bodies b ON b.email_id = e.id;
UPDATE emails SET body_id = rowid WHERE id IN (SELECT email_id FROM email_bodies);
DROP TABLE email_bodies;
ALTER TABLE email_bodies_by_id RENAME TO email_bodies;

CREATE TRIGGER emails_body_delete AFTER DELETE ON emails
BEGIN
    DELETE FROM email_bodies WHERE id = OLD.body_id;
END;

-- The request log is kept in the order of its ids (WITHOUT ROWID): its rows are no longer
-- a second B-tree beside the index of their text primary key.
CREATE TABLE request_logs_by_id (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    method       TEXT NOT NULL,
    url          TEXT NOT NULL,
    status       INTEGER NOT NULL,
    duration_ms  INTEGER NOT NULL,
    ip           TEXT NOT NULL DEFAULT '',
    user_agent   TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
INSERT INTO request_logs_by_id (id, account_id, created_at, method, url, status, duration_ms, ip,
                                user_agent)
    SELECT id, account_id, created_at, method, url, status, duration_ms, ip, user_agent
      FROM request_logs;
DROP TABLE request_logs;  -- with its index and its two count triggers
ALTER TABLE request_logs_by_id RENAME TO request_logs;
CREATE INDEX request_logs_account_created ON request_logs(account_id, created_at, id);

CREATE TRIGGER request_logs_count_insert AFTER INSERT ON request_logs
BEGIN
    INSERT INTO request_log_counts (account_id, n) VALUES (NEW.account_id, 1)
        ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER request_logs_count_delete AFTER DELETE ON request_logs
BEGIN
    UPDATE request_log_counts SET n = n - 1 WHERE account_id = OLD.account_id;
END;

-- A CHECK (x IN (a, b, c, ...)) of three values or more builds a temporary B-tree of its list
-- each time a statement that checks it runs (three per email sent: its status, and the type
-- and status of its recipient; a fifth of the store writer's work). The same checks as
-- comparisons joined by OR cost a few instructions. A CHECK changes no stored row, so the
-- definitions are edited in place, as SQLite documents for such changes (ALTER TABLE,
-- "making other kinds of table schema changes"); the store bumps the schema version after
-- its migrations, so that every connection reads the new definitions.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (status IN (''QUEUED'', ''SENT'', ''DELIVERED'', ''BOUNCED'', ''FAILED'',
                                       ''COMPLAINED'', ''BLOCKED''))',
                     'CHECK (status = ''QUEUED'' OR status = ''SENT'' OR status = ''DELIVERED'' OR
                            status = ''BOUNCED'' OR status = ''FAILED'' OR
                            status = ''COMPLAINED'' OR status = ''BLOCKED'')')
 WHERE type = 'table' AND name IN ('emails', 'recipients');
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (type IN (''to'', ''cc'', ''bcc''))',
                     'CHECK (type = ''to'' OR type = ''cc'' OR type = ''bcc'')')
 WHERE type = 'table' AND name = 'recipients';
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (status IN (''NOT_STARTED'', ''PENDING'', ''VERIFIED'', ''FAILED''))',
                     'CHECK (status = ''NOT_STARTED'' OR status = ''PENDING'' OR
                            status = ''VERIFIED'' OR status = ''FAILED'')')
 WHERE type = 'table' AND name = 'domains';
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (state IN (''pending'', ''done'', ''failed''))',
                     'CHECK (state = ''pending'' OR state = ''done'' OR state = ''failed'')')
 WHERE type = 'table' AND name = 'webhook_deliveries';
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (reason IN (''bounce'', ''complaint'', ''manual''))',
                     'CHECK (reason = ''bounce'' OR reason = ''complaint'' OR reason = ''manual'')')
 WHERE type = 'table' AND name = 'suppressions';
PRAGMA writable_schema = OFF;
