-- Version 20: an email's tags and metadata (POST /v1/emails `tags`, `metadata`; the
-- X-Posthorn-Tag and X-Posthorn-Metadata headers over SMTP). The row holds them as they are
-- read back with the email: `tags` one "name=value" a line (store/detail/tag_codec.hpp),
-- `metadata` the JSON object as serialized; both NULL when none was given.
--
-- A tag filter of the list (GET /v1/email?tag=name:value) is answered from email_tags: one
-- row per tag of an email, keyed so that the emails of an account with a tag are a range of
-- the key. Nothing is written to it for an email without tags.

ALTER TABLE emails ADD COLUMN tags TEXT;
ALTER TABLE emails ADD COLUMN metadata TEXT;

CREATE TABLE email_tags (
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    value       TEXT NOT NULL,
    email_id    TEXT NOT NULL,
    PRIMARY KEY (account_id, name, value, email_id)
) WITHOUT ROWID;
