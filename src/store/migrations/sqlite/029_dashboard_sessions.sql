-- Version 29: the dashboard's sessions (docs/dashboard.md). A signed-in browser holds a random
-- session id in a cookie; the store keeps its SHA-256 (hex), never the id, with the key the
-- session acts with and its CSRF token. Expired sessions are deleted by a periodic job (the
-- index finds them).

CREATE TABLE dashboard_sessions (
    id_hash     TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key_id      TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    csrf_token  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
