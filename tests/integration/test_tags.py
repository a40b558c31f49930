"""Tags and metadata on emails (issue 29 point 5): given through POST /v1/emails and through the
X-Posthorn-Tag / X-Posthorn-Metadata headers of SMTP submission (stripped before the message is
stored and delivered: an aiosmtpd sink shows it), returned by GET /v1/emails/{id} and the list,
carried by every event of the email to a real webhook receiver (the signature checked by the
standardwebhooks npm package); the list's status and tag filters; and every list refusing a value
or parameter it does not know instead of ignoring it."""
import email.message
import json
import re
import smtplib
import ssl
import time

import pytest

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink
from support.webhook_receiver import verify

SENDER = "mail.example.com"
GONE = "gone@sink.example.net"
TAGS = [{"name": "campaign", "value": "spring-24"}, {"name": "tier_1", "value": "Gold"}]
METADATA = {"order": {"id": 42, "items": ["a", "b"]}, "note": "caf\u00e9 \"quoted\"", "n": None}


def without_feedback_id(raw: bytes) -> bytes:
    """The message without its Feedback-ID field, the one place a tag (the first) goes."""
    return re.sub(rb"\r\nFeedback-ID: [^\r]*", b"", raw)


def make_world(base, posthorn_factory, webhook_receiver):
    dns = Dnsmasq(base / "dns")
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    dns.start()
    sink = SmtpSink("127.0.0.2", port,
                    Script(rcpt={GONE: "550 5.1.1 <gone@sink.example.net>: no such user"})).start()
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                               "POSTHORN_SMTP_HOSTNAME": "posthorn.test",
                               "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                               "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1,1,1"}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, SENDER)
    rcv = webhook_receiver()
    r = ph.request("POST", "/v1/webhooks", key=key,
                   body={"url": rcv.url, "events": ["email.sent", "email.delivered",
                                                    "email.bounced"]})
    assert r.status == 200, r
    yield ph, key, sink, rcv, r.json()["secret"]
    sink.stop()
    dns.stop()


@pytest.fixture
def world(tmp_path, posthorn_factory, webhook_receiver):
    yield from make_world(tmp_path, posthorn_factory, webhook_receiver)


@pytest.fixture(scope="module")
def shared_world(tmp_path_factory, module_posthorn_factory, module_webhook_receiver):
    """One world for the refusals: each changes nothing (and checks so), so they share it."""
    yield from make_world(tmp_path_factory.mktemp("tags"), module_posthorn_factory,
                          module_webhook_receiver)


def send(ph, key, **fields):
    body = {"from": f"Acme <hello@{SENDER}>", "to": "user@sink.example.net",
            "subject": "tagged", "text": "hello", **fields}
    return ph.request("POST", "/v1/emails", key=key, body=body)


def total(ph, key) -> int:
    return ph.get("/v1/email", key=key).json()["total"]


def events_of(rcv, secret, email_id, n, timeout=20):
    """The signed payloads of the first n events about email_id the receiver got."""
    def got():
        found = [r for r in rcv.requests if r.json()["data"].get("email_id") == email_id]
        return found if len(found) >= n else None
    reqs = wait_for(got, timeout=timeout, what=f"{n} events of {email_id}")
    out = []
    for req in reqs:
        v = verify(secret, req)
        assert v.ok, (v.error, req.headers, req.body)
        out.append(v.payload)
    return out


# ---- the API ----

def test_api_tags_and_metadata_are_kept_returned_and_in_every_event(world):
    ph, key, sink, rcv, secret = world
    r = send(ph, key, tags=TAGS, metadata=METADATA)
    assert r.status == 200, r
    em = r.json()["id"]

    got = ph.get(f"/v1/emails/{em}", key=key).json()
    assert got["tags"] == TAGS
    assert got["metadata"] == METADATA
    (item,) = ph.get("/v1/email", key=key).json()["data"]
    assert item["id"] == em and item["tags"] == TAGS and item["metadata"] == METADATA

    (delivered,) = sink.wait_messages(1)
    # The first tag is the campaign field of the Feedback-ID (issue 30); nowhere else.
    assert b"\r\nFeedback-ID: campaign=spring-24:" in delivered.data, delivered.data
    assert b"spring-24" not in without_feedback_id(delivered.data), "tags are ours"
    payloads = events_of(rcv, secret, em, 2)
    assert {p["type"] for p in payloads} == {"email.sent", "email.delivered"}
    for p in payloads:
        assert p["data"]["tags"] == TAGS, p
        assert p["data"]["metadata"] == METADATA, p

    # Without them: an empty list and null, in the answers and the events.
    r = send(ph, key, subject="plain")
    assert r.status == 200, r
    plain = r.json()["id"]
    got = ph.get(f"/v1/emails/{plain}", key=key).json()
    assert got["tags"] == [] and got["metadata"] is None
    for p in events_of(rcv, secret, plain, 2):
        assert p["data"]["tags"] == [] and p["data"]["metadata"] is None, p


def test_bounced_event_carries_them_too(world):
    ph, key, sink, rcv, secret = world
    r = send(ph, key, to=GONE, tags=[{"name": "kind", "value": "reset"}], metadata={"u": 7})
    assert r.status == 200, r
    em = r.json()["id"]
    (p,) = events_of(rcv, secret, em, 1)
    assert p["type"] == "email.bounced", p
    assert p["data"]["tags"] == [{"name": "kind", "value": "reset"}]
    assert p["data"]["metadata"] == {"u": 7}


@pytest.mark.parametrize("fields, field", [
    ({"tags": "campaign:spring"}, "tags must be an array"),
    ({"tags": {"name": "a", "value": "b"}}, "tags must be an array"),
    ({"tags": ["campaign"]}, "tags[0] must be an object"),
    ({"tags": [{"name": "a"}]}, "tags[0].value is required"),
    ({"tags": [{"value": "a"}]}, "tags[0].name is required"),
    ({"tags": [{"name": "a", "value": 1}]}, "tags[0].value is required"),
    ({"tags": [{"name": "a", "value": "b", "extra": "c"}]}, "tags[0]: unknown field 'extra'"),
    ({"tags": [{"name": "a b", "value": "c"}]}, "tags[0].name must be 1 to 256"),
    ({"tags": [{"name": "a", "value": ""}]}, "tags[0].value must be 1 to 256"),
    ({"tags": [{"name": "a", "value": "b:c"}]}, "tags[0].value must be 1 to 256"),
    ({"tags": [{"name": "a", "value": "caf\u00e9"}]}, "tags[0].value must be 1 to 256"),
    ({"tags": [{"name": "n" * 257, "value": "v"}]}, "tags[0].name must be 1 to 256"),
    ({"tags": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}]},
     "tags: the tag name 'a' is given twice"),
    ({"tags": [{"name": f"t{i}", "value": "v"} for i in range(11)]},
     "tags holds 11 tags; an email takes at most 10"),
    ({"metadata": "text"}, "metadata must be a JSON object"),
    ({"metadata": [1, 2]}, "metadata must be a JSON object"),
    ({"metadata": 5}, "metadata must be a JSON object"),
    ({"metadata": {"k": "x" * 2041}}, "metadata is 2049 bytes as serialized JSON; the limit is 2048"),
])
def test_api_bad_tags_and_metadata_are_refused_and_nothing_is_sent(shared_world, fields, field):
    ph, key, sink, rcv, _ = shared_world
    assert field in error(send(ph, key, **fields))
    assert total(ph, key) == 0
    time.sleep(0.2)
    assert sink.messages == [] and sink.connections == 0


def test_api_limits_are_inclusive(world):
    ph, key, sink, rcv, _ = world
    ten = [{"name": f"t{i}", "value": "v" * 256} for i in range(9)] + [
        {"name": "n" * 256, "value": "A-z_0-9"}]
    meta = {"k": "x" * 2040}  # 2048 bytes serialized
    r = send(ph, key, tags=ten, metadata=meta)
    assert r.status == 200, r
    got = ph.get(f"/v1/emails/{r.json()['id']}", key=key).json()
    assert got["tags"] == ten and got["metadata"] == meta
    # null is no tags and no metadata; an empty list and {} are taken as given.
    r = send(ph, key, tags=None, metadata=None)
    assert r.status == 200, r
    got = ph.get(f"/v1/emails/{r.json()['id']}", key=key).json()
    assert got["tags"] == [] and got["metadata"] is None
    r = send(ph, key, tags=[], metadata={})
    assert r.status == 200, r
    assert ph.get(f"/v1/emails/{r.json()['id']}", key=key).json()["metadata"] == {}


# ---- SMTP ----

def tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def submit(ph, key, headers: list[tuple[str, str]], to="user@sink.example.net"):
    m = email.message.EmailMessage()
    m["From"] = f"Acme <hello@{SENDER}>"
    m["To"] = to
    m["Subject"] = "via submission"
    for k, v in headers:
        m[k] = v
    m.set_content("Hello over SMTP.\n")
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.ehlo("client.test")
        s.starttls(context=tls_context())
        s.ehlo("client.test")
        s.login(key, key)
        return s.send_message(m)


def test_smtp_headers_become_tags_and_metadata_and_are_stripped(world):
    ph, key, sink, rcv, secret = world
    meta = {"order": {"id": 42}, "via": "smtp"}
    assert submit(ph, key, [("X-Posthorn-Tag", "campaign=spring-24"),
                            ("x-posthorn-tag", " tier_1 = Gold "),
                            ("X-Posthorn-Metadata", json.dumps(meta)),
                            ("X-Other", "kept")]) == {}
    item = wait_for(lambda: ph.get("/v1/email", key=key).json()["data"], what="the email")[0]
    got = ph.get(f"/v1/emails/{item['id']}", key=key).json()
    assert got["tags"] == TAGS
    assert got["metadata"] == meta
    assert item["tags"] == TAGS

    (delivered,) = sink.wait_messages(1)
    assert b"x-posthorn" not in delivered.data.lower(), delivered.data
    assert b"\r\nFeedback-ID: campaign=spring-24:" in delivered.data, delivered.data
    rest = without_feedback_id(delivered.data)
    assert b"spring-24" not in rest and b"order" not in rest
    assert b"X-Other: kept" in delivered.data, "other headers stay"
    assert b"x-posthorn" not in ph.stored_message(item["id"]).lower()
    for p in events_of(rcv, secret, item["id"], 2):
        assert p["data"]["tags"] == TAGS and p["data"]["metadata"] == meta, p


@pytest.mark.parametrize("headers, why", [
    ([("X-Posthorn-Tag", "campaign")], "X-Posthorn-Tag must be name=value"),
    ([("X-Posthorn-Tag", "a=b c")], "X-Posthorn-Tag value must be 1 to 256"),
    ([("X-Posthorn-Tag", "a b=c")], "X-Posthorn-Tag name must be 1 to 256"),
    ([("X-Posthorn-Tag", "a=1"), ("X-Posthorn-Tag", "a=2")], "the tag name 'a' is given twice"),
    ([("X-Posthorn-Tag", f"t{i}=v") for i in range(11)], "holds 11 tags; an email takes at most 10"),
    ([("X-Posthorn-Metadata", "{not json")], "X-Posthorn-Metadata is not valid JSON"),
    ([("X-Posthorn-Metadata", "[1, 2]")], "X-Posthorn-Metadata must be a JSON object"),
    ([("X-Posthorn-Metadata", "{}"), ("X-Posthorn-Metadata", "{}")],
     "X-Posthorn-Metadata is given more than once"),
    ([("X-Posthorn-Metadata", json.dumps({"k": "x " * 1100}))], "the limit is 2048"),
])
def test_smtp_bad_headers_get_a_5xx_and_nothing_is_queued(shared_world, headers, why):
    ph, key, sink, rcv, _ = shared_world
    with pytest.raises(smtplib.SMTPDataError) as refused:
        submit(ph, key, headers)
    assert refused.value.smtp_code == 550, refused.value
    text = refused.value.smtp_error.decode()
    assert text.startswith("5.6.0 ") and why in text, text
    assert total(ph, key) == 0


# ---- the list's filters ----

def test_status_and_tag_filters(world):
    ph, key, sink, rcv, secret = world
    spring = [{"name": "campaign", "value": "spring"}]
    a = send(ph, key, tags=spring + [{"name": "tier", "value": "gold"}]).json()["id"]
    b = send(ph, key, tags=spring, to=GONE).json()["id"]
    c = send(ph, key, tags=[{"name": "campaign", "value": "autumn"}]).json()["id"]
    d = send(ph, key).json()["id"]
    # Another account's email with the same tag is never in this list.
    other = ph.account_with_key("other")
    assert ph.get("/v1/email?tag=campaign:spring", key=other).json()["total"] == 0

    def status_of(i):
        return ph.get(f"/v1/emails/{i}", key=key).json()["status"]
    wait_for(lambda: all(status_of(i) in ("DELIVERED", "BOUNCED") for i in (a, b, c, d)),
             timeout=30, what="every email final")
    assert status_of(b) == "BOUNCED"

    def ids(query):
        r = ph.get(f"/v1/email?{query}", key=key)
        assert r.status == 200, r
        body = r.json()
        assert body["total"] == len(body["data"]), body
        return [e["id"] for e in body["data"]]

    assert ids("tag=campaign:spring") == [b, a]
    assert ids("tag=campaign:spring&tag=tier:gold") == [a]
    assert ids("tag=tier:gold&sort_order=asc") == [a]
    assert ids("tag=campaign:winter") == []
    assert ids("tag=spring:campaign") == []
    assert ids("status=BOUNCED") == [b]
    assert ids("status=DELIVERED") == [d, c, a]
    assert ids("status=delivered") == [d, c, a], "either case"
    assert ids("status=BOUNCED,DELIVERED") == [d, c, b, a]
    assert ids("status=QUEUED") == []
    assert ids("status=DELIVERED&tag=campaign:spring") == [a]
    assert ids("status=BOUNCED&tag=campaign:autumn") == []
    assert ids("status=DELIVERED&tag=campaign:spring&search=user@sink") == [a]
    r = ph.get("/v1/email?tag=campaign:spring&limit=1&page=2", key=key).json()
    assert [e["id"] for e in r["data"]] == [a] and r["total"] == 2 and not r["hasMore"]

    # Values that name nothing are refused, never ignored.
    for query, words in [
        ("status=NOPE", "status: 'NOPE' is not a status of an email"),
        ("status=", "status: '' is not a status"),
        ("status=DELIVERED,", "status: '' is not a status"),
        ("status=SENT,OPENED", "status: 'OPENED'"),
        ("tag=campaign", "tag must be name:value"),
        ("tag=:spring", "tag: the name must be 1 to 256"),
        ("tag=campaign:", "tag: the value must be 1 to 256"),
        ("tag=campaign:a%20b", "tag: the value must be 1 to 256"),
        ("tag=a:b:c", "tag: the value must be 1 to 256"),
        ("&".join(f"tag=t{i}:v" for i in range(11)), "tag is given more than 10 times"),
        ("sort_by=status", "sort_by must be created_at or to_email"),
        ("sort_order=up", "sort_order must be asc or desc"),
        ("sortOrder=asc", "unknown query parameter 'sortOrder'"),
        ("tags=campaign:spring", "unknown query parameter 'tags'"),
        ("state=DELIVERED", "unknown query parameter 'state'"),
        ("status=DELIVERED&status=BOUNCED", "status is given more than once"),
        ("limit=5&limit=6", "limit is given more than once"),
    ]:
        assert words in error(ph.get(f"/v1/email?{query}", key=key)), query


@pytest.mark.parametrize("path, words", [
    ("/v1/emails/envelope?status=DELIVERED", "unknown query parameter 'status'"),
    ("/v1/emails/envelope?tag=a:b", "unknown query parameter 'tag'"),
    ("/v1/emails/envelope?sort_by=to_email", "sort_by must be created_at or subject"),
    ("/v1/emails/inbound?status=x", "unknown query parameter 'status'"),
    ("/v1/emails/inbound?sort_order=sideways", "sort_order must be asc or desc"),
    ("/v1/emails/inbound?sortOrder=asc", "unknown query parameter 'sortOrder'"),
    ("/v1/logs?sort_order=asc", "unknown query parameter 'sort_order'"),
    ("/v1/logs?status=abc", "status must be an HTTP status code"),
    ("/v1/logs?method=FETCH", "method must be one of"),
    ("/v1/logs?search=x", "unknown query parameter 'search'"),
    ("/v1/domains?sort_order=asc", "unknown query parameter 'sort_order'"),
    ("/v1/domains?sort_by=domain", "unknown query parameter 'sort_by'"),
    ("/v1/domains?status=VERIFIED", "unknown query parameter 'status'"),
    ("/v1/domains?sortOrder=newest", "sortOrder must be asc or desc"),
    ("/v1/webhooks?search=x", "unknown query parameter 'search'"),
    ("/v1/webhooks?sort_by=url", "unknown query parameter 'sort_by'"),
    ("/v1/webhooks?page=1&page=2", "page is given more than once"),
    ("/v1/queue?state=stuck", "state must be one of"),
    ("/v1/queue?status=QUEUED", "unknown query parameter 'status'"),
])
def test_every_list_refuses_what_it_does_not_know(shared_world, path, words):
    ph, key, *_ = shared_world
    assert words in error(ph.get(path, key=key)), path


def test_webhook_deliveries_refuse_an_order_they_cannot_give(world):
    ph, key, *_ = world
    (wh,) = ph.get("/v1/webhooks", key=key).json()["data"]
    base = f"/v1/webhooks/{wh['id']}/deliveries"
    assert "newest first only" in error(ph.get(base + "?sort_order=asc", key=key))
    assert "unknown query parameter 'event'" in error(ph.get(base + "?event=email.sent", key=key))
    assert ph.get(base + "?sort_order=desc&limit=5", key=key).status == 200
