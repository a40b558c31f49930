"""Test mode (docs/test-mode.md): a key made with "test": true (POST /v1/api-keys, or the
CLI's `key create --test`) sends as a live key does — validated, idempotent, rate-limited,
stored and listed, over the API and over SMTP submission — but nothing of it ever leaves: a
real SMTP sink (aiosmtpd) that dnsmasq names as the MX of every domain sent to receives no
test mail, while a live email to it arrives. The special addresses of test.posthorn decide
each recipient's outcome at acceptance (delivered@ DELIVERED, bounced@ BOUNCED with a hard
5.1.1 bounce, complained@ DELIVERED then COMPLAINED, any other captured as DELIVERED), the
events reach a real webhook receiver signed (checked with the standardwebhooks npm package)
with "test": true, the suppression list neither blocks test mail nor grows from it, a test
key sends from sandbox@test.posthorn without a domain while a live key may not, and another
account's key cannot read the mail (404)."""
import email.message
import smtplib
import ssl
import time

import pytest

from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import SmtpSink
from support.webhook_receiver import verify

SENDER = "mail.example.com"
SANDBOX = "sandbox@test.posthorn"
SINK = "sink.example.net"
EMAIL_EVENTS = ["email.sent", "email.delivered", "email.bounced", "email.complained",
                "email.failed", "email.blocked", "email.delivery_delayed", "suppression.added"]


def send(ph, key, to, frm=SANDBOX, **extra):
    body = {"from": frm, "to": to, "subject": "Hello", "text": "Hi there.", **extra}
    return ph.request("POST", "/v1/emails", key=key, body=body)


def make_test_key(ph, key, **fields) -> dict:
    r = ph.request("POST", "/v1/api-keys", key=key,
                   body={"name": "test", "permission": "full", "test": True, **fields})
    assert r.status == 201, r
    made = r.json()
    assert made["test"] is True, made
    return made


def listed_total(ph, key) -> int:
    return ph.get("/v1/email", key=key).json()["total"]


def tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the server's certificate is self-signed in the data dir
    return ctx


@pytest.fixture
def world(posthorn_factory, dns):
    """A server whose delivery would reach the sink for every domain these tests send to:
    test.posthorn (the special addresses) and sink.example.net (a captured address)."""
    port = free_port()
    sink = SmtpSink("127.0.0.2", port).start()
    for domain in ("test.posthorn", SINK):
        dns.mx(domain, "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    ph = posthorn_factory(env={**dns_env(dns),
                               "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                               "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1,1,1",
                               "POSTHORN_DELIVERY_MX_PORT": str(port)}).start()
    live = ph.account_with_key("acme")
    verified_domain(ph, dns, live, SENDER)
    try:
        yield ph, live, sink
    finally:
        sink.stop()


def test_keys_are_made_test_over_the_api_and_the_cli(server):
    live = server.account_with_key("acme")
    made = make_test_key(server, live)
    assert made["key"] and made["permission"] == "full"
    out = server.cli("key", "create", "--account", "acme", "--test").stdout
    assert "test mode" in out, out
    keys = server.get("/v1/api-keys?sort_order=asc", key=live).json()["data"]
    assert [k["test"] for k in keys] == [False, True, True], keys
    assert " test" in server.cli("key", "list", "--account", "acme").stdout
    # A live key stays live when test is false; anything but a boolean is refused.
    r = server.request("POST", "/v1/api-keys", key=live,
                       body={"name": "l", "permission": "sending", "test": False})
    assert r.status == 201 and r.json()["test"] is False, r
    for bad in ("yes", 1, None, [], {}):
        msg = error(server.request("POST", "/v1/api-keys", key=live,
                                   body={"name": "x", "permission": "full", "test": bad}))
        assert "test must be true or false" in msg, msg
    assert len(server.get("/v1/api-keys", key=live).json()["data"]) == 4, "nothing more made"


def test_special_addresses_reach_their_status_with_signed_test_events(world, webhook_receiver):
    ph, live, sink = world
    tk = make_test_key(ph, live)["key"]
    rcv = webhook_receiver()
    r = ph.request("POST", "/v1/webhooks", key=live, body={"url": rcv.url, "events": EMAIL_EVENTS})
    assert r.status == 200, r
    secret = r.json()["secret"]
    # Suppressed: a live send to it is blocked, a test send is not.
    r = ph.request("POST", "/v1/suppressions", key=live, body={"email": f"held@{SINK}"})
    assert r.status == 200, r

    expect = {  # to -> (final status, recipient status, the events of the email in order)
        "delivered@test.posthorn": ("DELIVERED", "DELIVERED", ["email.sent", "email.delivered"]),
        "bounced@test.posthorn": ("BOUNCED", "BOUNCED", ["email.bounced"]),
        "complained@test.posthorn": ("COMPLAINED", "COMPLAINED",
                                     ["email.sent", "email.delivered", "email.complained"]),
        f"someone@{SINK}": ("DELIVERED", "DELIVERED", ["email.sent", "email.delivered"]),
        f"held@{SINK}": ("DELIVERED", "DELIVERED", ["email.sent", "email.delivered"]),
    }
    ids = {}
    for to, (status, rstatus, _) in expect.items():
        r = send(ph, tk, to)
        assert r.status == 200, r
        assert r.json()["status"] == status, (to, r.json())  # the answer says how it ends
        ids[to] = r.json()["id"]
        e = ph.get(f"/v1/emails/{ids[to]}", key=tk).json()
        assert e["test"] is True and e["status"] == status, e
        (rec,) = e["recipients"]
        assert rec["status"] == rstatus and rec["attempts"] == 1, rec
        assert rec["next_attempt_at"] is None, rec
        assert e["from"] == SANDBOX, e
    bounced = ph.get(f"/v1/emails/{ids['bounced@test.posthorn']}", key=tk).json()
    (rec,) = bounced["recipients"]
    assert rec["bounce"]["type"] == "hard" and rec["bounce"]["code"] == "5.1.1", rec
    assert rec["last_response"].startswith("550 5.1.1 <bounced@test.posthorn>"), rec
    assert bounced["failed_at"] is not None and bounced["sent_at"] is None, bounced
    complained = ph.get(f"/v1/emails/{ids['complained@test.posthorn']}", key=tk).json()
    assert complained["delivered_at"] is not None, complained

    # Listed, with the flag; the status filter finds them.
    page = ph.get("/v1/email?limit=100", key=live).json()
    assert {e["id"]: e["test"] for e in page["data"]} == {i: True for i in ids.values()}
    bounced_only = ph.get("/v1/email?status=BOUNCED", key=live).json()["data"]
    assert [e["id"] for e in bounced_only] == [ids["bounced@test.posthorn"]]

    # Every event as a live email would fire, signed, with "test": true.
    total = sum(len(ev) for _, _, ev in expect.values())

    def email_calls():
        return [q for q in rcv.requests if q.json()["type"].startswith("email.")]
    wait_for(lambda: len(email_calls()) >= total, timeout=30, what=f"{total} events")
    time.sleep(1.5)  # and no more than those
    assert len(email_calls()) == total, [q.json()["type"] for q in rcv.requests]
    # The only suppression.added is that of the manual entry (if it was routed after the
    # webhook was made): a test bounce or complaint adds none.
    added = [q.json()["data"]["email"] for q in rcv.of_type("suppression.added")]
    assert added in ([], [f"held@{SINK}"]), added
    seen = {}
    for req in email_calls():
        v = verify(secret, req)
        assert v.ok, (v.error, req.headers, req.body)
        body = req.json()
        assert body["data"]["test"] is True, body
        seen.setdefault(body["data"]["email_id"], []).append(body["type"])
    for to, (_, _, events) in expect.items():
        assert sorted(seen[ids[to]]) == sorted(events), (to, seen[ids[to]])
    complained_event = rcv.of_type("email.complained")[0].json()
    assert [r["email"] for r in complained_event["data"]["recipients"]] == \
        ["complained@test.posthorn"], complained_event
    bounced_event = rcv.of_type("email.bounced")[0].json()
    assert bounced_event["data"]["recipients"][0]["bounce"]["type"] == "hard", bounced_event

    # Never counted against the suppression list: still just the manual entry.
    sup = ph.get("/v1/suppressions", key=live).json()
    assert [s["email"] for s in sup["data"]] == [f"held@{SINK}"], sup
    assert ph.get("/v1/suppressions/bounced@test.posthorn", key=live).status == 404

    # A live email reaches the sink (so the sink listens), with "test": false; none of the
    # test mail ever did.
    r = send(ph, live, f"live@{SINK}", frm=f"hello@{SENDER}")
    assert r.status == 200 and r.json()["status"] == "QUEUED", r
    (msg,) = sink.wait_messages(1)
    assert msg.rcpt_tos == [f"live@{SINK}"], msg.rcpt_tos
    live_id = r.json()["id"]
    wait_for(lambda: ph.get(f"/v1/emails/{live_id}", key=live).json()["status"] == "DELIVERED",
             timeout=20, what="the live email delivered")
    assert ph.get(f"/v1/emails/{live_id}", key=live).json()["test"] is False
    live_events = wait_for(
        lambda: [q.json() for q in rcv.requests
                 if q.json()["data"].get("email_id") == live_id] or None,
        timeout=20, what="the live email's events")
    assert all(e["data"]["test"] is False for e in live_events), live_events
    time.sleep(1)
    assert len(sink.messages) == 1, [m.rcpt_tos for m in sink.messages]
    assert sink.rcpt_attempts == [f"live@{SINK}"], sink.rcpt_attempts


def test_sandbox_sender_is_for_test_keys_only(world):
    ph, live, sink = world
    tk = make_test_key(ph, live)["key"]
    msg = error(send(ph, live, "delivered@test.posthorn"), 403, "DOMAIN_NOT_VERIFIED")
    assert "test.posthorn" in msg and "test key" in msg, msg
    # A test key from a domain the account has not verified: refused as for a live key.
    error(send(ph, tk, "delivered@test.posthorn", frm="me@unverified.example"), 403,
          "DOMAIN_NOT_VERIFIED")
    error(send(ph, tk, "delivered@test.posthorn", frm="other@test.posthorn"), 403,
          "DOMAIN_NOT_VERIFIED")
    # From the account's verified domain: accepted, in test mode all the same.
    r = send(ph, tk, f"someone@{SINK}", frm=f"hello@{SENDER}")
    assert r.status == 200, r
    e = ph.get(f"/v1/emails/{r.json()['id']}", key=live).json()
    assert e["test"] is True and e["status"] == "DELIVERED", e
    # A test key tied to a domain sends only from it, the sandbox sender included.
    tied = make_test_key(ph, live, domain=SENDER)["key"]
    error(send(ph, tied, "delivered@test.posthorn"), 403, "FORBIDDEN")
    assert send(ph, tied, "delivered@test.posthorn", frm=f"hi@{SENDER}").status == 200
    assert listed_total(ph, live) == 2, "the refused sends stored nothing"
    time.sleep(1.5)
    assert sink.connections == 0 and sink.messages == [], "no test mail left"


def test_validation_idempotency_and_rate_limit_as_for_a_live_key(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_LIMITS_SEND_RATE_PER_MINUTE": "3"}).start()
    live = ph.account_with_key("acme")
    tk = make_test_key(ph, live)["key"]
    for body, code in [({"from": SANDBOX, "to": "bad", "subject": "s", "text": "t"},
                        "INVALID_EMAIL"),
                       ({"from": SANDBOX, "subject": "s", "text": "t"}, "VALIDATION_ERROR"),
                       ({"from": SANDBOX, "to": "a@b.example", "text": "t", "test": True},
                        "VALIDATION_ERROR")]:
        error(ph.request("POST", "/v1/emails", key=tk, body=body), 400, code)
    assert listed_total(ph, live) == 0, "refused sends count and store nothing"
    first = send(ph, tk, "delivered@test.posthorn", idempotencyKey="once")
    again = send(ph, tk, "delivered@test.posthorn", idempotencyKey="once")
    assert first.status == again.status == 200
    assert first.json() == again.json(), (first.json(), again.json())
    assert first.json()["status"] == "DELIVERED"
    assert listed_total(ph, live) == 1
    for i in range(2):
        assert send(ph, tk, f"user{i}@example.net").status == 200
    r = send(ph, tk, "delivered@test.posthorn")
    error(r, 429, "RATE_LIMITED")
    assert 1 <= int(r.headers["retry-after"]) <= 60
    assert listed_total(ph, live) == 3


def test_smtp_submission_with_a_test_key(world):
    ph, live, sink = world
    tk = make_test_key(ph, live)["key"]
    m = email.message.EmailMessage()
    m["From"] = f"Sandbox <{SANDBOX}>"
    m["To"] = "bounced@test.posthorn"
    m["Cc"] = f"someone@{SINK}"
    m["Subject"] = "over SMTP in test mode"
    m.set_content("Hello.\n")
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.ehlo("client.test")
        s.starttls(context=tls_context())
        s.ehlo("client.test")
        s.login(tk, tk)
        assert s.send_message(m) == {}
    (e,) = ph.get("/v1/email", key=live).json()["data"]
    assert e["test"] is True and e["status"] == "BOUNCED", e
    full = ph.get(f"/v1/emails/{e['id']}", key=live).json()
    assert {r["email"]: r["status"] for r in full["recipients"]} == {
        "bounced@test.posthorn": "BOUNCED", f"someone@{SINK}": "DELIVERED"}, full
    # The live key may not send from the sandbox sender: refused at MAIL FROM.
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.ehlo("client.test")
        s.starttls(context=tls_context())
        s.ehlo("client.test")
        s.login(live, live)
        code, text = s.mail(SANDBOX)
        assert code == 550 and b"5.7.1" in text, (code, text)
    time.sleep(1.5)
    assert sink.connections == 0 and sink.messages == [], "no test mail left"
    assert ph.get("/v1/suppressions", key=live).json()["data"] == []


def test_another_account_cannot_read_it(server):
    a = server.account_with_key("a")
    b = server.account_with_key("b")
    tk = make_test_key(server, a)["key"]
    r = send(server, tk, "delivered@test.posthorn")
    assert r.status == 200, r
    em = r.json()["id"]
    error(server.get(f"/v1/emails/{em}", key=b), 404, "NOT_FOUND")
    assert server.get("/v1/email", key=b).json()["total"] == 0
    b_test = make_test_key(server, b)["key"]
    error(server.get(f"/v1/emails/{em}", key=b_test), 404, "NOT_FOUND")
    assert server.get(f"/v1/emails/{em}", key=a).json()["test"] is True
