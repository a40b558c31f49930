-- Version 13: stored templates (docs/templates.md). The parts are Mustache text as the
-- account gave them; variables holds the defaults, a JSON object. A name is unique in its
-- account (the API finds a template by id or by name).

CREATE TABLE templates (
    id          text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        text COLLATE "C" NOT NULL,
    subject     text NOT NULL,
    html        text,
    text        text,
    variables   text NOT NULL,
    created_at  bigint NOT NULL,
    updated_at  bigint NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX templates_account ON templates (account_id, created_at, id);
