"""Webhooks (DESIGN §8, docs/webhooks.md): the /v1/webhooks API (create, list, get, patch,
delete, the deliveries log; validation; the secret shown once; another account's webhook is
404), and delivery of events to a real HTTP receiver (support/webhook_receiver.py): the body,
the Standard Webhooks headers and signature, checked by the npm reference library
`standardwebhooks` (a tampered call fails it), retries of non-2xx answers with the same
webhook-id, giving up after the schedule, disabled and deleted webhooks, pending deliveries
surviving a restart, private targets refused, and email.* and inbound.received events."""
import base64
import email
import email.message
import email.policy
import ipaddress
import re
import smtplib
import socket
import time

import pytest

from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink
from support.webhook_receiver import verify

SENDER = "mail.example.com"
EVENTS = ["email.sent", "email.delivered", "email.bounced", "email.failed", "email.opened",
          "email.clicked", "email.complained", "email.blocked", "inbound.received",
          "domain.verified", "domain.failed", "email.delivery_delayed", "suppression.added",
          "suppression.removed", "email.canceled"]
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
WH_ID = re.compile(r"^wh_[0-9a-z]{26}$")
SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{32}$")  # base64 of 24 bytes, no padding needed
FIELDS = {"id", "url", "status", "events", "created_at"}
# Delivery tests: the receivers are on 127.0.0.1, and retries come after 1 s each.
DELIVERY_ENV = {"POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1,1,1"}


# ---- helpers ----


def create(ph, key, url, events=("domain.verified",), **fields) -> dict:
    r = ph.request("POST", "/v1/webhooks", key=key,
                   body={"url": url, "events": list(events), **fields})
    assert r.status == 200, r
    return r.json()


def deliveries(ph, key, wh_id, n, timeout=20.0) -> list:
    """The webhook's delivery attempts (newest first), once there are at least n."""
    def enough():
        r = ph.get(f"/v1/webhooks/{wh_id}/deliveries?limit=100", key=key)
        assert r.status == 200, r
        data = r.json()["data"]
        return data if len(data) >= n else None
    return wait_for(enough, timeout=timeout, what=f"{n} delivery attempts of {wh_id}")


def event_ids(ph, event_type) -> list[str]:
    db = ph.db()
    try:
        return [i for (i,) in db.execute("SELECT id FROM events WHERE type = ? ORDER BY id",
                                         (event_type,))]
    finally:
        db.close()


def calls(receiver) -> list:
    """(webhook-id, type, answer) of each call a receiver got, for assertion messages."""
    return [(r.headers.get("webhook-id"), r.json().get("type"), r.status)
            for r in receiver.requests]


def start(posthorn_factory, dns, **env):
    ph = posthorn_factory(env={**dns_env(dns), **DELIVERY_ENV, **env}).start()
    return ph, ph.account_with_key("acme")


def assert_signed(secret, req):
    """The npm library accepts the call; answers the payload it parsed."""
    v = verify(secret, req)
    assert v.ok, (v.error, req.headers, req.body)
    return v.payload


# ---- the API ----

def test_create_get_patch_delete(server):
    key = server.account_with_key("acme")
    assert error(server.get("/v1/webhooks"), 401, "UNAUTHORIZED")
    wh = create(server, key, "https://hooks.example.com/posthorn",
                ["email.delivered", "email.bounced"])
    assert FIELDS | {"secret"} <= set(wh), wh
    assert WH_ID.match(wh["id"]), wh["id"]
    assert wh["url"] == "https://hooks.example.com/posthorn"
    assert wh["status"] is True, "status defaults to true"
    assert sorted(wh["events"]) == ["email.bounced", "email.delivered"]
    assert ISO.match(wh["created_at"]), wh["created_at"]
    assert SECRET.match(wh["secret"]), wh["secret"]
    assert len(base64.b64decode(wh["secret"][len("whsec_"):])) == 24

    every = create(server, key, "http://hooks.example.com/all", EVENTS, status=False)
    assert every["status"] is False and sorted(every["events"]) == sorted(EVENTS)
    assert every["secret"] != wh["secret"] and every["id"] != wh["id"]

    # The secret is shown only on create.
    got = server.get(f"/v1/webhooks/{wh['id']}", key=key)
    assert got.status == 200, got
    got = got.json()
    assert "secret" not in got and FIELDS <= set(got)
    assert {k: got[k] for k in FIELDS} == {k: wh[k] for k in FIELDS}

    # PATCH changes what it is given, keeps the rest, answers the webhook without secret.
    p = server.request("PATCH", f"/v1/webhooks/{wh['id']}", key=key,
                       body={"url": "https://hooks.example.com/v2"})
    assert p.status == 200, p
    p = p.json()
    assert "secret" not in p
    assert p["url"] == "https://hooks.example.com/v2" and p["status"] is True
    assert sorted(p["events"]) == ["email.bounced", "email.delivered"]
    assert p["id"] == wh["id"] and p["created_at"] == wh["created_at"]
    p = server.request("PATCH", f"/v1/webhooks/{wh['id']}", key=key,
                       body={"events": ["domain.verified"], "status": False}).json()
    assert p["events"] == ["domain.verified"] and p["status"] is False
    assert p["url"] == "https://hooks.example.com/v2"
    got = server.get(f"/v1/webhooks/{wh['id']}", key=key).json()
    assert (got["url"], got["events"], got["status"]) == (
        "https://hooks.example.com/v2", ["domain.verified"], False)
    assert server.request("PATCH", f"/v1/webhooks/{wh['id']}", key=key,
                          body={"status": True}).json()["status"] is True

    # A webhook that never had an event has an empty deliveries log.
    d = server.get(f"/v1/webhooks/{wh['id']}/deliveries", key=key)
    assert d.status == 200, d
    assert d.json() == {"data": [], "pagination": {"page": 1, "limit": 20, "total": 0,
                                                   "total_pages": 0, "has_more": False}}

    # DELETE, then it is gone everywhere.
    r = server.request("DELETE", f"/v1/webhooks/{wh['id']}", key=key)
    assert r.status == 200, r
    assert r.json() == {"id": wh["id"], "deleted": True}
    error(server.get(f"/v1/webhooks/{wh['id']}", key=key), 404, "NOT_FOUND")
    error(server.request("PATCH", f"/v1/webhooks/{wh['id']}", key=key, body={"status": False}),
          404, "NOT_FOUND")
    error(server.request("DELETE", f"/v1/webhooks/{wh['id']}", key=key), 404, "NOT_FOUND")
    error(server.get(f"/v1/webhooks/{wh['id']}/deliveries", key=key), 404, "NOT_FOUND")
    error(server.get("/v1/webhooks/wh_00000000000000000000000000", key=key), 404, "NOT_FOUND")
    listed = server.get("/v1/webhooks", key=key).json()
    assert [w["id"] for w in listed["data"]] == [every["id"]]
    assert listed["pagination"]["total"] == 1


def test_create_refuses_bad_bodies(server):
    key = server.account_with_key("acme")
    ok_events = ["email.sent"]

    def post(body):
        return server.request("POST", "/v1/webhooks", key=key, body=body)

    long_url = "https://example.com/" + "a" * 2980
    assert len(long_url) == 3000
    for url in ("ftp://x", "not a url", "http://", "https://", "//example.com/hook",
                "mailto:a@example.com", "", long_url, 123, None, ["https://example.com/"],
                {"href": "https://example.com/"}):
        msg = error(post({"url": url, "events": ok_events}))
        assert "url" in msg.lower(), (url, msg)
    assert "url" in error(post({"events": ok_events})).lower(), "url is required"
    # 2048 characters is still allowed.
    at_limit = "https://example.com/" + "b" * (2048 - 20)
    assert len(at_limit) == 2048
    assert post({"url": at_limit, "events": ok_events}).status == 200

    good = "https://hooks.example.com/x"
    msg = error(post({"url": good, "events": ["email.sent", "email.nope"]}))
    assert "email.nope" in msg, msg
    assert "domain.deleted" in error(post({"url": good, "events": ["domain.deleted"]}))
    for events in ([], "email.sent", None, [1], [None], {"email.sent": True}):
        error(post({"url": good, "events": events}))
    error(post({"url": good}))  # events is required
    for status in ("true", 1, 0, None, "false"):
        error(post({"url": good, "events": ok_events, "status": status}))
    assert post([good]).status == 400, "the body must be an object"
    error(server.request("POST", "/v1/webhooks", key=key, body='{"url": "https://x.example/',
                         headers={"Content-Type": "application/json"}), 400, "INVALID_JSON")

    # allow_private_targets is false by default: loopback, private and link-local literals
    # and localhost are refused.
    for url in ("http://127.0.0.1:8080/hook", "http://127.1.2.3/", "http://10.1.2.3/hook",
                "http://192.168.0.10/", "http://169.254.169.254/latest/meta-data",
                "http://[::1]:8080/hook", "http://localhost:8080/hook",
                "https://LocalHost/hook"):
        msg = error(post({"url": url, "events": ok_events}))
        assert "private" in msg.lower(), (url, msg)

    listed = server.get("/v1/webhooks", key=key).json()
    assert listed["pagination"]["total"] == 1, "only the 2048-character url was created"


def test_patch_refuses_bad_bodies_and_changes_nothing(server):
    key = server.account_with_key("acme")
    wh = create(server, key, "https://hooks.example.com/x", ["email.sent"])
    path = f"/v1/webhooks/{wh['id']}"
    for body in ({"secret": "whsec_AAAA"}, {"nope": 1}, {"id": "wh_other"},
                 {"created_at": "2026-01-01T00:00:00.000Z"}, {"url": "ftp://x"},
                 {"url": "not a url"}, {"url": 5}, {"url": "http://127.0.0.1/hook"},
                 {"events": []}, {"events": ["email.nope"]}, {"events": "email.sent"},
                 {"status": "false"}, {"status": None}, {"status": False, "extra": True}):
        error(server.request("PATCH", path, key=key, body=body))
    msg = error(server.request("PATCH", path, key=key, body={"events": ["email.nope"]}))
    assert "email.nope" in msg, msg
    error(server.request("PATCH", path, key=key, body="{", headers={
        "Content-Type": "application/json"}), 400, "INVALID_JSON")
    got = server.get(path, key=key).json()
    assert (got["url"], got["events"], got["status"]) == (
        "https://hooks.example.com/x", ["email.sent"], True)


def test_list_pages_and_orders(server):
    key = server.account_with_key("acme")
    made = []
    for i in range(3):
        made.append(create(server, key, f"https://hooks.example.com/{i}", ["email.sent"])["id"])
        time.sleep(0.01)  # distinct creation times, so that the order is the creation order
    first = server.get("/v1/webhooks?limit=2", key=key)
    assert first.status == 200, first
    first = first.json()
    assert first["pagination"] == {"page": 1, "limit": 2, "total": 3, "total_pages": 2,
                                   "has_more": True}
    second = server.get("/v1/webhooks?limit=2&page=2", key=key).json()
    assert second["pagination"]["has_more"] is False and len(second["data"]) == 1
    desc = [w["id"] for w in first["data"] + second["data"]]
    assert desc == made[::-1], "newest first by default"
    asc = server.get("/v1/webhooks?sort_order=asc", key=key).json()
    assert [w["id"] for w in asc["data"]] == made
    assert asc["pagination"]["limit"] == 20, "the default limit"
    for w in first["data"] + second["data"]:
        assert "secret" not in w and FIELDS <= set(w), w
    assert server.get("/v1/webhooks?page=9", key=key).json()["data"] == []
    for q in ("limit=0", "limit=101", "limit=x", "page=0", "sort_order=sideways"):
        error(server.get(f"/v1/webhooks?{q}", key=key))


def test_another_account_gets_404(server):
    key = server.account_with_key("acme")
    other = server.account_with_key("other")
    wh = create(server, key, "https://hooks.example.com/mine", ["email.sent"])
    path = f"/v1/webhooks/{wh['id']}"
    error(server.get(path, key=other), 404, "NOT_FOUND")
    error(server.request("PATCH", path, key=other, body={"status": False}), 404, "NOT_FOUND")
    error(server.request("DELETE", path, key=other), 404, "NOT_FOUND")
    error(server.get(f"{path}/deliveries", key=other), 404, "NOT_FOUND")
    assert server.get("/v1/webhooks", key=other).json()["pagination"]["total"] == 0
    got = server.get(path, key=key).json()
    assert got["status"] is True and got["url"] == "https://hooks.example.com/mine"


# ---- delivery ----

def test_domain_verified_is_delivered_signed(posthorn_factory, dns, webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    rcv = webhook_receiver()
    wh = create(ph, key, f"{rcv.url}?source=posthorn", ["domain.verified"])
    other = create(ph, key, "https://hooks.example.com/other", ["domain.failed"])
    domain = verified_domain(ph, dns, key, SENDER)

    (req,) = rcv.wait_for(1)
    (event_id,) = event_ids(ph, "domain.verified")
    assert req.method == "POST" and req.path == "/hook?source=posthorn"
    assert req.headers["content-type"].startswith("application/json")
    assert req.headers["webhook-id"] == event_id and event_id.startswith("evt_")
    assert req.headers["webhook-timestamp"].isdigit()
    assert req.headers["webhook-signature"].startswith("v1,")

    payload = assert_signed(wh["secret"], req)
    body = req.json()
    assert payload == body
    assert set(body) == {"type", "timestamp", "created_at", "data"}, body
    assert body["timestamp"] == body["created_at"], body
    assert body["type"] == "domain.verified" and ISO.match(body["created_at"]), body
    assert body["data"]["domain"] == SENDER and body["data"]["domain_id"] == domain["id"]

    # The check can fail: a changed body, a changed id, a wrong secret, no signature.
    for tampered in (req.body.replace(b"domain.verified", b"domain.failed"),
                     req.body.replace(SENDER.encode(), b"evil.example.com"),
                     req.body + b" "):
        assert tampered != req.body
        v = verify(wh["secret"], req, body=tampered)
        assert not v.ok and "signature" in v.error.lower(), v
    v = verify(wh["secret"], req, headers={**req.headers, "webhook-id": "evt_other"})
    assert not v.ok, v
    assert not verify(other["secret"], req).ok, "another webhook's secret does not verify"
    no_sig = {k: v for k, v in req.headers.items() if k != "webhook-signature"}
    assert not verify(wh["secret"], req, headers=no_sig).ok

    (d,) = deliveries(ph, key, wh["id"], 1)
    assert d["event_id"] == event_id and d["event"] == "domain.verified"
    assert d["attempt"] == 1 and d["status_code"] == 200 and d["error"] is None
    assert isinstance(d["duration_ms"], int) and d["duration_ms"] >= 0
    assert ISO.match(d["created_at"]), d
    assert ph.get(f"/v1/webhooks/{other['id']}/deliveries", key=key).json()["data"] == []


def test_non_2xx_is_retried_with_the_same_id_then_given_up(posthorn_factory, dns,
                                                           webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    flaky = webhook_receiver([500, 302, 200])  # a redirect is not followed: it is a failure
    broken = webhook_receiver([503])           # never 2xx: 1 attempt + 3 retries, then no more
    wh_flaky = create(ph, key, flaky.url)
    wh_broken = create(ph, key, broken.url)
    verified_domain(ph, dns, key, SENDER)
    (event_id,) = event_ids(ph, "domain.verified")

    got = flaky.wait_for(3)
    assert [r.status for r in got] == [500, 302, 200], calls(flaky)
    assert all(r.path == "/hook" for r in got), "the redirect is not followed"
    assert {r.headers["webhook-id"] for r in got} == {event_id}, "the id is stable"
    assert {r.body for r in got} == {got[0].body}
    for r in got:
        assert_signed(wh_flaky["secret"], r)
    ds = deliveries(ph, key, wh_flaky["id"], 3)
    assert [(d["attempt"], d["status_code"]) for d in ds] == [(3, 200), (2, 302), (1, 500)], \
        (ds, calls(flaky))
    assert {d["event_id"] for d in ds} == {event_id}
    assert ds[0]["error"] is None
    page = ph.get(f"/v1/webhooks/{wh_flaky['id']}/deliveries?limit=1", key=key).json()
    assert len(page["data"]) == 1 and page["data"][0]["attempt"] == 3
    assert page["pagination"]["total"] == 3 and page["pagination"]["has_more"] is True

    got = broken.wait_for(4)
    assert {r.headers["webhook-id"] for r in got} == {event_id}
    ds = deliveries(ph, key, wh_broken["id"], 4)
    assert [(d["attempt"], d["status_code"]) for d in ds] == [(4, 503), (3, 503), (2, 503),
                                                              (1, 503)], (ds, calls(broken))
    time.sleep(2.5)  # more than the schedule's 1 s: nothing comes after success or giving up
    assert len(flaky.requests) == 3, calls(flaky)
    assert len(broken.requests) == 4, calls(broken)
    assert len(deliveries(ph, key, wh_broken["id"], 4)) == 4


def test_disabled_and_deleted_webhooks_get_nothing_more(posthorn_factory, dns,
                                                        webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    rcv = {name: webhook_receiver() for name in
           ("control", "disabled", "deleted", "failed_only", "off_from_start")}
    wh = {name: create(ph, key, r.url) for name, r in rcv.items()
          if name not in ("failed_only", "off_from_start")}
    wh["failed_only"] = create(ph, key, rcv["failed_only"].url, ["domain.failed"])
    wh["off_from_start"] = create(ph, key, rcv["off_from_start"].url, status=False)

    verified_domain(ph, dns, key, SENDER)
    for name in ("control", "disabled", "deleted"):
        rcv[name].wait_for(1)
    p = ph.request("PATCH", f"/v1/webhooks/{wh['disabled']['id']}", key=key,
                   body={"status": False})
    assert p.status == 200 and p.json()["status"] is False, p
    assert ph.request("DELETE", f"/v1/webhooks/{wh['deleted']['id']}", key=key).status == 200

    verified_domain(ph, dns, key, "second.example.com")
    (r1, r2) = rcv["control"].wait_for(2)
    assert r1.headers["webhook-id"] != r2.headers["webhook-id"]
    assert r2.json()["data"]["domain"] == "second.example.com"
    time.sleep(1.0)  # the control has its call; give the others a chance to get theirs wrongly
    for name in ("disabled", "deleted"):
        assert len(rcv[name].requests) == 1, (name, calls(rcv[name]))
    assert rcv["failed_only"].requests == [], "only subscribed event types are sent"
    assert rcv["off_from_start"].requests == [], "a webhook created inactive gets nothing"
    error(ph.get(f"/v1/webhooks/{wh['deleted']['id']}", key=key), 404, "NOT_FOUND")


def test_disabling_or_deleting_stops_pending_retries(posthorn_factory, dns, webhook_receiver):
    ph, key = start(posthorn_factory, dns,
                    POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S="1,1,1,1,1,1")
    to_disable, to_delete = webhook_receiver([500]), webhook_receiver([500])
    a = create(ph, key, to_disable.url)
    b = create(ph, key, to_delete.url)
    verified_domain(ph, dns, key, SENDER)
    to_disable.wait_for(1)
    to_delete.wait_for(1)
    assert ph.request("PATCH", f"/v1/webhooks/{a['id']}", key=key,
                      body={"status": False}).status == 200
    assert ph.request("DELETE", f"/v1/webhooks/{b['id']}", key=key).status == 200
    seen = len(to_disable.requests), len(to_delete.requests)
    time.sleep(2.5)  # more than two retry intervals
    assert (len(to_disable.requests), len(to_delete.requests)) == seen


def test_pending_deliveries_survive_a_restart(posthorn_factory, dns, webhook_receiver):
    ph, key = start(posthorn_factory, dns,
                    POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S="2,2,2,2,2,2,2,2")
    rcv = webhook_receiver(listen=False)  # the port is held, but connections are refused
    wh = create(ph, key, rcv.url)
    verified_domain(ph, dns, key, SENDER)
    (event_id,) = event_ids(ph, "domain.verified")
    first = deliveries(ph, key, wh["id"], 1)[-1]
    assert first["attempt"] == 1 and first["event_id"] == event_id
    assert first["status_code"] is None, "no HTTP answer"
    assert isinstance(first["error"], str) and first["error"], first

    assert ph.stop() == 0, ph.output()
    rcv.start()  # answers 200 from now on
    ph.start()
    (req,) = rcv.wait_for(1)
    assert req.headers["webhook-id"] == event_id
    assert assert_signed(wh["secret"], req)["type"] == "domain.verified"
    def answered():
        ds = deliveries(ph, key, wh["id"], 2)
        return ds if ds[0]["status_code"] == 200 else None
    ds = wait_for(answered, timeout=20, what="the attempt answered 200 to be recorded")
    assert ds[0]["error"] is None
    assert all(d["status_code"] is None for d in ds[1:]), ds
    assert [d["attempt"] for d in ds] == list(range(len(ds), 0, -1)), ds
    assert {d["event_id"] for d in ds} == {event_id}


# Hosts that are not written as a dotted-quad loopback literal but reach this machine all
# the same (issue 27, problem 5): curl and getaddrinfo read 2130706433, 0x7f.1, 017700000001
# and 127.1 as 127.0.0.1 and decode %31%32%37; ::127.0.0.1 is IPv4-compatible, the others
# carry 127.0.0.1 in the IPv4-mapped, IPv4-translated, NAT64, 6to4 and Teredo (client) forms;
# connecting to 0.0.0.0 reaches the local machine. Each is refused when the webhook is made.
DISGUISED_LOOPBACK = ("[::127.0.0.1]", "[::ffff:127.0.0.1]", "[::ffff:0:127.0.0.1]",
                      "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[2001:0:808:808::80ff:fffe]",
                      "2130706433", "0x7f000001", "0x7f.1", "017700000001", "0177.0.0.1",
                      "127.1", "127.0.0.1.", "%31%32%37.0.0.1", "0", "0.0.0.0", "hooks.localhost")
# Other special-purpose ranges of the IANA registries (core/address.hpp).
SPECIAL = ("192.88.99.1", "100.64.0.1", "198.18.0.1", "240.0.0.1", "255.255.255.255",
           "192.0.0.8", "[::]", "[100::1]", "[2001:db8::1]", "[3fff::1]", "[5f00::1]",
           "[fec0::1]", "[fd00::1]", "[ff02::1]", "[64:ff9b:1::808:808]")


def test_disguised_and_special_targets_are_refused_when_made(server):
    key = server.account_with_key("acme")
    wh = create(server, key, "https://hooks.example.com/ok", ["domain.failed"])
    for host in DISGUISED_LOOPBACK + SPECIAL:
        url = f"http://{host}:8080/x"
        msg = error(server.request("POST", "/v1/webhooks", key=key,
                                   body={"url": url, "events": ["domain.verified"]}))
        assert "private" in msg and "allow_private_targets" in msg, (url, msg)
        msg = error(server.request("PATCH", f"/v1/webhooks/{wh['id']}", key=key,
                                   body={"url": url}))
        assert "private" in msg, (url, msg)
    # The reported form, answered with the address and its range.
    msg = error(server.request("POST", "/v1/webhooks", key=key,
                               body={"url": "http://[::127.0.0.1]:8080/x",
                                     "events": ["domain.verified"]}))
    assert msg.endswith("::127.0.0.1 is IPv4-compatible (::/96)"), msg
    listed = server.get("/v1/webhooks", key=key).json()
    assert [w["url"] for w in listed["data"]] == ["https://hooks.example.com/ok"]
    # Public addresses in the same writings are accepted: 8.8.8.8 in shorthand, and through
    # NAT64's well-known prefix (the one embedding form judged by the IPv4 it carries).
    for host in ("134744072", "[64:ff9b::808:808]", "[2606:4700::1111]"):
        create(server, key, f"http://{host}:8080/x", ["domain.failed"])


def loopback_names() -> list[str]:
    """Names the system resolver (which libcurl uses; not dns.servers) answers with loopback
    addresses: localhost and names under it (curl answers those itself, RFC 6761), and this
    machine's host name when /etc/hosts gives it only special-purpose addresses."""
    names = ["localhost", "hooks.localhost"]
    host = socket.gethostname()
    try:
        addrs = {a[4][0] for a in socket.getaddrinfo(host, None)}
    except OSError:
        addrs = set()
    if addrs and all(not ipaddress.ip_address(a.split("%")[0]).is_global for a in addrs):
        names.append(host)
    return names


def test_private_addresses_are_never_connected_to(posthorn_factory, dns, webhook_receiver):
    # The guard is the check of each address libcurl is about to connect to. Webhooks whose
    # url the API would refuse today (stored before the check was tightened, or while
    # allow_private_targets was true: written here straight into the store) and names that
    # resolve to loopback are each attempted, refused before any connection, recorded with
    # no status code and an error naming the address and its range, and retried; the
    # receiver, listening on 127.0.0.1, never gets a connection.
    ph, key = start(posthorn_factory, dns, POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS="false")
    rcv = webhook_receiver()
    msg = error(ph.request("POST", "/v1/webhooks", key=key,
                           body={"url": rcv.url, "events": ["domain.verified"]}))
    assert "private" in msg.lower(), msg
    hosts = loopback_names() + ["[::127.0.0.1]", "[::ffff:127.0.0.1]", "127.1", "0x7f.1",
                                "2130706433"]
    made = {}
    for host in hosts:
        # A name other than localhost is not refused when the webhook is made (it may
        # resolve elsewhere later); the rest go into the store as they are.
        url = f"http://{host}:{rcv.port}/hook"
        r = ph.request("POST", "/v1/webhooks", key=key,
                       body={"url": url, "events": ["domain.verified"]})
        if r.status == 200:
            made[host] = r.json()
            continue
        assert "private" in error(r), (host, r)
        made[host] = create(ph, key, "https://hooks.example.com/placeholder",
                            ["domain.verified"])
        db = ph.db()
        try:
            db.execute("UPDATE webhooks SET url = ? WHERE id = ?", (url, made[host]["id"]))
            db.commit()
        finally:
            db.close()
    verified_domain(ph, dns, key, SENDER)
    for host, wh in made.items():
        ds = deliveries(ph, key, wh["id"], 4)  # the first attempt and the 3 retries
        for d in ds:
            err = d["error"] or ""
            assert d["status_code"] is None, (host, d)
            assert err.startswith("refused: ") and "private" in err, (host, d)
            assert "allow_private_targets" in err, (host, d)
    (d, *_) = deliveries(ph, key, made["[::127.0.0.1]"]["id"], 4)
    assert d["error"].startswith("refused: ::127.0.0.1 is IPv4-compatible (::/96)"), d
    time.sleep(1.5)
    assert rcv.requests == [], ("a private target is never contacted", calls(rcv))
    for wh in made.values():
        assert len(deliveries(ph, key, wh["id"], 4)) == 4, "given up after the schedule"


def test_email_events_are_delivered(posthorn_factory, dns, webhook_receiver):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    sink = SmtpSink("127.0.0.2", port).start()
    try:
        ph, key = start(posthorn_factory, dns, POSTHORN_DELIVERY_MX_PORT=str(port),
                        POSTHORN_SERVER_PUBLIC_URL="http://127.0.0.1:1")
        rcv = webhook_receiver()
        wh = create(ph, key, rcv.url, ["email.delivered", "email.opened"])
        verified_domain(ph, dns, key, SENDER)
        r = ph.request("POST", "/v1/emails", key=key,
                       body={"from": f"a@{SENDER}", "to": "u@sink.example.net",
                             "subject": "webhook", "html": "<html><body>hi</body></html>",
                             "tracking": {"open": True}})
        assert r.status == 200, r
        em = r.json()["id"]
        sink.wait_messages(1)
        wait_for(lambda: rcv.of_type("email.delivered"), timeout=20, what="email.delivered")

        raw = ph.stored_message(em)
        html = email.message_from_bytes(raw, policy=email.policy.default) \
            .get_body(("html",)).get_content()
        (pixel,) = re.findall(r'src="http://127\.0\.0\.1:1(/t/o/[^"]+)"', html)
        assert ph.get(pixel, headers={"User-Agent": "MailApp/2"}).status == 200
        wait_for(lambda: rcv.of_type("email.opened"), timeout=20, what="email.opened")

        for t in ("email.delivered", "email.opened"):
            (req,) = rcv.of_type(t)
            body = assert_signed(wh["secret"], req)
            assert body["type"] == t and body["data"]["email_id"] == em, body
            assert req.headers["webhook-id"] in event_ids(ph, t)
        types = {req.json()["type"] for req in rcv.requests}
        assert types == {"email.delivered", "email.opened"}, "email.sent is not subscribed"
    finally:
        sink.stop()


def test_email_bounced_carries_each_recipients_bounce(posthorn_factory, dns, webhook_receiver):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    sink = SmtpSink("127.0.0.2", port, Script(rcpt={
        "gone@sink.example.net": "550 5.1.1 <gone@sink.example.net>: Recipient address "
                                 "rejected: User unknown in local recipient table",
        "spam@sink.example.net": "550 5.7.1 Service unavailable; Client host [127.0.0.1] "
                                 "blocked using zen.spamhaus.org"})).start()
    try:
        ph, key = start(posthorn_factory, dns, POSTHORN_DELIVERY_MX_PORT=str(port))
        rcv = webhook_receiver()
        wh = create(ph, key, rcv.url, ["email.bounced"])
        verified_domain(ph, dns, key, SENDER)
        r = ph.request("POST", "/v1/emails", key=key,
                       body={"from": f"a@{SENDER}", "subject": "bounce", "text": "x",
                             "to": ["gone@sink.example.net", "spam@sink.example.net"]})
        assert r.status == 200, r
        em = r.json()["id"]
        wait_for(lambda: rcv.of_type("email.bounced"), timeout=20, what="email.bounced")
        (req,) = rcv.of_type("email.bounced")
        body = assert_signed(wh["secret"], req)
        assert body["data"]["email_id"] == em and body["data"]["status"] == "BOUNCED", body
        by = {x["email"]: x for x in body["data"]["recipients"]}
        assert by["gone@sink.example.net"]["bounce"]["type"] == "hard", by
        assert by["gone@sink.example.net"]["bounce"]["code"] == "5.1.1"
        assert by["spam@sink.example.net"]["bounce"]["type"] == "block", by
        assert by["spam@sink.example.net"]["bounce"]["code"] == "5.7.1"
        # The same classification on the email; only the hard bounce is suppressed.
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        assert {x["email"]: x["bounce"]["type"] for x in e["recipients"]} == {
            "gone@sink.example.net": "hard", "spam@sink.example.net": "block"}
        db = ph.db()
        assert [a for (a,) in db.execute("SELECT address FROM suppressions")] == [
            "gone@sink.example.net"]
    finally:
        sink.stop()


def test_inbound_received_is_delivered(posthorn_factory, dns, webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    rcv = webhook_receiver()
    wh = create(ph, key, rcv.url, ["inbound.received"])
    domain = verified_domain(ph, dns, key, SENDER)
    assert ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                      body={"config": {"inbound": True}}).status == 200
    m = email.message.EmailMessage()
    m["From"] = "Ann <ann@sender.example.org>"
    m["To"] = f"support@{SENDER}"
    m["Subject"] = "Hello webhook"
    m.set_content("inbound body\n")
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        s.send_message(m, from_addr="ann@sender.example.org", to_addrs=[f"support@{SENDER}"])
    (req,) = rcv.wait_for(1)
    body = assert_signed(wh["secret"], req)
    assert body["type"] == "inbound.received" and ISO.match(body["created_at"]), body
    data = body["data"]
    (stored,) = ph.get("/v1/emails/inbound", key=key).json()["data"]
    assert data["id"] == stored["id"] and data["id"].startswith("in_"), data
    assert data["from_email"] == "ann@sender.example.org"
    assert data["to_address"] == f"support@{SENDER}"
    assert data["subject"] == "Hello webhook"
    assert req.headers["webhook-id"] in event_ids(ph, "inbound.received")
