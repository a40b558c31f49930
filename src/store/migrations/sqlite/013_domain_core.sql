-- Version 13: the store decides nothing (docs/architecture.md, "Where the rules live").
--
-- 1. Events no longer fan out to webhooks in a trigger: which webhooks hear of an event is
--    the domain's rule (domain/events.hpp), applied by the webhooks' router through
--    route_events(), which reads the events written since event_routing.routed_through
--    (their rowids: one writer appends them in the order of its commits) and moves it up
--    in the transaction that writes their deliveries. Every event written before this
--    version was fanned out by the trigger already. As queue_state.fresh_after (012), the
--    mark comes down if the events with the largest rowids are deleted, so that a new
--    event, which takes the largest rowid plus one, is never at or below it.
-- 2. A recipient given up keeps its bounce classification (domain/delivery_policy.hpp).
-- 3. Suppressions carry the reasons of the API (hard_bounce, complaint, manual,
--    unsubscribe); the bounces suppressed before are hard bounces.
-- 4. Periodic jobs take a lease, so that one node of several runs each at a time.

DROP TRIGGER events_fan_out;

CREATE TABLE event_routing (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    routed_through  INTEGER NOT NULL
);
INSERT INTO event_routing (id, routed_through)
    VALUES (1, (SELECT coalesce(max(rowid), 0) FROM events));

CREATE TRIGGER events_routed_through AFTER DELETE ON events
    WHEN NOT EXISTS (SELECT 1 FROM events WHERE rowid > OLD.rowid)
BEGIN
    UPDATE event_routing SET routed_through = (SELECT coalesce(max(rowid), 0) FROM events)
     WHERE routed_through > (SELECT coalesce(max(rowid), 0) FROM events);
END;

ALTER TABLE recipients ADD COLUMN bounce_type TEXT;     -- hard | soft | block | undetermined
ALTER TABLE recipients ADD COLUMN bounce_code TEXT;     -- the enhanced status code, if any
ALTER TABLE recipients ADD COLUMN bounce_message TEXT;

CREATE TABLE suppressions_13 (
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    address          TEXT NOT NULL,            -- lower-case
    reason           TEXT NOT NULL CHECK (reason = 'hard_bounce' OR reason = 'complaint' OR
                                          reason = 'manual' OR reason = 'unsubscribe'),
    source_email_id  TEXT,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (account_id, address)
);
INSERT INTO suppressions_13 (account_id, address, reason, source_email_id, created_at)
    SELECT account_id, address, CASE reason WHEN 'bounce' THEN 'hard_bounce' ELSE reason END,
           source_email_id, created_at
      FROM suppressions;
DROP TABLE suppressions;
ALTER TABLE suppressions_13 RENAME TO suppressions;

CREATE TABLE job_leases (
    job          TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    lease_until  INTEGER NOT NULL
) WITHOUT ROWID;
