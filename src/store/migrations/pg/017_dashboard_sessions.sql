-- Version 17: the dashboard's sessions (docs/dashboard.md). A signed-in browser holds a random
-- session id in a cookie; the store keeps its SHA-256 (hex), never the id, with the key the
-- session acts with and its CSRF token. Every node of the store shares them. Expired sessions
-- are deleted by a periodic job (the index finds them). (Numbers 15 and 16 are other changes'.)

CREATE TABLE dashboard_sessions (
    id_hash     text COLLATE "C" PRIMARY KEY,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key_id      text COLLATE "C" NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    csrf_token  text NOT NULL,
    created_at  bigint NOT NULL,
    expires_at  bigint NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
