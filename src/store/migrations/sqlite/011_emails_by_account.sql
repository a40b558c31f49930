-- Version 11: emails kept in the order of (account_id, id), their primary key, instead of
-- by id with an index of (account_id, created_at): one B-tree fewer written per email sent.
--
-- An id begins with the millisecond it was made (core/id.hpp), and an email's created_at
-- is that millisecond (api/queue_email.cpp, since this version; before it, the clock's
-- reading the id was made from, which is the same unless the clock stepped back). So an
-- account's emails in the order of their key are in the order of their creation: the list
-- and its date bounds read a range of the key, as they read the index before. Nothing
-- finds an email by its id alone but a bounce report's return token and a tracked open or
-- click, which go through the accounts (a probe of the key per account).
--
-- Nothing has a foreign key to emails(id) since version 10. The table is rebuilt (a
-- table's key cannot be altered): made anew, filled, the old one dropped with its indexes
-- and triggers, the new one renamed, the indexes and triggers made again.

CREATE TABLE emails_by_account (
    id                 TEXT NOT NULL,
    account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id          TEXT REFERENCES domains(id) ON DELETE SET NULL,
    status             TEXT NOT NULL DEFAULT 'QUEUED'
                       CHECK (status = 'QUEUED' OR status = 'SENT' OR status = 'DELIVERED' OR
                              status = 'BOUNCED' OR status = 'FAILED' OR
                              status = 'COMPLAINED' OR status = 'BLOCKED'),
    from_email         TEXT NOT NULL,
    from_name          TEXT,
    to_display         TEXT NOT NULL,          -- the To recipients joined by ", "
    subject            TEXT NOT NULL,
    message_id         TEXT NOT NULL,          -- the Message-ID header, without <>
    return_token       TEXT NOT NULL,          -- bounces+<token>@hostname matches DSNs to it
    track_opens        INTEGER NOT NULL DEFAULT 0,
    track_clicks       INTEGER NOT NULL DEFAULT 0,
    source             TEXT NOT NULL DEFAULT 'api' CHECK (source = 'api' OR source = 'smtp'),
    size_bytes         INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,       -- the millisecond of the id
    queued_at          INTEGER NOT NULL,
    sent_at            INTEGER,
    delivered_at       INTEGER,
    failed_at          INTEGER,
    opened_at          INTEGER,
    clicked_at         INTEGER,
    updated_at         INTEGER NOT NULL,
    envelope_id        TEXT,
    total_recipients   INTEGER NOT NULL DEFAULT 0,
    body_id            INTEGER,                -- its message in email_bodies
    first_recipient_id INTEGER,                -- its recipients: ids first..last (010)
    last_recipient_id  INTEGER,
    PRIMARY KEY (account_id, id)
) WITHOUT ROWID;

INSERT INTO emails_by_account (id, account_id, domain_id, status, from_email, from_name,
                               to_display, subject, message_id, return_token, track_opens,
                               track_clicks, source, size_bytes, created_at, queued_at, sent_at,
                               delivered_at, failed_at, opened_at, clicked_at, updated_at,
                               envelope_id, total_recipients, body_id, first_recipient_id,
                               last_recipient_id)
    SELECT id, account_id, domain_id, status, from_email, from_name, to_display, subject,
           message_id, return_token, track_opens, track_clicks, source, size_bytes, created_at,
           queued_at, sent_at, delivered_at, failed_at, opened_at, clicked_at, updated_at,
           envelope_id, total_recipients, body_id, first_recipient_id, last_recipient_id
      FROM emails ORDER BY account_id, id;
DROP TABLE emails;  -- with its indexes and its two triggers
ALTER TABLE emails_by_account RENAME TO emails;

CREATE INDEX emails_account_to ON emails(account_id, to_display);
CREATE INDEX emails_earlier_return_tokens ON emails(return_token)
    WHERE length(return_token) = 26;

CREATE TRIGGER emails_body_delete AFTER DELETE ON emails
BEGIN
    DELETE FROM email_bodies WHERE id = OLD.body_id;
END;

CREATE TRIGGER emails_recipients_delete AFTER DELETE ON emails
BEGIN
    DELETE FROM recipients
     WHERE id BETWEEN OLD.first_recipient_id AND OLD.last_recipient_id AND email_id = OLD.id;
END;
