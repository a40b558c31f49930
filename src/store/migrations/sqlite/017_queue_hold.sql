-- Version 17: the operator may hold queued recipients (`posthorn queue hold`): held_at is
-- when, NULL while not held (and always once final). A held recipient is not claimed until it
-- is released, so the index of due recipients leaves held ones out: a claim then never walks
-- over them, however many a held destination has. Their own index holds only them (none
-- while nothing is held: no cost to a send).
--
-- A recipient is held only once claimed at least once or given its next attempt by the hold
-- (a recipient never tried has none: migration 012), so a held one is never "fresh".

ALTER TABLE recipients ADD COLUMN held_at INTEGER;

DROP INDEX recipients_due;
CREATE INDEX recipients_due ON recipients(next_attempt_at)
    WHERE next_attempt_at IS NOT NULL AND held_at IS NULL;
CREATE INDEX recipients_held ON recipients(held_at) WHERE held_at IS NOT NULL;
