"""The sending API: POST /v1/emails with every rule of INTERFACE.md and DESIGN §4, the
message as an independent parser (Python's email package) sees it, idempotency, the send
rate, and reading sent email back (GET /v1/emails/{id}, GET /v1/email, GET /v1/emails/envelope)."""
import base64
import concurrent.futures
import email
import email.policy
import http.client
import itertools
import signal
import threading
import time

import pytest

from support.domains import dns_env, verified_domain

SENDER = "mail.example.com"


def start_sender(posthorn_factory, dns, **env):
    server = posthorn_factory(env={**dns_env(dns), **env}).start()
    key = server.account_with_key("acme")
    verified_domain(server, dns, key, SENDER)
    return server, key


@pytest.fixture
def sender(posthorn_factory, dns):
    return start_sender(posthorn_factory, dns)


def send(server, key, **fields):
    body = {"from": f"Acme <hello@{SENDER}>", "to": "user@example.net", "subject": "Hi",
            "text": "Hello"}
    body.update(fields)
    body = {k: v for k, v in body.items() if v is not None}
    return server.request("POST", "/v1/emails", key=key, body=body)


def error(r, status, code, mention=None):
    assert r.status == status, r
    b = r.json()
    assert b["code"] == code and b["status"] == status, b
    if mention:
        assert mention in b["message"], b
    return b


def raw_message(server, email_id) -> email.message.EmailMessage:
    raw = server.stored_message(email_id)
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b""), "CRLF line endings only"
    return email.message_from_bytes(raw, policy=email.policy.default)


def count_emails(server):
    db = server.db()
    bodies = ("SELECT COUNT(*) FROM email_bodies" if server.database_url.startswith("sqlite:")
              else "SELECT COUNT(raw) FROM emails")  # PostgreSQL: the message is a column
    return [db.execute(q).fetchone()[0]
            for q in ("SELECT COUNT(*) FROM emails", "SELECT COUNT(envelope_id) FROM emails",
                      "SELECT COUNT(*) FROM recipients", bodies)]


def test_send_is_queued_and_readable(sender):
    server, key = sender
    r = send(server, key, to=["Ann <ann@example.net>", "bob@example.org"], cc="cc@example.net",
             bcc=["hidden@example.com"], reply_to="replies@example.com")
    assert r.status == 200, r
    b = r.json()
    assert b["id"].startswith("em_") and b["status"] == "QUEUED"
    assert b["to"] == "ann@example.net, bob@example.org"
    assert b["subject"] == "Hi" and b["from"] == f'"Acme" <hello@{SENDER}>'
    assert b["created_at"].endswith("Z")

    got = server.get(f"/v1/emails/{b['id']}", key=key)
    assert got.status == 200
    g = got.json()
    # The delivery engine may already be at work (example.net does not exist in the test
    # DNS, so the email ends FAILED): the answer to the send is what says QUEUED.
    assert g["status"] in ("QUEUED", "FAILED")
    assert g["opened_at"] is None and g["clicked_at"] is None
    assert {k: g[k] for k in ("id", "to", "subject", "from", "created_at")} == \
        {k: b[k] for k in ("id", "to", "subject", "from", "created_at")}
    types = {(r["email"], r["type"]) for r in g["recipients"]}
    assert types == {("ann@example.net", "to"), ("bob@example.org", "to"),
                     ("cc@example.net", "cc"), ("hidden@example.com", "bcc")}
    assert all(r["status"] in ("QUEUED", "FAILED") for r in g["recipients"])
    # Not yet tried: due since it was accepted.
    assert all(r["next_attempt_at"] == b["created_at"]
               for r in g["recipients"] if r["status"] == "QUEUED" and r["attempts"] == 0)

    env = server.get("/v1/emails/envelope", key=key).json()["data"][0]
    assert env["total_recipients"] == 4 and env["from_email"] == f"hello@{SENDER}"
    assert env["from_name"] == "Acme" and env["id"].startswith("env_")


def test_the_message_as_an_independent_parser_reads_it(sender):
    server, key = sender
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    pdf = b"%PDF-1.4 " + b"x" * 1000
    r = send(server, key, subject="Grüße – ☃ snow", text="Plain ünïcode text",
             html='<p>Hi <img src="cid:logo"></p>', bcc="secret@example.com",
             to=["Zoë <zoe@example.net>"], headers={"X-Campaign": "spring", "X-Id": "42"},
             attachments=[{"filename": "logo.png", "content": base64.b64encode(png).decode(),
                           "content_type": "image/png", "cid": "logo"},
                          {"filename": "report.pdf", "content": base64.b64encode(pdf).decode(),
                           "content_type": "application/pdf"}])
    assert r.status == 200, r
    em = r.json()["id"]
    msg = raw_message(server, em)
    assert msg["Subject"] == "Grüße – ☃ snow"
    assert msg["Message-ID"] == f"<{em}@localhost>"
    assert msg["Date"] and msg["MIME-Version"] == "1.0"
    assert msg["X-Campaign"] == "spring" and msg["X-Id"] == "42"
    assert "Bcc" not in msg and b"secret@example.com" not in msg.as_bytes()
    assert msg["To"].addresses[0].display_name == "Zoë"
    assert msg["Reply-To"] is None
    assert msg.get_content_type() == "multipart/mixed"
    alternative, attachment = msg.get_payload()
    assert alternative.get_content_type() == "multipart/alternative"
    text, related = alternative.get_payload()
    assert text.get_content_type() == "text/plain"
    assert text.get_content().rstrip() == "Plain ünïcode text"
    assert text["Content-Transfer-Encoding"] in ("quoted-printable", "base64")
    assert related.get_content_type() == "multipart/related"
    html, logo = related.get_payload()
    assert html.get_content_type() == "text/html" and "cid:logo" in html.get_content()
    assert logo["Content-ID"] == "<logo>" and logo.get_content() == png
    assert attachment.get_filename() == "report.pdf" and attachment.get_content() == pdf
    assert attachment.get_content_disposition() == "attachment"
    for line in msg.as_bytes(policy=email.policy.SMTP).split(b"\r\n"):
        assert len(line) <= 998, "RFC 5322 line length"


# A carriage return that ends no line never reaches the wire as it is: the part becomes
# quoted-printable and the CR =0D (found by tests/fuzz/api_json_fuzz.cpp).
def test_a_bare_carriage_return_is_encoded(sender):
    server, key = sender
    r = send(server, key, text="one\rtwo\r\n", html="<b>\reply</b>")
    assert r.status == 200, r
    raw = server.stored_message(r.json()["id"])
    assert b"\r" not in raw.replace(b"\r\n", b""), "no bare CR"
    msg = raw_message(server, r.json()["id"])
    text, html = msg.get_body(("plain",)), msg.get_body(("html",))
    assert text["Content-Transfer-Encoding"] == "quoted-printable"
    assert html["Content-Transfer-Encoding"] == "quoted-printable"
    assert text.get_content().startswith("one\rtwo")
    assert "<b>\reply</b>" in html.get_content()


def test_single_part_messages(sender):
    server, key = sender
    only_html = send(server, key, text=None, html="<b>bold</b>").json()["id"]
    assert raw_message(server, only_html).get_content_type() == "text/html"
    only_text = send(server, key).json()["id"]
    assert raw_message(server, only_text).get_content_type() == "text/plain"


def test_validation_rules_and_nothing_stored(sender):
    server, key = sender
    before = count_emails(server)
    error(send(server, key, **{"from": None}), 400, "VALIDATION_ERROR", "from")
    error(send(server, key, **{"from": 5}), 400, "VALIDATION_ERROR", "from")
    error(send(server, key, **{"from": "not an address"}), 400, "INVALID_EMAIL", "not an address")
    error(send(server, key, to="nobody"), 400, "INVALID_EMAIL", "nobody")
    error(send(server, key, to=["ok@example.net", "bad@"]), 400, "INVALID_EMAIL", "bad@")
    error(send(server, key, to=[]), 400, "VALIDATION_ERROR", "to")
    error(send(server, key, to=None), 400, "VALIDATION_ERROR", "to")
    error(send(server, key, to=[1]), 400, "VALIDATION_ERROR", "to")
    error(send(server, key, cc="x@@y.com"), 400, "INVALID_EMAIL")
    error(send(server, key, bcc=["a@b.com", "nope"]), 400, "INVALID_EMAIL", "nope")
    error(send(server, key, reply_to="r@"), 400, "INVALID_EMAIL")
    error(send(server, key, to="a@example.net\r\nBcc: victim@example.org"), 400, "INVALID_EMAIL")
    error(send(server, key, subject=None), 400, "VALIDATION_ERROR", "subject")
    error(send(server, key, subject=""), 400, "VALIDATION_ERROR", "subject")
    error(send(server, key, subject="x" * 256), 400, "VALIDATION_ERROR", "subject")
    error(send(server, key, subject="Hi\r\nBcc: victim@example.org"), 400, "VALIDATION_ERROR",
          "subject")
    error(send(server, key, text=None), 400, "VALIDATION_ERROR", "html or text")
    error(send(server, key, text=None, html=""), 400, "VALIDATION_ERROR", "html or text")
    error(send(server, key, html=5), 400, "VALIDATION_ERROR", "html")
    error(send(server, key, headers={"X-A": "1\r\nBcc: victim@example.org"}), 400,
          "VALIDATION_ERROR", "line breaks")
    # A NUL or another control character is not called a line break (issue 27, problem 6).
    for value, found in (("a\u0000b", "U+0000 NUL"), ("a\u001bb", "U+001B ESC"),
                         ("a\u007fb", "U+007F DEL")):
        b = error(send(server, key, headers={"X-A": value}), 400, "VALIDATION_ERROR")
        assert b["message"] == ("headers: the value of X-A must not contain control characters "
                                f"(it holds {found}; of U+0000-U+001F and U+007F only the tab "
                                "is allowed)"), b
    error(send(server, key, subject="a\u0000b"), 400, "VALIDATION_ERROR",
          "subject must not contain control characters (it holds U+0000 NUL")
    error(send(server, key, attachments=[{"filename": "a\u0000b", "content": "YQ=="}]), 400,
          "VALIDATION_ERROR", "attachments[0].filename must not contain control characters")
    error(send(server, key, headers={"X-A\r\nBcc": "v"}), 400, "VALIDATION_ERROR")
    error(send(server, key, headers={"X-\u0000": "v"}), 400, "VALIDATION_ERROR",
          "is not a header name (1 to 76 printable ASCII characters")
    error(send(server, key, headers={"Bad Name": "v"}), 400, "VALIDATION_ERROR")
    for owned in ("From", "to", "CC", "Bcc", "Subject", "Date", "Message-ID", "MIME-Version",
                  "Content-Type", "content-transfer-encoding", "DKIM-Signature", "Return-Path"):
        error(send(server, key, headers={owned: "x"}), 400, "VALIDATION_ERROR", owned)
    error(send(server, key, headers={"X-N": 5}), 400, "VALIDATION_ERROR")
    error(send(server, key, headers=["X-A"]), 400, "VALIDATION_ERROR")
    error(send(server, key, attachments=[{"filename": "a", "content": "not base64!"}]), 400,
          "VALIDATION_ERROR", "base64")
    error(send(server, key, attachments=[{"filename": "a"}]), 400, "VALIDATION_ERROR", "content")
    error(send(server, key, attachments={"filename": "a"}), 400, "VALIDATION_ERROR")
    error(send(server, key, attachments=[{"content": "YQ==", "content_type": "bad"}]), 400,
          "VALIDATION_ERROR", "content_type")
    # Nothing a message line of at most 998 octets could not hold (RFC 5322 §2.1.1): a media
    # type is RFC 6838's, a cid and a filename are bounded, a header value is foldable.
    for ctype in ("text/" + "x" * 128, "a/b/c", "/png", "image/", "image/p ng", "te<xt>/plain"):
        error(send(server, key, attachments=[{"content": "YQ==", "content_type": ctype}]), 400,
              "VALIDATION_ERROR", "content_type")
    for cid in ("x" * 251, "a b", "<logo>", "l\u00f6go"):
        error(send(server, key, html="<img src=cid:x>",
                   attachments=[{"content": "YQ==", "cid": cid}]), 400, "VALIDATION_ERROR", "cid")
    error(send(server, key, attachments=[{"content": "YQ==", "filename": "f" * 256}]), 400,
          "VALIDATION_ERROR", "filename")
    error(send(server, key, headers={"X-Long": "w" * 901}), 400, "VALIDATION_ERROR", "X-Long")
    error(send(server, key, tracking={"open": "yes"}), 400, "VALIDATION_ERROR", "tracking")
    error(send(server, key, tracking={"opne": True}), 400, "VALIDATION_ERROR")
    error(send(server, key, idempotencyKey=5), 400, "VALIDATION_ERROR", "idempotencyKey")
    error(send(server, key, colour="red"), 400, "VALIDATION_ERROR", "colour")
    error(server.request("POST", "/v1/emails", key=key, body=["not", "an", "object"]), 400,
          "VALIDATION_ERROR")
    error(server.request("POST", "/v1/emails", key=key, body='{"from":',
                         headers={"Content-Type": "application/json"}), 400, "INVALID_JSON")
    # At the limits, accepted.
    assert send(server, key, subject="é" * 255).status == 200
    at_limits = send(server, key, headers={"X-Long": ("w" * 900 + " ") * 3},
                     attachments=[{"content": "YQ==", "filename": "f" * 255,
                                   "content_type": "application/" + "v" * 127,
                                   "cid": "c" * 250}])
    assert at_limits.status == 200, at_limits
    raw = server.stored_message(at_limits.json()["id"])
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    after = count_emails(server)
    assert [a - b for a, b in zip(after, before)] == [2, 2, 2, 2], "only the valid sends stored"


def test_limits_on_recipients_and_attachments(posthorn_factory, dns):
    server, key = start_sender(posthorn_factory, dns, POSTHORN_LIMITS_MAX_RECIPIENTS="3",
                        POSTHORN_LIMITS_MAX_ATTACHMENT_BYTES="1000")
    error(send(server, key, to=["a@x.example", "b@x.example"], cc="c@x.example",
               bcc="d@x.example"), 400, "TOO_MANY_RECIPIENTS")
    assert send(server, key, to=["a@x.example", "b@x.example"], cc="c@x.example").status == 200
    big = base64.b64encode(b"z" * 600).decode()
    error(send(server, key, attachments=[{"filename": "1", "content": big},
                                         {"filename": "2", "content": big}]),
          413, "PAYLOAD_TOO_LARGE")
    assert send(server, key, attachments=[{"filename": "1", "content": big}]).status == 200


def test_sender_domain_must_be_verified_and_sending(sender, dns):
    server, key = sender
    error(send(server, key, **{"from": "a@unknown.example.com"}), 403, "DOMAIN_NOT_VERIFIED",
          "unknown.example.com")
    assert server.request("POST", "/v1/domains", key=key,
                          body={"domain": "pending.example.com"}).status == 201
    error(send(server, key, **{"from": "a@pending.example.com"}), 403, "DOMAIN_NOT_VERIFIED",
          "pending.example.com")
    other = server.account_with_key("other")
    error(send(server, other), 403, "DOMAIN_NOT_VERIFIED", SENDER)  # another account's domain
    assert server.request("PATCH", f"/v1/domains/{SENDER}", key=key,
                          body={"config": {"sending": False}}).status == 200
    error(send(server, key), 403, "SENDING_DISABLED", SENDER)
    # The domain check is on the address, case-insensitively, IDN-aware.
    assert server.request("PATCH", f"/v1/domains/{SENDER}", key=key,
                          body={"config": {"sending": True}}).status == 200
    assert send(server, key, **{"from": "x@MAIL.Example.COM"}).status == 200


def test_idempotency_key_replays_the_first_answer(sender):
    server, key = sender
    first = send(server, key, idempotencyKey="order-1")
    again = send(server, key, idempotencyKey="order-1", subject="changed")
    assert first.status == again.status == 200
    assert again.json() == first.json()
    other = server.account_with_key("other-acct")  # keys are per account
    assert count_emails(server)[0] == 1
    different = send(server, key, idempotencyKey="order-2")
    assert different.json()["id"] != first.json()["id"]
    del other


def test_ten_identical_requests_at_once_make_one_email(sender):
    server, key = sender
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda _: send(server, key, idempotencyKey="burst"), range(10)))
    assert {a.status for a in answers} == {200}
    assert len({a.json()["id"] for a in answers}) == 1
    assert count_emails(server)[0] == 1


def test_send_rate_limit(posthorn_factory, dns):
    server, key = start_sender(posthorn_factory, dns, POSTHORN_LIMITS_SEND_RATE_PER_MINUTE="3")
    # Refused requests count nothing.
    for _ in range(5):
        error(send(server, key, to="bad"), 400, "INVALID_EMAIL")
    for i in range(3):
        assert send(server, key, idempotencyKey=f"k{i}").status == 200
    # A replay is not a new send.
    assert send(server, key, idempotencyKey="k0").status == 200
    r = send(server, key)
    error(r, 429, "RATE_LIMITED")
    assert 1 <= int(r.headers["retry-after"]) <= 60
    assert count_emails(server)[0] == 3
    other = server.account_with_key("other")  # per account
    del other


def test_lists_page_sort_search_and_dates(sender):
    server, key = sender
    ids = []
    for i in range(25):
        r = send(server, key, to=f"user{i:02d}@example.net", subject=f"Order {i:02d}",
                 cc="copy@example.org" if i == 7 else None)
        ids.append(r.json()["id"])
    page = server.get("/v1/email?limit=10&page=1", key=key).json()
    assert (page["page"], page["limit"], page["total"], page["hasMore"]) == (1, 10, 25, True)
    assert [e["id"] for e in page["data"]] == ids[::-1][:10], "newest first"
    assert set(page["data"][0]) >= {"id", "status", "created_at", "queued_at", "sent_at",
                                    "failed_at", "to", "subject", "from"}
    last = server.get("/v1/email?limit=10&page=3", key=key).json()
    assert len(last["data"]) == 5 and last["hasMore"] is False
    assert server.get("/v1/email", key=key).json()["limit"] == 10

    by_to = server.get("/v1/email?sort_by=to_email&sort_order=asc&limit=3", key=key).json()
    assert [e["to"] for e in by_to["data"]] == ["user00@example.net", "user01@example.net",
                                                 "user02@example.net"]
    s = server.get("/v1/email?search=ORDER%2013", key=key).json()
    assert s["total"] == 1 and s["data"][0]["subject"] == "Order 13"
    s = server.get("/v1/email?search=copy@example", key=key).json()
    assert s["total"] == 1 and s["data"][0]["id"] == ids[7], "search matches any recipient"
    s = server.get("/v1/email?search=%25", key=key).json()
    assert s["total"] == 0, "LIKE wildcards are literal"

    created = server.get(f"/v1/emails/{ids[10]}", key=key).json()["created_at"]
    after = server.get(f"/v1/email?start_date={created}&limit=100", key=key).json()
    assert ids[10] in {e["id"] for e in after["data"]}
    assert all(e["created_at"] >= created for e in after["data"])
    assert 15 <= after["total"] < 25 or created == page["data"][-1]["created_at"]
    assert server.get("/v1/email?start_date=2999-01-01", key=key).json()["total"] == 0
    assert server.get("/v1/email?end_date=2000-01-01", key=key).json()["total"] == 0
    today = created[:10]
    assert server.get(f"/v1/email?end_date={today}&limit=100", key=key).json()["total"] == 25

    for q in ("limit=0", "limit=101", "page=0", "sort_by=subject", "sort_order=up",
              "start_date=yesterday", "end_date=2026-13-01",
              "start_date=2026-02-01&end_date=2026-01-01"):
        r = server.get(f"/v1/email?{q}", key=key)
        assert r.status == 400 and r.json()["code"] == "VALIDATION_ERROR", q

    env = server.get("/v1/emails/envelope?limit=5", key=key).json()
    assert env["pagination"] == {"page": 1, "limit": 5, "total": 25, "total_pages": 5,
                                 "has_more": True}
    first_env = env["data"][0]
    by_id = server.get(f"/v1/emails/envelope?search={first_env['id']}", key=key).json()
    assert [e["id"] for e in by_id["data"]] == [first_env["id"]]
    by_subject = server.get("/v1/emails/envelope?search=order%2003", key=key).json()
    assert by_subject["pagination"]["total"] == 1
    by_sender = server.get("/v1/emails/envelope?search=hello@mail", key=key).json()
    assert by_sender["pagination"]["total"] == 25
    sorted_env = server.get("/v1/emails/envelope?sort_by=subject&sort_order=asc&limit=2",
                            key=key).json()
    assert [e["subject"] for e in sorted_env["data"]] == ["Order 00", "Order 01"]
    for q in ("sort_by=to", "limit=abc", "start_date=x"):
        assert server.get(f"/v1/emails/envelope?{q}", key=key).status == 400, q


def test_accounts_see_only_their_own_email(sender):
    server, key = sender
    em = send(server, key).json()["id"]
    other = server.account_with_key("intruder")
    assert server.get(f"/v1/emails/{em}", key=other).status == 404
    assert server.get("/v1/emails/em_doesnotexist", key=key).status == 404
    assert server.get("/v1/email", key=other).json()["total"] == 0
    assert server.get("/v1/emails/envelope", key=other).json()["pagination"]["total"] == 0


def test_an_accepted_email_survives_a_restart(sender):
    server, key = sender
    em = send(server, key).json()["id"]
    assert server.stop() == 0
    server.start()
    got = server.get(f"/v1/emails/{em}", key=key)
    assert got.status == 200 and got.json()["id"] == em


def test_every_acknowledged_send_survives_a_sigkill_under_load(posthorn_factory, dns):
    """A send is answered 200 only once its commit is on disk, the WAL's writes gathered in
    memory until the commit's sync at the latest: SIGKILL amid eight busy senders loses none
    of the answered ones, large ones (more than the 124 KB gathered at once) included."""
    server, key = start_sender(posthorn_factory, dns,
                               POSTHORN_LIMITS_SEND_RATE_PER_MINUTE="1000000")
    acknowledged, lock, stop = {}, threading.Lock(), threading.Event()

    def load(n):
        c = server.connection()
        try:
            for i in itertools.count():
                if stop.is_set():
                    return
                size = 150_000 if i % 4 == 3 else 300
                try:
                    r = server.request("POST", "/v1/emails", key=key, conn=c,
                                       body={"from": f"hello@{SENDER}", "to": "user@example.net",
                                             "subject": f"load {n}-{i}", "text": "y" * size})
                except (OSError, http.client.HTTPException):
                    return  # the server is gone: this one was not answered
                assert r.status == 200, r
                with lock:
                    acknowledged[r.json()["id"]] = size
        finally:
            c.close()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        senders = [pool.submit(load, n) for n in range(8)]
        deadline = time.monotonic() + 60
        while len(acknowledged) < 400 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
        stop.set()
        for s in senders:
            s.result()
    with lock:
        answered = dict(acknowledged)
    assert len(answered) >= 400
    assert any(size > 124 * 1024 for size in answered.values())

    server.start()
    db = server.db()
    try:
        if server.database_url.startswith("sqlite:"):
            stored = dict(db.execute("SELECT e.id, length(b.raw) FROM emails e "
                                     "JOIN email_bodies b ON b.id = e.body_id"))
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        else:
            stored = dict(db.execute("SELECT id, length(raw) FROM emails"))
    finally:
        db.close()
    lost = [em for em in answered if em not in stored]
    assert not lost, f"{len(lost)} of {len(answered)} answered sends lost"
    for em, size in answered.items():
        assert stored[em] > size, (em, stored[em], size)  # the whole message, headers too
    last = max(answered)
    assert server.get(f"/v1/emails/{last}", key=key).json()["id"] == last
