"""The suppression list over the API (docs/suppressions.md): GET/POST /v1/suppressions,
GET/DELETE /v1/suppressions/{email} — each endpoint, pages, search and the reason filter,
bad input refused with nothing changed, another account's entry 404; the events
suppression.added (an API add, and a hard bounce through delivery) and suppression.removed
reaching a real webhook receiver, signed; and the way back: a suppressed address is never
attempted at a real SMTP sink (aiosmtpd), and once removed it is sent to and delivered.
The answers' shapes against docs/openapi.yaml are checked once, in test_openapi.py."""
import re
import time

from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink
from support.webhook_receiver import verify

SENDER = "mail.example.com"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FIELDS = {"email", "reason", "email_id", "created_at"}
DELIVERY_ENV = {"POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1,1,1"}


def add(ph, key, email, reason=None):
    body = {"email": email}
    if reason is not None:
        body["reason"] = reason
    return ph.request("POST", "/v1/suppressions", key=key, body=body)


def listed(ph, key, query=""):
    r = ph.get("/v1/suppressions" + query, key=key)
    assert r.status == 200, r
    return r.json()


def addresses(page) -> list[str]:
    return [s["email"] for s in page["data"]]


def email_status(ph, key, em) -> str:
    r = ph.get(f"/v1/emails/{em}", key=key)
    assert r.status == 200, r
    return r.json()["status"]


def send(ph, key, to) -> str:
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": to, "subject": "hi", "text": "hello"})
    assert r.status == 200, r
    return r.json()["id"]


# ---- the API ----

def test_add_get_list_delete(server):
    key = server.account_with_key("acme")
    assert error(server.get("/v1/suppressions"), 401, "UNAUTHORIZED")
    assert listed(server, key) == {"data": [], "pagination": {
        "page": 1, "limit": 20, "total": 0, "total_pages": 0, "has_more": False}}

    r = add(server, key, "Bob@Example.COM")
    assert r.status == 200, r
    bob = r.json()
    assert set(bob) == FIELDS, bob
    assert bob["email"] == "bob@example.com", "kept lower-cased, as delivery compares it"
    assert bob["reason"] == "manual", "the default reason"
    assert bob["email_id"] is None, "added over the API: no email caused it"
    assert ISO.match(bob["created_at"]), bob

    for spelling in ("bob@example.com", "BOB@example.com", "bob@EXAMPLE.com"):
        r = server.get(f"/v1/suppressions/{spelling}", key=key)
        assert r.status == 200 and r.json() == bob, (spelling, r)

    r = add(server, key, "Carol <carol@example.com>", "unsubscribe")
    assert r.status == 200, r
    assert r.json()["email"] == "carol@example.com" and r.json()["reason"] == "unsubscribe"

    # Already there, whatever the reason: 409, and the entry stays as it was.
    msg = error(add(server, key, "bob@example.com", "complaint"), 409, "CONFLICT")
    assert "bob@example.com" in msg and "manual" in msg, msg
    assert server.get("/v1/suppressions/bob@example.com", key=key).json() == bob

    page = listed(server, key)
    assert addresses(page) == ["carol@example.com", "bob@example.com"], "newest first"
    assert page["pagination"]["total"] == 2

    r = server.request("DELETE", "/v1/suppressions/Bob@example.com", key=key)
    assert r.status == 200, r
    assert r.json() == {"email": "bob@example.com",
                                                        "deleted": True}
    assert error(server.get("/v1/suppressions/bob@example.com", key=key), 404, "NOT_FOUND")
    assert error(server.request("DELETE", "/v1/suppressions/bob@example.com", key=key),
                 404, "NOT_FOUND")
    assert addresses(listed(server, key)) == ["carol@example.com"]
    # Removed, it can be added again (a new entry, a new time).
    r = add(server, key, "bob@example.com", "hard_bounce")
    assert r.status == 200 and r.json()["reason"] == "hard_bounce", r
    assert error(server.request("PATCH", "/v1/suppressions/bob@example.com", key=key, body={}),
                 405, "METHOD_NOT_ALLOWED")


def test_list_pages_searches_and_filters(server):
    key = server.account_with_key("acme")
    made = [("ann@shop.example", "hard_bounce"), ("bob@mail.example", "manual"),
            ("carl@shop.example", "complaint"), ("dora@shop.example", "hard_bounce"),
            ("eve@mail.example", "unsubscribe")]
    for address, reason in made:
        assert add(server, key, address, reason).status == 200
        time.sleep(0.002)  # one created_at each: the order is theirs
    newest_first = [a for a, _ in reversed(made)]

    p1 = listed(server, key, "?limit=2")
    assert addresses(p1) == newest_first[:2]
    assert p1["pagination"] == {"page": 1, "limit": 2, "total": 5, "total_pages": 3,
                                "has_more": True}
    p3 = listed(server, key, "?limit=2&page=3")
    assert addresses(p3) == newest_first[4:]
    assert p3["pagination"]["has_more"] is False
    assert listed(server, key, "?limit=2&page=4")["data"] == []
    assert addresses(listed(server, key, "?sort_order=asc")) == [a for a, _ in made]

    page = listed(server, key, "?search=SHOP")
    assert addresses(page) == ["dora@shop.example", "carl@shop.example", "ann@shop.example"]
    assert page["pagination"]["total"] == 3
    assert listed(server, key, "?search=%25")["pagination"]["total"] == 0, "not a pattern"
    page = listed(server, key, "?reason=hard_bounce")
    assert addresses(page) == ["dora@shop.example", "ann@shop.example"]
    assert {s["reason"] for s in page["data"]} == {"hard_bounce"}
    page = listed(server, key, "?reason=hard_bounce&search=ann&limit=1")
    assert addresses(page) == ["ann@shop.example"] and page["pagination"]["total"] == 1
    assert listed(server, key, "?reason=complaint&search=mail")["data"] == []

    # An unknown filter value is refused, never read as "any".
    for query, field in [("?reason=bounce", "reason"), ("?reason=", "reason"),
                         ("?reason=MANUAL", "reason"), ("?limit=0", "limit"),
                         ("?limit=101", "limit"), ("?page=0", "page"),
                         ("?sort_order=up", "sort_order")]:
        msg = error(server.get("/v1/suppressions" + query, key=key))
        assert field in msg, (query, msg)


def test_bad_input_changes_nothing(server):
    key = server.account_with_key("acme")
    bad = [
        ({"email": "not an address"}, "INVALID_EMAIL", "email"),
        ({"email": "a@"}, "INVALID_EMAIL", "email"),
        ({"email": "a@b.example\r\nBcc: x@y.example"}, "INVALID_EMAIL", "email"),
        ({"email": ""}, "INVALID_EMAIL", "email"),
        ({}, "VALIDATION_ERROR", "email is required"),
        ({"email": None}, "VALIDATION_ERROR", "email is required"),
        ({"email": 12}, "VALIDATION_ERROR", "email must be a string"),
        ({"email": ["a@b.example"]}, "VALIDATION_ERROR", "email must be a string"),
        ({"email": "a@b.example", "reason": "bounce"}, "VALIDATION_ERROR", "reason"),
        ({"email": "a@b.example", "reason": 1}, "VALIDATION_ERROR", "reason"),
        ({"email": "a@b.example", "why": "x"}, "VALIDATION_ERROR", "why"),
        ([], "VALIDATION_ERROR", "JSON object"),
    ]
    for body, code, words in bad:
        r = server.request("POST", "/v1/suppressions", key=key, body=body)
        msg = error(r, 400, code)
        assert words in msg, (body, msg)
    r = server.request("POST", "/v1/suppressions", key=key, body=b'"a@b.example"',
                       headers={"Content-Type": "application/json"})
    assert "JSON object" in error(r)
    r = server.request("POST", "/v1/suppressions", key=key)  # no body at all
    assert "JSON object" in error(r)
    r = server.request("POST", "/v1/suppressions", key=key, body=b"{nope",
                       headers={"Content-Type": "application/json"})
    error(r, 400, "INVALID_JSON")
    for method in ("GET", "DELETE"):
        msg = error(server.request(method, "/v1/suppressions/not-an-address", key=key),
                    400, "INVALID_EMAIL")
        assert "email" in msg, msg
    assert listed(server, key)["pagination"]["total"] == 0, "nothing was added"


def test_another_account_gets_404(server):
    a = server.account_with_key("a")
    b = server.account_with_key("b")
    assert add(server, a, "x@example.net").status == 200
    assert error(server.get("/v1/suppressions/x@example.net", key=b), 404, "NOT_FOUND")
    assert error(server.request("DELETE", "/v1/suppressions/x@example.net", key=b),
                 404, "NOT_FOUND")
    assert listed(server, b)["pagination"]["total"] == 0
    assert listed(server, b, "?search=x@example.net")["data"] == []
    assert server.get("/v1/suppressions/x@example.net", key=a).status == 200, "still a's"
    # b's own entry for the same address is b's alone.
    r = add(server, b, "x@example.net", "complaint")
    assert r.status == 200, r
    assert server.request("DELETE", "/v1/suppressions/x@example.net", key=b).status == 200
    assert server.get("/v1/suppressions/x@example.net", key=a).json()["reason"] == "manual"


# ---- events and delivery ----

def start(posthorn_factory, dns, port):
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    ph = posthorn_factory(env={**dns_env(dns), **DELIVERY_ENV,
                               "POSTHORN_DELIVERY_MX_PORT": str(port)}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, SENDER)
    return ph, key


def test_events_reach_a_webhook(posthorn_factory, dns, webhook_receiver):
    port = free_port()
    sink = SmtpSink("127.0.0.2", port, Script(rcpt={
        "gone@sink.example.net": "550 5.1.1 <gone@sink.example.net>: User unknown"})).start()
    try:
        ph, key = start(posthorn_factory, dns, port)
        rcv = webhook_receiver()
        r = ph.request("POST", "/v1/webhooks", key=key,
                       body={"url": rcv.url,
                             "events": ["suppression.added", "suppression.removed"]})
        assert r.status == 200, r
        secret = r.json()["secret"]

        def payloads(event_type, n):
            reqs = wait_for(lambda: len(rcv.of_type(event_type)) >= n and rcv.of_type(event_type),
                            timeout=20, what=f"{n} {event_type}")
            out = []
            for req in reqs:
                v = verify(secret, req)
                assert v.ok, (v.error, req.headers, req.body)
                out.append(v.payload)
            return out

        # A hard bounce through delivery suppresses the address, and says so.
        em = send(ph, key, "gone@sink.example.net")
        (bounced,) = payloads("suppression.added", 1)
        assert bounced["type"] == "suppression.added"
        assert bounced["data"]["email"] == "gone@sink.example.net"
        assert bounced["data"]["reason"] == "hard_bounce"
        assert bounced["data"]["email_id"] == em, "the email that caused it"
        assert ISO.match(bounced["data"]["created_at"])
        entry = ph.get("/v1/suppressions/gone@sink.example.net", key=key).json()
        assert entry == bounced["data"], "the event tells the entry as the API shows it"
        assert email_status(ph, key, em) == "BOUNCED"

        # An add over the API.
        r = add(ph, key, "Manual@Sink.example.net")
        assert r.status == 200, r
        added = payloads("suppression.added", 2)
        assert added[1]["data"] == r.json()
        assert added[1]["data"]["email_id"] is None and added[1]["data"]["reason"] == "manual"

        # A removal tells the entry as it was.
        assert ph.request("DELETE", "/v1/suppressions/gone@sink.example.net",
                          key=key).status == 200
        (removed,) = payloads("suppression.removed", 1)
        assert removed["type"] == "suppression.removed"
        assert removed["data"] == entry
        assert removed["created_at"] >= entry["created_at"], "the event's time: the removal"

        # Refused changes raise nothing: a duplicate add, a removal of nothing.
        assert add(ph, key, "manual@sink.example.net").status == 409
        assert ph.request("DELETE", "/v1/suppressions/nobody@sink.example.net",
                          key=key).status == 404
        db = ph.db()
        try:
            kinds = sorted(t for (t,) in db.execute(
                "SELECT type FROM events WHERE type LIKE 'suppression.%'"))
        finally:
            db.close()
        assert kinds == ["suppression.added", "suppression.added", "suppression.removed"]
        time.sleep(1.5)  # a stray call would have come by now
        assert len(rcv.requests) == 3, [req.json()["type"] for req in rcv.requests]
    finally:
        sink.stop()


def test_a_removed_address_is_sent_to_again(posthorn_factory, dns):
    port = free_port()
    sink = SmtpSink("127.0.0.2", port).start()
    try:
        ph, key = start(posthorn_factory, dns, port)
        assert add(ph, key, "back@sink.example.net").status == 200

        # Suppressed: BLOCKED, and the sink never hears of it.
        blocked = send(ph, key, "Back@sink.example.net")
        wait_for(lambda: email_status(ph, key, blocked) == "BLOCKED", timeout=20,
                 what="BLOCKED")
        e = ph.get(f"/v1/emails/{blocked}", key=key).json()
        assert e["recipients"][0]["last_response"] == "on the suppression list: not attempted"
        assert e["recipients"][0]["attempts"] == 0
        assert sink.rcpt_attempts == [] and sink.messages == [], "not attempted"

        r = ph.request("DELETE", "/v1/suppressions/back@sink.example.net", key=key)
        assert r.status == 200, r

        # Removed: the next email goes, and arrives.
        again = send(ph, key, "back@sink.example.net")
        (msg,) = sink.wait_messages(1)
        assert msg.rcpt_tos == ["back@sink.example.net"], msg.rcpt_tos
        wait_for(lambda: email_status(ph, key, again) == "DELIVERED", timeout=20,
                 what="DELIVERED")
        assert email_status(ph, key, blocked) == "BLOCKED", "an email's past stays"
    finally:
        sink.stop()
