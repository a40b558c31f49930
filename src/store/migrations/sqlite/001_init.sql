-- posthorn schema, version 1: every resource of DESIGN.md, so that later features add
-- code rather than rewrite tables. Times are INTEGER milliseconds since the Unix epoch
-- (UTC); ids are the prefixed, time-sortable strings of core/id.hpp.

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    prefix      TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,          -- hex SHA-256 of the key; the key is never stored
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE domains (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,            -- lower-case, IDN as punycode
    status           TEXT NOT NULL DEFAULT 'NOT_STARTED'
                     CHECK (status IN ('NOT_STARTED', 'PENDING', 'VERIFIED', 'FAILED')),
    token            TEXT NOT NULL UNIQUE,     -- the DNS label in the DKIM CNAME targets
    sending          INTEGER NOT NULL DEFAULT 1,
    inbound          INTEGER NOT NULL DEFAULT 0,
    open_tracking    INTEGER NOT NULL DEFAULT 0,
    click_tracking   INTEGER NOT NULL DEFAULT 0,
    records          TEXT NOT NULL DEFAULT '{}', -- JSON: each record with its last status
    first_verify_at  INTEGER,
    last_checked_at  INTEGER,
    next_check_at    INTEGER,
    verified_at      INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX domains_name ON domains(name);
CREATE INDEX domains_next_check ON domains(next_check_at);

CREATE TABLE dkim_keys (
    id           TEXT PRIMARY KEY,
    domain_id    TEXT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    selector     TEXT NOT NULL,
    private_key  BLOB NOT NULL,                -- encrypted with the master key of the data dir
    public_key   TEXT NOT NULL,                -- base64 SubjectPublicKeyInfo, the p= of the TXT
    active       INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    UNIQUE (domain_id, selector)
);

CREATE TABLE emails (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id        TEXT REFERENCES domains(id) ON DELETE SET NULL,
    status           TEXT NOT NULL DEFAULT 'QUEUED'
                     CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED',
                                       'COMPLAINED', 'BLOCKED')),
    from_email       TEXT NOT NULL,
    from_name        TEXT,
    to_display       TEXT NOT NULL,            -- the To recipients joined by ", "
    subject          TEXT NOT NULL,
    message_id       TEXT NOT NULL,            -- the Message-ID header, without <>
    return_token     TEXT NOT NULL UNIQUE,     -- bounces+<token>@hostname matches DSNs to it
    track_opens      INTEGER NOT NULL DEFAULT 0,
    track_clicks     INTEGER NOT NULL DEFAULT 0,
    source           TEXT NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'smtp')),
    size_bytes       INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    queued_at        INTEGER NOT NULL,
    sent_at          INTEGER,
    delivered_at     INTEGER,
    failed_at        INTEGER,
    opened_at        INTEGER,
    clicked_at       INTEGER,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX emails_account_created ON emails(account_id, created_at);
CREATE INDEX emails_account_to ON emails(account_id, to_display);

-- The message as built (before DKIM signing), kept apart so that scans of emails stay small.
CREATE TABLE email_bodies (
    email_id  TEXT PRIMARY KEY REFERENCES emails(id) ON DELETE CASCADE,
    raw       BLOB NOT NULL
);

CREATE TABLE envelopes (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email_id          TEXT NOT NULL UNIQUE REFERENCES emails(id) ON DELETE CASCADE,
    subject           TEXT NOT NULL,
    from_email        TEXT NOT NULL,
    from_name         TEXT,
    total_recipients  INTEGER NOT NULL,
    created_at        INTEGER NOT NULL
);
CREATE INDEX envelopes_account_created ON envelopes(account_id, created_at);

-- One row per recipient: the unit of delivery, of retry and of the queue.
CREATE TABLE recipients (
    id               INTEGER PRIMARY KEY,
    email_id         TEXT NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    address          TEXT NOT NULL,
    domain           TEXT NOT NULL,            -- lower-case destination domain, for grouping
    type             TEXT NOT NULL CHECK (type IN ('to', 'cc', 'bcc')),
    status           TEXT NOT NULL DEFAULT 'QUEUED'
                     CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED',
                                       'COMPLAINED', 'BLOCKED')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,                  -- NULL once final
    lease_owner      TEXT,                     -- node that claimed it (multi-node Postgres)
    lease_until      INTEGER,
    last_response    TEXT,                     -- the remote server's reply, verbatim
    sent_at          INTEGER,
    final_at         INTEGER,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX recipients_email ON recipients(email_id);
CREATE INDEX recipients_due ON recipients(next_attempt_at) WHERE next_attempt_at IS NOT NULL;

CREATE TABLE inbound_emails (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id    TEXT REFERENCES domains(id) ON DELETE SET NULL,
    from_email   TEXT NOT NULL,
    from_name    TEXT,
    to_address   TEXT NOT NULL,
    subject      TEXT NOT NULL DEFAULT '',
    reply_to     TEXT,
    cc           TEXT,                         -- JSON array or NULL
    bcc          TEXT,                         -- JSON array or NULL
    text_body    TEXT,
    html_body    TEXT,
    headers      TEXT NOT NULL DEFAULT '[]',   -- JSON array of [name, value]
    raw          BLOB NOT NULL,
    received_at  INTEGER NOT NULL
);
CREATE INDEX inbound_account_received ON inbound_emails(account_id, received_at);

CREATE TABLE inbound_attachments (
    inbound_id    TEXT NOT NULL REFERENCES inbound_emails(id) ON DELETE CASCADE,
    idx           INTEGER NOT NULL,
    filename      TEXT,
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL,
    content_id    TEXT,
    content       BLOB NOT NULL,
    PRIMARY KEY (inbound_id, idx)
);

CREATE TABLE request_logs (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    method       TEXT NOT NULL,
    url          TEXT NOT NULL,
    status       INTEGER NOT NULL,
    duration_ms  INTEGER NOT NULL,
    ip           TEXT NOT NULL DEFAULT '',
    user_agent   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX request_logs_account_created ON request_logs(account_id, created_at, id);
CREATE INDEX request_logs_created ON request_logs(created_at);

CREATE TABLE webhooks (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,                 -- JSON array of event names
    active      INTEGER NOT NULL DEFAULT 1,
    secret      BLOB NOT NULL,                 -- the signing key (whsec_ is its base64)
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id);

-- The event outbox: every state change writes one, webhooks read them.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type        TEXT NOT NULL,
    email_id    TEXT,
    data        TEXT NOT NULL,                 -- JSON
    created_at  INTEGER NOT NULL
);
CREATE INDEX events_account_created ON events(account_id, created_at);
CREATE INDEX events_email ON events(email_id);

CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY,
    webhook_id       TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id         TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    created_at       INTEGER NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';

-- Every attempt of a webhook delivery, for GET /webhooks/{id}/deliveries.
CREATE TABLE webhook_attempts (
    id           INTEGER PRIMARY KEY,
    delivery_id  INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    status_code  INTEGER,                      -- NULL when no HTTP answer came
    error        TEXT,
    duration_ms  INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id);

CREATE TABLE suppressions (
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    address          TEXT NOT NULL,            -- lower-case
    reason           TEXT NOT NULL CHECK (reason IN ('bounce', 'complaint', 'manual')),
    source_email_id  TEXT,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (account_id, address)
);

CREATE TABLE idempotency_keys (
    account_id       TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key              TEXT NOT NULL,
    email_id         TEXT,
    response_status  INTEGER NOT NULL,
    response_body    TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys(expires_at);
