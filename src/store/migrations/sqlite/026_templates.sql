-- Version 26: stored templates (docs/templates.md). The parts are Mustache text as the
-- account gave them; variables holds the defaults, a JSON object. A name is unique in its
-- account (the API finds a template by id or by name).

CREATE TABLE templates (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    subject     TEXT NOT NULL,
    html        TEXT,
    text        TEXT,
    variables   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX templates_account ON templates(account_id, created_at, id);
