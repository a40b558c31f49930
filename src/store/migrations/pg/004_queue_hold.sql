-- Version 4: the operator may hold queued recipients (`posthorn queue hold`): held_at is
-- when, NULL while not held (and always once final). A held recipient is not claimed until it
-- is released, so the indexes of due recipients leave held ones out: a claim then never walks
-- over them, however many a held destination has. Their own index holds only them (none
-- while nothing is held: no cost to a send).

ALTER TABLE recipients ADD COLUMN held_at bigint;

DROP INDEX recipients_fresh;
CREATE INDEX recipients_fresh ON recipients (next_attempt_at, id)
    WHERE attempts = 0 AND next_attempt_at IS NOT NULL AND held_at IS NULL;
DROP INDEX recipients_retry;
CREATE INDEX recipients_retry ON recipients (next_attempt_at, id)
    WHERE attempts > 0 AND next_attempt_at IS NOT NULL AND held_at IS NULL;
CREATE INDEX recipients_held ON recipients (held_at) WHERE held_at IS NOT NULL;
