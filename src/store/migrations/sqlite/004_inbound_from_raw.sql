-- Version 4: an inbound email is stored once, as its raw message.
--
-- The text, HTML, headers and attachment contents were copies of parts of `raw`: every
-- received message went to disk twice (three times with attachments). They are now read
-- from `raw` when one email or one attachment is asked for; the columns that lists,
-- searches and sorts use stay.

ALTER TABLE inbound_emails DROP COLUMN text_body;
ALTER TABLE inbound_emails DROP COLUMN html_body;
ALTER TABLE inbound_emails DROP COLUMN headers;
ALTER TABLE inbound_attachments DROP COLUMN content;
