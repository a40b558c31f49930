"""Accounts and API keys: the CLI, Bearer authentication, hashed storage, revocation."""
import re
import time

from support import store


def test_account_and_key_cli(server):
    acc = server.create_account("acme")
    assert re.fullmatch(r"acc_[0-9a-z]{26}", acc)
    dup = server.cli("account", "create", "acme", check=False)
    assert dup.returncode == 1 and "exists" in dup.stderr

    key_id, key = server.create_key("acme")
    assert re.fullmatch(r"key_[0-9a-z]{26}", key_id)
    assert re.fullmatch(r"ph_[0-9a-z]{32}", key)
    listed = server.cli("key", "list", "--account", "acme").stdout
    assert key_id in listed and "active" in listed
    assert key not in listed and key[3:] not in listed, "the key itself is shown only once"

    missing = server.cli("key", "create", "--account", "nobody", check=False)
    assert missing.returncode == 1


def test_keys_are_stored_only_as_hashes(server):
    server.create_account("acme")
    _, key = server.create_key("acme")
    assert server.get("/v1/logs", key=key).status == 200
    server.stop()
    raw = b"".join(p.read_bytes() for p in server.data_dir.iterdir() if p.is_file())
    assert key.encode() not in raw and key[3:].encode() not in raw
    db = server.db()
    (stored,) = db.execute("SELECT hash FROM api_keys").fetchone()
    import hashlib
    assert stored == hashlib.sha256(key.encode()).hexdigest()
    server.start()


def test_requests_without_a_valid_key_are_401(server):
    key = server.account_with_key("acme")
    cases = [
        {},                                                   # no header
        {"Authorization": ""},
        {"Authorization": "Basic dXNlcjpwYXNz"},              # another scheme
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer ph_" + "0" * 32},           # well-formed, unknown
        {"Authorization": "Bearer " + key[:-1]},              # truncated
        {"Authorization": "Bearer " + key + "x"},
        {"Authorization": "Bearer " + key.upper()},
    ]
    for headers in cases:
        r = server.get("/v1/logs", headers=headers)
        assert r.status == 401, (headers, r)
        body = r.json()
        assert body["code"] == "UNAUTHORIZED" and body["status"] == 401 and body["message"]
        assert r.headers.get("www-authenticate") == "Bearer"
    # Unknown routes under /v1 also need a key: nothing is revealed without one.
    assert server.get("/v1/nothing-here").status == 401
    # The scheme is case-insensitive (RFC 7235).
    assert server.get("/v1/logs", headers={"Authorization": "bearer " + key}).status == 200


def test_revoked_key_is_refused_on_the_next_request(server):
    server.create_account("acme")
    key_id, key = server.create_key("acme")
    _, other = server.create_key("acme")
    conn = server.connection()
    assert server.request("GET", "/v1/logs", key=key, conn=conn).status == 200
    # Revoked by the CLI, in another process, while the server runs.
    out = server.cli("key", "revoke", key_id).stdout
    assert "revoked" in out
    r = server.request("GET", "/v1/logs", key=key, conn=conn)  # same keep-alive connection
    # On PostgreSQL the server hears of another process's change by a notification that comes
    # milliseconds after the commit (docs/postgresql.md): a request in that window may pass.
    deadline = time.monotonic() + (2.0 if store.on_pg() else 0.0)
    while r.status == 200 and time.monotonic() < deadline:
        time.sleep(0.02)
        r = server.request("GET", "/v1/logs", key=key, conn=conn)
    assert r.status == 401 and "revoked" in r.json()["message"]
    assert server.get("/v1/logs", key=other).status == 200, "other keys keep working"
    assert "revoked" in server.cli("key", "list", "--account", "acme").stdout
    assert server.cli("key", "revoke", "key_doesnotexist", check=False).returncode == 1
