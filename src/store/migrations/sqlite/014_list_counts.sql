-- Version 14: the number of emails and of inbound emails of each account, kept as they are
-- written, so that a list without a filter answers its `total` without counting the
-- account's rows (at a million emails, counting them took ~75 ms a list). The writer adds
-- to them in the transaction that inserts the rows (store/sqlite/sqlite_emails.cpp,
-- sqlite_inbound.cpp); a deletion (an account's, by hand) counts down in the triggers below.

CREATE TABLE email_counts (
    account_id  TEXT PRIMARY KEY,
    n           INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO email_counts (account_id, n)
    SELECT account_id, COUNT(*) FROM emails GROUP BY account_id;

CREATE TABLE inbound_counts (
    account_id  TEXT PRIMARY KEY,
    n           INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO inbound_counts (account_id, n)
    SELECT account_id, COUNT(*) FROM inbound_emails GROUP BY account_id;

CREATE TRIGGER emails_count_delete AFTER DELETE ON emails
BEGIN
    UPDATE email_counts SET n = n - 1 WHERE account_id = OLD.account_id;
END;

CREATE TRIGGER inbound_count_delete AFTER DELETE ON inbound_emails
BEGIN
    UPDATE inbound_counts SET n = n - 1 WHERE account_id = OLD.account_id;
END;
