-- Version 27: scheduled send (docs/sending.md "Scheduled send"). An email keeps the time the
-- account asked it to be sent at (NULL: sent at once); its recipients wait in the queue with
-- that time as their next attempt. The index finds the emails waiting for their time by
-- status and time (the scheduler's job, domain/scheduling.hpp); only scheduled emails are in
-- it. (Number 26 is another change's.)

ALTER TABLE emails ADD COLUMN scheduled_at INTEGER;
CREATE INDEX emails_scheduled ON emails(status, scheduled_at) WHERE scheduled_at IS NOT NULL;

-- The new names of the vocabulary (domain/vocabulary.hpp): an email SCHEDULED or CANCELED, a
-- recipient CANCELED. A wider CHECK changes no stored row: edited in place, as 006 does.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'status = ''COMPLAINED'' OR status = ''BLOCKED'')',
                     'status = ''COMPLAINED'' OR status = ''BLOCKED'' OR
                              status = ''SCHEDULED'' OR status = ''CANCELED'')')
 WHERE type = 'table' AND name = 'emails';
UPDATE sqlite_schema
   SET sql = replace(sql, 'status = ''COMPLAINED'' OR status = ''BLOCKED'')',
                     'status = ''COMPLAINED'' OR status = ''BLOCKED'' OR
                            status = ''CANCELED'')')
 WHERE type = 'table' AND name = 'recipients';
PRAGMA writable_schema = OFF;
