-- Version 8: a webhook's secret can be rotated (POST /v1/webhooks/{id}/rotate-secret). The
-- secret it replaced still signs until previous_secret_until (both NULL when there is none),
-- so that receivers can move to the new one without losing a call.

ALTER TABLE webhooks ADD COLUMN previous_secret bytea;
ALTER TABLE webhooks ADD COLUMN previous_secret_until bigint;
