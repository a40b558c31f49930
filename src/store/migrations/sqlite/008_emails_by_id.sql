-- Version 8: emails kept in the order of their ids (WITHOUT ROWID), and no unique index of
-- return tokens: two B-trees fewer written per email sent.
--
-- An emails table with a rowid is two B-trees, the rows by rowid and the index of the text
-- primary key; without rowid it is one, the rows by id. And a return token (the <token> of
-- bounces+<token>@hostname) now begins with the email's id (its 26 characters after "em_",
-- then 16 random ones: 42 in all), so a bounce report finds its email by the primary key;
-- the 26-character tokens of the emails sent before this version stay findable through an
-- index that holds only them (a partial index: new rows add nothing to it).
--
-- The table is rebuilt: made anew, filled, the old one dropped and the new one renamed (the
-- documented way to change a table's key). Migrations run with foreign keys off, so that
-- dropping the old table does not cascade into recipients, and are checked before commit.

CREATE TABLE emails_by_id (
    id               TEXT NOT NULL PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id        TEXT REFERENCES domains(id) ON DELETE SET NULL,
    status           TEXT NOT NULL DEFAULT 'QUEUED'
                     CHECK (status = 'QUEUED' OR status = 'SENT' OR status = 'DELIVERED' OR
                            status = 'BOUNCED' OR status = 'FAILED' OR
                            status = 'COMPLAINED' OR status = 'BLOCKED'),
    from_email       TEXT NOT NULL,
    from_name        TEXT,
    to_display       TEXT NOT NULL,            -- the To recipients joined by ", "
    subject          TEXT NOT NULL,
    message_id       TEXT NOT NULL,            -- the Message-ID header, without <>
    return_token     TEXT NOT NULL,            -- bounces+<token>@hostname matches DSNs to it
    track_opens      INTEGER NOT NULL DEFAULT 0,
    track_clicks     INTEGER NOT NULL DEFAULT 0,
    source           TEXT NOT NULL DEFAULT 'api' CHECK (source = 'api' OR source = 'smtp'),
    size_bytes       INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    queued_at        INTEGER NOT NULL,
    sent_at          INTEGER,
    delivered_at     INTEGER,
    failed_at        INTEGER,
    opened_at        INTEGER,
    clicked_at       INTEGER,
    updated_at       INTEGER NOT NULL,
    envelope_id      TEXT,
    total_recipients INTEGER NOT NULL DEFAULT 0,
    body_id          INTEGER                   -- its message in email_bodies
) WITHOUT ROWID;

INSERT INTO emails_by_id (id, account_id, domain_id, status, from_email, from_name, to_display,
                          subject, message_id, return_token, track_opens, track_clicks, source,
                          size_bytes, created_at, queued_at, sent_at, delivered_at, failed_at,
                          opened_at, clicked_at, updated_at, envelope_id, total_recipients,
                          body_id)
    SELECT id, account_id, domain_id, status, from_email, from_name, to_display, subject,
           message_id, return_token, track_opens, track_clicks, source, size_bytes, created_at,
           queued_at, sent_at, delivered_at, failed_at, opened_at, clicked_at, updated_at,
           envelope_id, total_recipients, body_id
    FROM emails;
DROP TABLE emails;
ALTER TABLE emails_by_id RENAME TO emails;

CREATE INDEX emails_account_created ON emails(account_id, created_at);
CREATE INDEX emails_account_to ON emails(account_id, to_display);
CREATE INDEX emails_earlier_return_tokens ON emails(return_token)
    WHERE length(return_token) = 26;

CREATE TRIGGER emails_body_delete AFTER DELETE ON emails
BEGIN
    DELETE FROM email_bodies WHERE id = OLD.body_id;
END;
