-- Version 14: scheduled send (docs/sending.md "Scheduled send"). An email keeps the time the
-- account asked it to be sent at (NULL: sent at once); its recipients wait in the queue with
-- that time as their next attempt. The index finds the emails waiting for their time by
-- status and time (the scheduler's job, domain/scheduling.hpp); only scheduled emails are in
-- it. (Number 13 is another change's.)

ALTER TABLE emails ADD COLUMN scheduled_at bigint;
CREATE INDEX emails_scheduled ON emails (status, scheduled_at) WHERE scheduled_at IS NOT NULL;

-- The new names of the vocabulary (domain/vocabulary.hpp): an email SCHEDULED or CANCELED, a
-- recipient CANCELED.
ALTER TABLE emails DROP CONSTRAINT emails_status_check;
ALTER TABLE emails ADD CONSTRAINT emails_status_check
    CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'COMPLAINED', 'BLOCKED',
                      'SCHEDULED', 'CANCELED'));
ALTER TABLE recipients DROP CONSTRAINT recipients_status_check;
ALTER TABLE recipients ADD CONSTRAINT recipients_status_check
    CHECK (status IN ('QUEUED', 'DELIVERED', 'BOUNCED', 'FAILED', 'BLOCKED', 'COMPLAINED',
                      'CANCELED'));
