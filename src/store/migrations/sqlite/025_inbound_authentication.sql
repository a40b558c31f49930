-- Version 25: each inbound email keeps the receiver's SPF, DKIM and DMARC results (a JSON
-- object, docs/inbound.md "Authentication"); NULL for mail stored before.

ALTER TABLE inbound_emails ADD COLUMN authentication TEXT;
