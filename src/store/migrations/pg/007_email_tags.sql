-- Version 7: an email's tags and metadata (POST /v1/emails `tags`, `metadata`; the
-- X-Posthorn-Tag and X-Posthorn-Metadata headers over SMTP). The row holds them as they are
-- read back with the email: `tags` one "name=value" a line (store/detail/tag_codec.hpp),
-- `metadata` the JSON object as serialized; both NULL when none was given.
--
-- A tag filter of the list (GET /v1/email?tag=name:value) is answered from email_tags: one
-- row per tag of an email, keyed so that the emails of an account with a tag are a range of
-- the key. Nothing is written to it for an email without tags.

ALTER TABLE emails ADD COLUMN tags text COLLATE "C";
ALTER TABLE emails ADD COLUMN metadata text COLLATE "C";

CREATE TABLE email_tags (
    account_id  text COLLATE "C" NOT NULL,
    name        text COLLATE "C" NOT NULL,
    value       text COLLATE "C" NOT NULL,
    email_id    text COLLATE "C" NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, name, value, email_id)
);
-- The foreign key's own: deleting an email (or an account) finds its tags.
CREATE INDEX email_tags_email ON email_tags (email_id);
