-- Version 10: an email's recipients are found by the range of their ids, which the email
-- row holds (first_recipient_id, last_recipient_id), instead of through an index of the
-- recipients by email: one B-tree fewer written per email sent (an index whose every entry
-- is appended at its end, where SQLite rebalances the last leaves and their parent at each
-- split: ~3 pages a commit).
--
-- The writer inserts an email's recipients one after another in one transaction, before the
-- email row: their ids are consecutive (SQLite gives a new row the largest id plus one).
-- The recipients' foreign key to emails(id) goes, since an email row now comes after its
-- recipients and its deletion would have had to search them without the index; a trigger
-- deletes them by their range, as emails_body_delete deletes the body. The foreign key is
-- removed in place in sqlite_schema (SQLite documents this for dropping a constraint that no
-- stored row depends on; 006 edits CHECKs the same way): no row is copied.

ALTER TABLE emails ADD COLUMN first_recipient_id INTEGER;
ALTER TABLE emails ADD COLUMN last_recipient_id INTEGER;
UPDATE emails
   SET (first_recipient_id, last_recipient_id) =
       (SELECT min(r.id), max(r.id) FROM recipients r WHERE r.email_id = emails.id);

-- Every email's recipients must be consecutive for the range to hold exactly them; a
-- database where they are not (edited by hand) stops the migration, which is then undone.
CREATE TEMP TABLE migration_010_check (
    emails_with_recipients_out_of_range INTEGER
        CHECK (emails_with_recipients_out_of_range = 0)
);
INSERT INTO migration_010_check
    SELECT COUNT(*) FROM emails e
     WHERE e.first_recipient_id IS NOT NULL
       AND (SELECT COUNT(*) FROM recipients r WHERE r.email_id = e.id)
           <> e.last_recipient_id - e.first_recipient_id + 1;

DROP INDEX recipients_email;

CREATE TRIGGER emails_recipients_delete AFTER DELETE ON emails
BEGIN
    DELETE FROM recipients
     WHERE id BETWEEN OLD.first_recipient_id AND OLD.last_recipient_id AND email_id = OLD.id;
END;

PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'email_id         TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,',
                     'email_id         TEXT NOT NULL,            -- its email (no foreign key: 010)')
 WHERE type = 'table' AND name = 'recipients';
PRAGMA writable_schema = OFF;
-- The edit must have taken: an email row is now inserted after its recipients.
INSERT INTO migration_010_check
    SELECT instr(sql, 'REFERENCES emails') FROM sqlite_schema
     WHERE type = 'table' AND name = 'recipients';
DROP TABLE migration_010_check;
