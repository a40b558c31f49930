-- Version 15: an email's events found by its id (GET /v1/emails/{id}/events, issue 31's
-- dashboard; EmailStore::email_events). SQLite has had its index since version 1
-- (events_email). (Numbers 16 and 17 are other changes'.)

CREATE INDEX events_email ON events (email_id, seq) WHERE email_id IS NOT NULL;
