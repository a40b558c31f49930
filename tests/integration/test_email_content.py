"""An email read back (issue 31's dashboard; docs/api.md "An email's events and content"):
GET /v1/emails/{id}/events (every event, oldest first, with its stored payload), /content (the
HTML and text parts as UTF-8 strings, decoded from their transfer encoding), /raw (the stored
message as message/rfc822, an attachment named <id>.eml) and /preview (the HTML part, or the
text escaped in <pre>, under a Content-Security-Policy that lets nothing of the email run or
load). Each reads as GET /v1/emails/{id} does: another account's id is 404, a sending key's
read of an email it did not send is 403. Against a real aiosmtpd sink."""
import email
import email.policy

import pytest

from support.posthorn import api_error as error, wait_for
from support.worlds import sink_world

SENDER = "mail.example.com"
TO = "user@sink.example.net"
# Non-ASCII and long lines, so that the parts go out quoted-printable or base64.
HTML = ("<html><body><h1>Grüße, Zoë</h1><p>Ünïcödé — 日本語 " + "long line " * 30 +
        "</p><script>alert(1)</script><img src=\"https://tracker.example/x.png\"></body></html>")
TEXT = "Grüße, Zoë <b>not bold</b> & 日本語\n" + "a long line " * 30
POLICY = ("sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
          "frame-ancestors 'self'")


@pytest.fixture
def world(tmp_path, posthorn_factory):
    with sink_world(tmp_path, posthorn_factory, SENDER) as w:
        yield w


def send(ph, key, subject, **fields):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"hello@{SENDER}", "to": TO, "subject": subject, **fields})
    assert r.status == 200, r
    return r.json()["id"]


def status(ph, key, em):
    r = ph.get(f"/v1/emails/{em}", key=key)
    assert r.status == 200, r
    return r.json()["status"]


def test_events_content_raw_and_preview_of_a_sent_email(world):
    ph, key, sink = world
    em = send(ph, key, "Read back", html=HTML, text=TEXT)
    wait_for(lambda: status(ph, key, em) == "DELIVERED", timeout=15, what="DELIVERED")

    # Events: every one, oldest first, each with its payload.
    r = ph.get(f"/v1/emails/{em}/events", key=key)
    assert r.status == 200, r
    events = r.json()["data"]
    types = [e["type"] for e in events]
    assert types[0] == "email.sent" and "email.delivered" in types, types
    assert types.index("email.sent") < types.index("email.delivered"), types
    times = [e["created_at"] for e in events]
    assert times == sorted(times) and all(t.endswith("Z") for t in times), times
    for e in events:
        assert e["id"].startswith("evt_"), e
        assert e["data"]["email_id"] == em, e
    delivered = events[types.index("email.delivered")]
    assert delivered["data"]["status"] == "DELIVERED", delivered
    assert set(events[0]) == {"id", "type", "created_at", "data"}

    # Content: both parts, decoded to UTF-8.
    r = ph.get(f"/v1/emails/{em}/content", key=key)
    assert r.status == 200, r
    assert r.headers["content-type"].startswith("application/json"), r.headers
    content = r.json()
    assert set(content) == {"html", "text"}, content
    assert "Grüße, Zoë" in content["html"] and "日本語" in content["html"], content
    assert "<script>alert(1)</script>" in content["html"]
    assert content["text"].replace("\r\n", "\n").strip() == TEXT.strip(), content["text"]

    # Raw: the stored message, a download.
    r = ph.get(f"/v1/emails/{em}/raw", key=key)
    assert r.status == 200, r
    assert r.headers["content-type"] == "message/rfc822", r.headers
    assert r.headers["content-disposition"] == f'attachment; filename="{em}.eml"', r.headers
    msg = email.message_from_bytes(r.body, policy=email.policy.default)
    assert msg["Subject"] == "Read back"
    assert msg["From"] == f"hello@{SENDER}"
    assert "Grüße, Zoë" in msg.get_body(("html",)).get_content()
    (arrived,) = [m for m in sink.messages if b"Subject: Read back" in m.data]
    assert msg["Message-ID"] == email.message_from_bytes(arrived.data)["Message-ID"]

    # Preview: the HTML part, under a policy that runs and loads nothing of it.
    r = ph.get(f"/v1/emails/{em}/preview", key=key)
    assert r.status == 200, r
    assert r.headers["content-type"] == "text/html; charset=utf-8", r.headers
    assert r.headers["content-security-policy"] == POLICY, r.headers
    assert r.headers["x-content-type-options"] == "nosniff", r.headers
    body = r.body.decode("utf-8")
    assert body == content["html"], body[:200]


def test_preview_of_a_text_only_email_is_escaped_text(world):
    ph, key, _sink = world
    em = send(ph, key, "Text only", text=TEXT)
    r = ph.get(f"/v1/emails/{em}/content", key=key)
    assert r.status == 200, r
    assert r.json()["html"] is None and "日本語" in r.json()["text"], r.json()
    r = ph.get(f"/v1/emails/{em}/preview", key=key)
    assert r.status == 200, r
    assert r.headers["content-security-policy"] == POLICY, r.headers
    body = r.body.decode("utf-8")
    assert "<pre>" in body and body.endswith("</pre>"), body[:200]
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp; 日本語" in body, body[:300]
    assert "<b>" not in body


def test_another_accounts_key_gets_404_and_a_sending_key_403(world):
    ph, key, _sink = world
    em = send(ph, key, "Mine", html="<p>mine</p>", text="mine")
    other = ph.account_with_key("other")
    r = ph.request("POST", "/v1/api-keys", key=key, body={"name": "app", "permission": "sending"})
    assert r.status == 201, r
    sending = r.json()["key"]
    for part in ("events", "content", "raw", "preview"):
        path = f"/v1/emails/{em}/{part}"
        assert error(ph.get(path, key=other), 404, "NOT_FOUND") == "email not found", part
        assert error(ph.get(f"/v1/emails/em_00000000000000000000000000/{part}", key=key), 404,
                     "NOT_FOUND"), part
        assert "full-access key" in error(ph.get(path, key=sending), 403, "FORBIDDEN"), part
        assert error(ph.get(path), 401, "UNAUTHORIZED"), part
        # Only GET.
        r = ph.request("POST", path, key=key, body={})
        assert r.status == 405, (part, r)
        assert ph.get(path, key=key).status == 200, part
