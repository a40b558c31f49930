-- posthorn's schema on PostgreSQL, version 1 (docs/postgresql.md): every table of the
-- store, written for PostgreSQL rather than copied from the SQLite back end's fourteen steps.
--
-- Times are bigint milliseconds since the Unix epoch (UTC); ids are the prefixed,
-- time-sortable strings of core/id.hpp. Every text column is COLLATE "C": the lists sort
-- text byte by byte, as the SQLite back end does (the store contract: "B" before "a"), and
-- ILIKE under "C" folds ASCII letters only, as SQLite's LIKE does, whatever the database's
-- own locale. Searches are case-insensitive substrings (ILIKE '%…%'), served by pg_trgm's
-- GIN indexes. Nothing here decides: no trigger, no product rule (CONVENTIONS §3).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE accounts (
    id          text COLLATE "C" PRIMARY KEY,
    name        text COLLATE "C" NOT NULL UNIQUE,
    created_at  bigint NOT NULL
);

CREATE TABLE api_keys (
    id          text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    prefix      text COLLATE "C" NOT NULL,
    hash        text COLLATE "C" NOT NULL UNIQUE,  -- hex SHA-256; the key is never stored
    created_at  bigint NOT NULL,
    revoked_at  bigint
);
CREATE INDEX api_keys_account ON api_keys (account_id, id);

CREATE TABLE domains (
    id               text COLLATE "C" PRIMARY KEY,
    account_id       text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name             text COLLATE "C" NOT NULL,   -- lower-case, IDN as punycode
    status           text COLLATE "C" NOT NULL
                     CHECK (status IN ('NOT_STARTED', 'PENDING', 'VERIFIED', 'FAILED')),
    token            text COLLATE "C" NOT NULL UNIQUE,  -- the DNS label of the DKIM targets
    sending          boolean NOT NULL,
    inbound          boolean NOT NULL,
    open_tracking    boolean NOT NULL,
    click_tracking   boolean NOT NULL,
    records          text COLLATE "C" NOT NULL,   -- JSON: the records object of the API
    first_verify_at  bigint,
    last_checked_at  bigint,
    next_check_at    bigint,
    verified_at      bigint,
    created_at       bigint NOT NULL,
    updated_at       bigint NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX domains_name ON domains (name);
CREATE INDEX domains_account_created ON domains (account_id, created_at, id);
CREATE INDEX domains_next_check ON domains (next_check_at) WHERE next_check_at IS NOT NULL;

CREATE TABLE dkim_keys (
    id           text COLLATE "C" PRIMARY KEY,
    domain_id    text COLLATE "C" NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    selector     text COLLATE "C" NOT NULL,
    private_key  bytea NOT NULL,                  -- sealed with the master key
    public_key   text COLLATE "C" NOT NULL,       -- base64 SPKI, the p= of the TXT record
    active       boolean NOT NULL,
    created_at   bigint NOT NULL,
    UNIQUE (domain_id, selector)
);

-- An email with its envelope (two columns of the row) and its message as built. The message
-- is a column: PostgreSQL keeps a large value out of the row (TOAST), so an update of the
-- email's status does not copy it, and a list never reads it.
CREATE TABLE emails (
    id                   text COLLATE "C" PRIMARY KEY,
    account_id           text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    domain_id            text COLLATE "C" REFERENCES domains (id) ON DELETE SET NULL,
    envelope_id          text COLLATE "C" NOT NULL,
    status               text COLLATE "C" NOT NULL
                         CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED',
                                           'COMPLAINED', 'BLOCKED')),
    from_email           text COLLATE "C" NOT NULL,
    from_name            text COLLATE "C",
    to_display           text COLLATE "C" NOT NULL,  -- the To recipients joined by ", "
    subject              text COLLATE "C" NOT NULL,
    message_id           text COLLATE "C" NOT NULL,
    return_token         text COLLATE "C" NOT NULL,  -- bounces+<token>: the email's id, then more
    -- Every recipient's address, one a line (addresses never hold a line break): what a
    -- search of the list matches, with one trigram index for the email, not one per recipient.
    recipient_addresses  text COLLATE "C" NOT NULL,
    track_opens          boolean NOT NULL,
    track_clicks         boolean NOT NULL,
    source               text COLLATE "C" NOT NULL CHECK (source IN ('api', 'smtp')),
    size_bytes           bigint NOT NULL,
    total_recipients     integer NOT NULL,
    created_at           bigint NOT NULL,
    queued_at            bigint NOT NULL,
    sent_at              bigint,
    delivered_at         bigint,
    failed_at            bigint,
    opened_at            bigint,
    clicked_at           bigint,
    updated_at           bigint NOT NULL,
    raw                  bytea NOT NULL
) WITH (fillfactor = 90);  -- room for the updates of a delivery on the row's page (HOT)
-- The lists: an account's emails by id (an id begins with its millisecond, so this is the
-- order of time), and by their To for sort_by=to_email.
CREATE INDEX emails_account_id ON emails (account_id, id);
CREATE INDEX emails_account_to ON emails (account_id, to_display, id);
-- Tokens of the first versions (26 random characters) do not begin with their email's id.
CREATE INDEX emails_old_tokens ON emails (return_token) WHERE length(return_token) = 26;
-- Searches: the emails list matches the subject and the recipients, the envelopes list the
-- subject, the sender and the envelope's id.
CREATE INDEX emails_search ON emails USING gin (
    subject gin_trgm_ops, recipient_addresses gin_trgm_ops, from_email gin_trgm_ops,
    from_name gin_trgm_ops, envelope_id gin_trgm_ops);

-- One row per recipient: the unit of delivery, of retry and of the queue. An open
-- recipient has its next_attempt_at (the time it was queued, until it is tried); a final one
-- has none.
CREATE TABLE recipients (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email_id         text COLLATE "C" NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
    account_id       text COLLATE "C" NOT NULL,
    address          text COLLATE "C" NOT NULL,
    domain           text COLLATE "C" NOT NULL,
    type             text COLLATE "C" NOT NULL CHECK (type IN ('to', 'cc', 'bcc')),
    status           text COLLATE "C" NOT NULL
                     CHECK (status IN ('QUEUED', 'DELIVERED', 'BOUNCED', 'FAILED', 'BLOCKED',
                                       'COMPLAINED')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  bigint,
    lease_owner      text COLLATE "C",                 -- the node that claimed it
    lease_until      bigint,
    last_response    text COLLATE "C",
    sent_at          bigint,
    final_at         bigint,
    bounce_type      text COLLATE "C",
    bounce_code      text COLLATE "C",
    bounce_message   text COLLATE "C",
    updated_at       bigint NOT NULL
) WITH (fillfactor = 90);
CREATE INDEX recipients_email ON recipients (email_id, id);
-- Due recipients, never tried and tried before apart (a claim takes from both, so that
-- neither waits behind a backlog of the other).
CREATE INDEX recipients_fresh ON recipients (next_attempt_at, id)
    WHERE attempts = 0 AND next_attempt_at IS NOT NULL;
CREATE INDEX recipients_retry ON recipients (next_attempt_at, id)
    WHERE attempts > 0 AND next_attempt_at IS NOT NULL;
CREATE INDEX recipients_leased ON recipients (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE suppressions (
    account_id       text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address          text COLLATE "C" NOT NULL,     -- lower-case
    reason           text COLLATE "C" NOT NULL
                     CHECK (reason IN ('hard_bounce', 'complaint', 'manual', 'unsubscribe')),
    source_email_id  text COLLATE "C",
    created_at       bigint NOT NULL,
    PRIMARY KEY (account_id, address)
);

-- An account's idempotency key: one email per key until it expires. A create inserts the key
-- first (ON CONFLICT: the key of a create racing on another node waits for its commit).
CREATE TABLE idempotency_keys (
    account_id       text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key              text COLLATE "C" NOT NULL,
    email_id         text COLLATE "C" NOT NULL,
    response_status  integer NOT NULL,
    response_body    text COLLATE "C" NOT NULL,
    created_at       bigint NOT NULL,
    expires_at       bigint NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- The event outbox. `seq` orders the events as they were written; `routed` is set in the
-- transaction that writes an event's deliveries (route_events), which takes unrouted events
-- with FOR UPDATE SKIP LOCKED, so that routers on several nodes route each event once.
CREATE TABLE events (
    seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type        text COLLATE "C" NOT NULL,
    email_id    text COLLATE "C",
    data        text COLLATE "C" NOT NULL,          -- JSON
    created_at  bigint NOT NULL,
    routed      boolean NOT NULL DEFAULT false
);
CREATE INDEX events_unrouted ON events (seq) WHERE NOT routed;

CREATE TABLE webhooks (
    id          text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url         text COLLATE "C" NOT NULL,
    events      text[] COLLATE "C" NOT NULL,        -- event names, in the order given
    active      boolean NOT NULL,
    secret      bytea NOT NULL,                     -- the signing key
    created_at  bigint NOT NULL,
    updated_at  bigint NOT NULL
);
CREATE INDEX webhooks_account ON webhooks (account_id, created_at, id);

CREATE TABLE webhook_deliveries (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id       text COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id         text COLLATE "C" NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    state            text COLLATE "C" NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  bigint,
    lease_owner      text COLLATE "C",
    lease_until      bigint,
    created_at       bigint NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_owner)
    WHERE lease_owner IS NOT NULL;
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt      integer NOT NULL,
    status_code  integer,                            -- none when no HTTP answer came
    error        text COLLATE "C",
    duration_ms  bigint NOT NULL,
    created_at   bigint NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The request log, in the order GET /v1/logs reads it.
CREATE TABLE request_logs (
    account_id   text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   bigint NOT NULL,
    id           text COLLATE "C" NOT NULL,
    method       text COLLATE "C" NOT NULL,
    url          text COLLATE "C" NOT NULL,
    status       integer NOT NULL,
    duration_ms  bigint NOT NULL,
    ip           text COLLATE "C" NOT NULL,
    user_agent   text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, created_at, id)
);

CREATE TABLE inbound_emails (
    id           text COLLATE "C" PRIMARY KEY,
    account_id   text COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    domain_id    text COLLATE "C" REFERENCES domains (id) ON DELETE SET NULL,
    from_email   text COLLATE "C" NOT NULL,
    from_name    text COLLATE "C",
    to_address   text COLLATE "C" NOT NULL,
    subject      text COLLATE "C" NOT NULL,
    reply_to     text COLLATE "C",
    cc           text COLLATE "C",                   -- JSON array, or NULL
    bcc          text COLLATE "C",                   -- JSON array, or NULL
    raw          bytea NOT NULL,                     -- the message as received
    received_at  bigint NOT NULL
);
CREATE INDEX inbound_account_received ON inbound_emails (account_id, received_at, id);
CREATE INDEX inbound_search ON inbound_emails USING gin (
    from_email gin_trgm_ops, from_name gin_trgm_ops, to_address gin_trgm_ops,
    subject gin_trgm_ops);

CREATE TABLE inbound_attachments (
    inbound_id    text COLLATE "C" NOT NULL REFERENCES inbound_emails (id) ON DELETE CASCADE,
    idx           integer NOT NULL,
    filename      text COLLATE "C",
    content_type  text COLLATE "C" NOT NULL,
    size          bigint NOT NULL,
    content_id    text COLLATE "C",
    PRIMARY KEY (inbound_id, idx)
);

-- Periodic jobs that one node of several runs at a time.
CREATE TABLE job_leases (
    job          text COLLATE "C" PRIMARY KEY,
    owner        text COLLATE "C" NOT NULL,
    lease_until  bigint NOT NULL
);
