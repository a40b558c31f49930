-- Version 23: DKIM rotation behind the CNAMEs users published (docs/domains.md, "Rotation"),
-- and the custom tracking domain (docs/tracking.md, "A tracking domain of your own").
-- dkim_selector names the selector whose key signs (its dkim_keys row is the active one);
-- dkim_pending the selector whose new key waits until the operator's zone serves it (NULL
-- when no rotation is under way); dkim_rotated_at the last switch.

ALTER TABLE domains ADD COLUMN dkim_selector TEXT NOT NULL DEFAULT 'ph1';
ALTER TABLE domains ADD COLUMN dkim_pending TEXT;
ALTER TABLE domains ADD COLUMN dkim_rotated_at INTEGER;
UPDATE domains SET dkim_selector = coalesce(
    (SELECT selector FROM dkim_keys k WHERE k.domain_id = domains.id AND k.active = 1), 'ph1');
-- The first label of the domain's tracking host <label>.<domain> (its CNAME is a record of the
-- records column, verified with the others).
ALTER TABLE domains ADD COLUMN tracking_label TEXT NOT NULL DEFAULT 'links';
CREATE INDEX domains_dkim_pending ON domains (dkim_pending) WHERE dkim_pending IS NOT NULL;
