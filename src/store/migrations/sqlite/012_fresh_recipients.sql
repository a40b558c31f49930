-- Version 12: a recipient not yet tried is not in the index of when recipients are due
-- (recipients_due): one B-tree fewer written per email sent.
--
-- A new recipient has no next_attempt_at (NULL, with status QUEUED: "fresh"); it is due at
-- once. The queue claims fresh recipients in the order of their ids, from above
-- queue_state.fresh_after: every recipient at or below it has been claimed at least once
-- (a claim sets its next_attempt_at to the time it was accepted, so from then on it is in
-- recipients_due, whose lease runs out there if its node dies), or is final. The claim
-- moves fresh_after up in its own transaction. New recipients take the largest id plus
-- one (SQLite's rowids), so they come above it; only a deletion of the recipients with the
-- largest ids (an account deleted) could let a new one take an id at or below it, so the
-- trigger below brings fresh_after down to the largest id left when that happens.
--
-- The recipients queued before this version have their next_attempt_at, and are claimed
-- through recipients_due as before: fresh_after starts at the largest id.

CREATE TABLE queue_state (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    fresh_after  INTEGER NOT NULL
);
INSERT INTO queue_state (id, fresh_after)
    VALUES (1, (SELECT coalesce(max(id), 0) FROM recipients));

CREATE TRIGGER recipients_fresh_after AFTER DELETE ON recipients
    WHEN NOT EXISTS (SELECT 1 FROM recipients WHERE id > OLD.id)
BEGIN
    UPDATE queue_state SET fresh_after = (SELECT coalesce(max(id), 0) FROM recipients)
     WHERE fresh_after > (SELECT coalesce(max(id), 0) FROM recipients);
END;
