-- Version 3: webhook deliveries made from the event outbox.
--
-- Every event row fans out, in the transaction that writes it, into one pending delivery
-- per active webhook of its account that subscribes to its type: an event is never lost
-- between its write and its delivery, and no cursor has to be kept. A delivery is claimed
-- under a lease (like a queued recipient), so that a crash mid-attempt retries it.

ALTER TABLE webhook_deliveries ADD COLUMN lease_owner TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN lease_until INTEGER;
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id);

CREATE TRIGGER events_fan_out AFTER INSERT ON events
BEGIN
    INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at,
                                    created_at)
        SELECT w.id, NEW.id, 'pending', 0, NEW.created_at, NEW.created_at
          FROM webhooks w
         WHERE w.account_id = NEW.account_id AND w.active = 1
           AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = NEW.type);
END;
