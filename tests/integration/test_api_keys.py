"""API keys over the API (issue 29): POST/GET/DELETE /v1/api-keys, the key shown once; a
`sending` key that only sends and reads what it sent (403 FORBIDDEN otherwise); a key tied
to a domain that sends only from it, over the API and SMTP submission; the account's last
full key that stays (409); another account's key (404); and a revocation that holds at once,
on every node of a shared PostgreSQL store too."""
import email.message
import hashlib
import re
import smtplib
import ssl

import pytest

from support import store
from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import wait_for

SENDER = "mail.example.com"
OTHER = "other.example.com"


def make_key(ph, key, **body):
    r = ph.request("POST", "/v1/api-keys", key=key, body=body)
    assert r.status == 201, r
    return r.json()


def keys_of(ph, key, **params):
    q = "&".join(f"{k}={v}" for k, v in params.items())
    r = ph.get("/v1/api-keys" + (f"?{q}" if q else ""), key=key)
    assert r.status == 200, r
    return r.json()


def send(ph, key, sender=SENDER, to="user@sink.example.net"):
    return ph.request("POST", "/v1/emails", key=key,
                      body={"from": f"Acme <hello@{sender}>", "to": [to], "subject": "hi",
                            "text": "Hello."})


def forbidden(r, *words):
    assert r.status == 403, r
    body = r.json()
    assert body["code"] == "FORBIDDEN" and body["status"] == 403, body
    for w in words:
        assert w in body["message"], body
    return body


@pytest.fixture
def world(tmp_path, posthorn_factory):
    """A server with the account acme (a CLI key) and two verified domains."""
    dns = Dnsmasq(tmp_path / "dns")
    dns.start()
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}).start()
    key = ph.account_with_key("acme")
    domains = {name: verified_domain(ph, dns, key, name) for name in (SENDER, OTHER)}
    yield ph, key, domains
    dns.stop()


def test_keys_are_made_listed_and_revoked_and_shown_once(server):
    full = server.account_with_key("acme")
    made = make_key(server, full, name="CI deploys", permission="sending")
    assert re.fullmatch(r"key_[0-9a-z]{26}", made["id"])
    assert re.fullmatch(r"ph_[0-9a-z]{32}", made["key"])
    assert made["prefix"] == made["key"][:11]
    assert made["name"] == "CI deploys" and made["permission"] == "sending"
    assert made["domain"] is None and made["domain_id"] is None
    assert made["revoked_at"] is None and made["created_at"].endswith("Z")
    assert "hash" not in made
    new = made["key"]
    assert server.get(f"/v1/emails/em_{'0' * 26}", key=new).status == 404, "the key works"

    listed = server.get("/v1/api-keys", key=full)
    assert listed.status == 200
    assert new.encode() not in listed.body and new[3:].encode() not in listed.body
    body = listed.json()
    assert body["pagination"] == {"page": 1, "limit": 20, "total": 2, "total_pages": 1,
                                  "has_more": False}
    by_id = {k["id"]: k for k in body["data"]}
    assert set(by_id) >= {made["id"]} and len(by_id) == 2
    cli_key = next(k for k in body["data"] if k["id"] != made["id"])
    assert cli_key["permission"] == "full", "a key made by the CLI is a full key"
    for k in body["data"]:
        assert "key" not in k and "hash" not in k
    assert [k["id"] for k in body["data"]] == sorted(by_id, reverse=True), "newest first"
    page = keys_of(server, full, limit=1, page=2, sort_order="asc")
    assert [k["id"] for k in page["data"]] == [made["id"]]
    assert page["pagination"]["has_more"] is False and page["pagination"]["total_pages"] == 2
    assert server.get("/v1/api-keys?limit=0", key=full).status == 400

    # Stored as a hash only.
    db = server.db()
    try:
        (stored,) = db.execute("SELECT hash FROM api_keys WHERE id = ?", (made["id"],)).fetchone()
    finally:
        db.close()
    assert stored == hashlib.sha256(new.encode()).hexdigest()

    gone = server.request("DELETE", f"/v1/api-keys/{made['id']}", key=full)
    assert gone.status == 200, gone
    assert gone.json()["id"] == made["id"] and gone.json()["revoked_at"]
    assert "key" not in gone.json()
    r = server.get(f"/v1/emails/em_{'0' * 26}", key=new)
    assert r.status == 401 and "revoked" in r.json()["message"], "refused from the next request"
    again = server.request("DELETE", f"/v1/api-keys/{made['id']}", key=full)
    assert again.status == 200 and again.json()["revoked_at"] == gone.json()["revoked_at"]
    listed = {k["id"]: k for k in keys_of(server, full)["data"]}
    assert listed[made["id"]]["revoked_at"] == gone.json()["revoked_at"]
    for bad in ("key_doesnotexist", f"key_{'0' * 26}", "nothing"):
        r = server.request("DELETE", f"/v1/api-keys/{bad}", key=full)
        assert r.status == 404 and r.json()["code"] == "NOT_FOUND", (bad, r)


def test_bad_input_is_400_and_makes_nothing(server):
    full = server.account_with_key("acme")
    bad = [
        ([], "body must be a JSON object"),
        ({"permission": "full"}, "name is required"),
        ({"name": "x"}, "permission is required"),
        ({"name": "x", "permission": "admin"}, "permission must be"),
        ({"name": "x", "permission": "Full"}, "permission must be"),
        ({"name": "x", "permission": True}, "permission must be"),
        ({"name": "", "permission": "full"}, "1 to 100"),
        ({"name": "é" * 101, "permission": "full"}, "1 to 100"),
        ({"name": "a\nb", "permission": "full"}, "control characters"),
        ({"name": 7, "permission": "full"}, "name must be a string"),
        ({"name": "x", "permission": "full", "domain": 42}, "domain must be"),
        ({"name": "x", "permission": "full", "domain": ""}, "domain must be"),
        ({"name": "x", "permission": "full", "scopes": ["all"]}, "unknown field 'scopes'"),
    ]
    for body, words in bad:
        r = server.request("POST", "/v1/api-keys", key=full, body=body)
        assert r.status == 400, (body, r)
        assert r.json()["code"] == "VALIDATION_ERROR" and words in r.json()["message"], (body, r)
    r = server.request("POST", "/v1/api-keys", key=full, body="{not json",
                       headers={"Content-Type": "application/json"})
    assert r.status == 400 and r.json()["code"] == "INVALID_JSON"
    r = server.request("POST", "/v1/api-keys", key=full,
                       body={"name": "x", "permission": "full", "domain": "nowhere.example"})
    assert r.status == 404 and "nowhere.example" in r.json()["message"]
    assert keys_of(server, full)["pagination"]["total"] == 1, "nothing was made"
    # 100 characters (not bytes) is a name.
    assert make_key(server, full, name="é" * 100, permission="full")["name"] == "é" * 100
    assert server.request("PUT", "/v1/api-keys", key=full).status == 405


def test_a_sending_key_only_sends_and_reads_what_it_sent(world):
    ph, full, domains = world
    sending = make_key(ph, full, name="app", permission="sending")["key"]
    refused = {
        ("GET", "/v1/domains"): "manage domains",
        ("POST", "/v1/domains"): "manage domains",
        ("GET", f"/v1/domains/{SENDER}"): "manage domains",
        ("PATCH", f"/v1/domains/{SENDER}"): "manage domains",
        ("GET", "/v1/webhooks"): "manage webhooks",
        ("POST", "/v1/webhooks"): "manage webhooks",
        ("GET", "/v1/logs"): "read the request log",
        ("GET", "/v1/email"): "list or read",
        ("GET", "/v1/emails/envelope"): "list or read",
        ("GET", "/v1/emails/inbound"): "read inbound email",
        ("GET", "/v1/queue"): "read the queue",
        ("GET", "/v1/api-keys"): "manage API keys",
        ("POST", "/v1/api-keys"): "manage API keys",
        ("DELETE", f"/v1/api-keys/key_{'0' * 26}"): "manage API keys",
    }
    bodies = {"POST /v1/domains": {"domain": "third.example.com"},
              f"PATCH /v1/domains/{SENDER}": {"config": {"sending": False}},
              "POST /v1/webhooks": {"url": "https://hooks.example.com/x", "events": ["email.sent"]},
              "POST /v1/api-keys": {"name": "mine", "permission": "full"}}
    for (method, path), what in refused.items():
        r = ph.request(method, path, key=sending, body=bodies.get(f"{method} {path}"))
        forbidden(r, "may only send email", f"a full-access key is needed to {what}")
    # Nothing the refused requests asked for happened.
    listed = ph.get("/v1/domains", key=full).json()
    assert sorted(d["domain"] for d in listed["data"]) == sorted([SENDER, OTHER])
    assert all(d["config"]["sending"] for d in listed["data"])
    assert ph.get("/v1/webhooks", key=full).json()["pagination"]["total"] == 0
    assert keys_of(ph, full)["pagination"]["total"] == 2

    mine = send(ph, sending)
    assert mine.status == 200, mine
    mine = mine.json()["id"]
    r = ph.get(f"/v1/emails/{mine}", key=sending)
    assert r.status == 200 and r.json()["id"] == mine and r.json()["recipients"]
    theirs = send(ph, full).json()["id"]
    forbidden(ph.get(f"/v1/emails/{theirs}", key=sending), "only read the emails it sent")
    assert ph.get(f"/v1/emails/{theirs}", key=full).status == 200
    assert ph.get(f"/v1/emails/{mine}", key=full).status == 200, "a full key reads them all"
    second = make_key(ph, full, name="app 2", permission="sending")["key"]
    forbidden(ph.get(f"/v1/emails/{mine}", key=second), "only read the emails it sent")
    # Another account's email is not found, whatever the key.
    other = ph.account_with_key("globex")
    assert ph.get(f"/v1/emails/{mine}", key=other).status == 404
    assert ph.get(f"/v1/emails/em_{'0' * 26}", key=sending).status == 404

    # SMTP submission is sending: a sending key may use it, and reads what it sent there.
    msg = email.message.EmailMessage()
    msg["From"] = f"hello@{SENDER}"
    msg["To"] = "user@sink.example.net"
    msg["Subject"] = "by smtp"
    msg.set_content("Hello.\n")
    with smtp_session(ph, sending) as s:
        s.send_message(msg)
    listed = wait_for(lambda: [e for e in ph.get("/v1/email", key=full).json()["data"]
                               if e["subject"] == "by smtp"], what="the SMTP email")
    assert ph.get(f"/v1/emails/{listed[0]['id']}", key=sending).status == 200


def tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the server's certificate is self-signed in the data dir
    return ctx


class smtp_session:
    def __init__(self, ph, key):
        self.s = smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10)
        self.key = key

    def __enter__(self):
        self.s.ehlo("client.test")
        self.s.starttls(context=tls_context())
        self.s.ehlo("client.test")
        self.s.login(self.key, self.key)
        return self.s

    def __exit__(self, *exc):
        self.s.quit()


def test_a_domain_key_sends_only_from_its_domain(world):
    ph, full, domains = world
    by_name = make_key(ph, full, name="shop", permission="sending", domain=SENDER.upper())
    assert by_name["domain_id"] == domains[SENDER]["id"] and by_name["domain"] == SENDER
    by_id = make_key(ph, full, name="shop full", permission="full",
                     domain=domains[SENDER]["id"])
    assert by_id["domain"] == SENDER and by_id["permission"] == "full"
    listed = {k["id"]: k for k in keys_of(ph, full)["data"]}
    assert listed[by_name["id"]]["domain"] == SENDER
    assert listed[by_name["id"]]["domain_id"] == domains[SENDER]["id"]

    for k in (by_name["key"], by_id["key"]):
        assert send(ph, k).status == 200
        forbidden(send(ph, k, sender=OTHER), f"may only send from {SENDER}", OTHER)
        forbidden(send(ph, k, sender="unknown.example.org"), f"may only send from {SENDER}")
    assert send(ph, full, sender=OTHER).status == 200, "a key of no domain sends from any"

    # SMTP submission: the envelope sender at MAIL, the header From at the end of DATA.
    with smtp_session(ph, by_name["key"]) as s:
        code, text = s.mail(f"hello@{OTHER}")
        assert code == 550 and text.startswith(b"5.7.1") and SENDER.encode() in text, text
        s.rset()
        assert s.mail(f"hello@{SENDER}")[0] == 250
        assert s.rcpt("user@sink.example.net")[0] == 250
        msg = email.message.EmailMessage()
        msg["From"] = f"hello@{OTHER}"
        msg["To"] = "user@sink.example.net"
        msg["Subject"] = "forged"
        msg.set_content("Hello.\n")
        code, text = s.data(msg.as_string())
        assert code == 550 and b"5.7.1" in text and SENDER.encode() in text, text
    subjects = [e["subject"] for e in ph.get("/v1/email", key=full).json()["data"]]
    assert "forged" not in subjects

    # Another account's domain cannot be named.
    other = ph.account_with_key("globex")
    r = ph.request("POST", "/v1/api-keys", key=other,
                   body={"name": "x", "permission": "sending", "domain": domains[SENDER]["id"]})
    assert r.status == 404 and r.json()["code"] == "NOT_FOUND"
    r = ph.request("POST", "/v1/api-keys", key=other,
                   body={"name": "x", "permission": "sending", "domain": SENDER})
    assert r.status == 404


def test_the_last_full_key_stays(server):
    server.create_account("acme")
    first_id, first = server.create_key("acme")
    sending = make_key(server, first, name="app", permission="sending")
    r = server.request("DELETE", f"/v1/api-keys/{first_id}", key=first)
    assert r.status == 409, r
    assert r.json()["code"] == "CONFLICT" and "last full-access key" in r.json()["message"]
    assert server.get("/v1/api-keys", key=first).status == 200, "the key still works"

    second = make_key(server, first, name="admin", permission="full")
    r = server.request("DELETE", f"/v1/api-keys/{first_id}", key=second["key"])
    assert r.status == 200 and r.json()["revoked_at"]
    assert server.get("/v1/api-keys", key=first).status == 401
    r = server.request("DELETE", f"/v1/api-keys/{second['id']}", key=second["key"])
    assert r.status == 409, "a sending key is no full key"
    # A sending key may go, even with one full key left; and the operator may revoke any key.
    r = server.request("DELETE", f"/v1/api-keys/{sending['id']}", key=second["key"])
    assert r.status == 200
    assert "revoked" in server.cli("key", "revoke", second["id"]).stdout


def test_another_accounts_key_is_not_found(server):
    acme = server.account_with_key("acme")
    server.create_account("globex")
    globex_id, globex = server.create_key("globex")
    r = server.request("DELETE", f"/v1/api-keys/{globex_id}", key=acme)
    assert r.status == 404 and r.json()["code"] == "NOT_FOUND"
    assert server.get("/v1/api-keys", key=globex).status == 200, "it still works"
    ids = [k["id"] for k in keys_of(server, acme)["data"]]
    assert globex_id not in ids and len(ids) == 1


@pytest.mark.skipif(not store.on_pg(), reason="several nodes share a PostgreSQL store")
def test_a_revocation_holds_on_every_node(posthorn_factory):
    url = store.fresh_pg_database()
    a = posthorn_factory(env={"POSTHORN_DATABASE_URL": url, "POSTHORN_SERVER_NODE_ID": "a"},
                         name="a").start()
    b = posthorn_factory(env={"POSTHORN_DATABASE_URL": url, "POSTHORN_SERVER_NODE_ID": "b"},
                         name="b").start()
    full = a.account_with_key("acme")
    made = make_key(a, full, name="app", permission="sending")
    # Node b looks the key up (and may keep it in memory) before the revocation.
    probe = f"/v1/emails/em_{'0' * 26}"
    for _ in range(3):
        assert b.get(probe, key=made["key"]).status == 404
    assert a.request("DELETE", f"/v1/api-keys/{made['id']}", key=full).status == 200
    assert a.get(probe, key=made["key"]).status == 401, "at once on the node that revoked it"
    wait_for(lambda: b.get(probe, key=made["key"]).status == 401, timeout=3,
             what="node b to refuse the revoked key")
