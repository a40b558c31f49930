"""Scheduled send (issue 30 point 2, docs/sending.md "Scheduled send"): `scheduled_at` on POST
/v1/emails and the X-Posthorn-Scheduled-At header of SMTP submission; the email is SCHEDULED and
not delivered before its time, then delivered within seconds of it, across a restart of the
server on the same data dir; PATCH /v1/emails/{id} reschedules it; POST /v1/emails/{id}/cancel
cancels it (CANCELED, the email.canceled event) and is refused (409) once delivery has started
for every recipient; bad times are refused (400, 550); the list filters on SCHEDULED and
CANCELED. Against a real aiosmtpd sink."""
import datetime
import email.message
import json
import smtplib
import time

import pytest

from support.posthorn import api_error as error, wait_for
from support.worlds import sink_world

from smtp_client import submit

SENDER = "mail.example.com"
TO = "user@sink.example.net"
PLUS_ONE = datetime.timezone(datetime.timedelta(hours=1))


@pytest.fixture
def world(tmp_path, posthorn_factory):
    with sink_world(tmp_path, posthorn_factory, SENDER) as w:
        yield w


def iso(t: float, tz=PLUS_ONE) -> str:
    """`t` (seconds since the epoch) as ISO 8601 with an offset (+01:00 unless told)."""
    return datetime.datetime.fromtimestamp(t, tz).isoformat(timespec="milliseconds")


def parse(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def send(ph, key, subject, **fields):
    return ph.request("POST", "/v1/emails", key=key,
                      body={"from": f"hello@{SENDER}", "to": TO, "subject": subject,
                            "text": "Hello later.", **fields})


def get(ph, key, em):
    r = ph.get(f"/v1/emails/{em}", key=key)
    assert r.status == 200, r
    return r.json()


def arrived(sink, subject):
    return [m for m in sink.messages if f"Subject: {subject}".encode() in m.data]


def wait_arrival(sink, subject, until):
    """Waits for the message `subject` until `until` (time.time()); answers when it came."""
    while time.time() < until:
        if arrived(sink, subject):
            return time.time()
        time.sleep(0.05)
    raise AssertionError(f"{subject} did not arrive in time")


def events_of(ph, em):
    db = ph.db()
    try:
        return [t for (t,) in db.execute("SELECT type FROM events WHERE email_id = ? ORDER BY id",
                                         (em,))]
    finally:
        db.close()


def listed(ph, key, status):
    r = ph.get(f"/v1/email?status={status}", key=key)
    assert r.status == 200, r
    return [e["id"] for e in r.json()["data"]]


def test_scheduled_email_waits_survives_a_restart_and_goes_on_time(world):
    ph, key, sink = world
    at = time.time() + 7
    r = send(ph, key, "later", scheduled_at=iso(at))
    assert r.status == 200, r
    body = r.json()
    assert body["status"] == "SCHEDULED", body
    assert abs(parse(body["scheduled_at"]) - at) < 0.01, body
    em = body["id"]
    got = get(ph, key, em)
    assert got["status"] == "SCHEDULED" and got["scheduled_at"] == body["scheduled_at"], got
    assert all(rc["status"] == "QUEUED" for rc in got["recipients"]), got
    assert listed(ph, key, "SCHEDULED") == [em]
    assert listed(ph, key, "scheduled,canceled") == [em]
    assert listed(ph, key, "QUEUED") == []

    # A restart in between: the schedule is in the store.
    assert ph.stop() == 0
    ph.start()
    while time.time() < at - 0.3:
        assert not arrived(sink, "later"), "delivered before its time"
        time.sleep(0.1)
    came = wait_arrival(sink, "later", at + 5)
    assert came >= at - 0.3, (came, at)
    wait_for(lambda: get(ph, key, em)["status"] == "DELIVERED", timeout=10, what="DELIVERED")
    assert listed(ph, key, "SCHEDULED") == []
    (message,) = arrived(sink, "later")
    assert b"scheduled" not in message.data.lower()


def test_reschedule_moves_the_time_and_is_refused_once_sent(world):
    ph, key, sink = world
    em = send(ph, key, "moved", scheduled_at=iso(time.time() + 600)).json()["id"]
    at = time.time() + 3
    r = ph.request("PATCH", f"/v1/emails/{em}", key=key,
                   body={"scheduled_at": iso(at, datetime.timezone.utc)})
    assert r.status == 200, r
    assert r.json()["status"] == "SCHEDULED" and abs(parse(r.json()["scheduled_at"]) - at) < 0.01
    assert all(abs(parse(rc["next_attempt_at"]) - at) < 0.01
               for rc in get(ph, key, em)["recipients"])
    # Bad times, an unknown email, another field.
    for bad, why in [("2026-11-28T09:00:00", "with an offset"), ("soon", "with an offset"),
                     (iso(time.time() - 3600), "in the past"),
                     (iso(time.time() + 31 * 86400), "more than 30 days ahead")]:
        assert why in error(ph.request("PATCH", f"/v1/emails/{em}", key=key,
                                       body={"scheduled_at": bad})), bad
    assert "unknown field" in error(ph.request("PATCH", f"/v1/emails/{em}", key=key,
                                               body={"subject": "x"}))
    r = ph.request("PATCH", "/v1/emails/em_01aaaaaaaaaaaaaaaaaaaaaaaa", key=key,
                   body={"scheduled_at": iso(time.time() + 60)})
    assert r.status == 404, r

    while time.time() < at - 0.3:
        assert not arrived(sink, "moved")
        time.sleep(0.1)
    wait_arrival(sink, "moved", at + 5)
    wait_for(lambda: get(ph, key, em)["status"] == "DELIVERED", timeout=10, what="DELIVERED")
    msg = error(ph.request("PATCH", f"/v1/emails/{em}", key=key,
                           body={"scheduled_at": iso(time.time() + 60)}), 409, "CONFLICT")
    assert "DELIVERED" in msg, msg


def test_cancel_of_a_scheduled_email_and_too_late(world):
    ph, key, sink = world
    at = time.time() + 3
    em = send(ph, key, "canceled", scheduled_at=iso(at)).json()["id"]
    r = ph.request("POST", f"/v1/emails/{em}/cancel", key=key)
    assert r.status == 200, r
    assert r.json()["status"] == "CANCELED", r.json()
    got = get(ph, key, em)
    assert got["status"] == "CANCELED", got
    assert [rc["status"] for rc in got["recipients"]] == ["CANCELED"], got
    assert events_of(ph, em) == ["email.canceled"]
    assert listed(ph, key, "CANCELED") == [em]
    # Canceled again: 409.
    msg = error(ph.request("POST", f"/v1/emails/{em}/cancel", key=key), 409, "CONFLICT")
    assert "CANCELED already" in msg, msg
    r = ph.request("POST", "/v1/emails/em_01aaaaaaaaaaaaaaaaaaaaaaaa/cancel", key=key)
    assert r.status == 404, r

    # Sent at once and delivered: nothing left to cancel.
    now = send(ph, key, "at once").json()["id"]
    wait_for(lambda: get(ph, key, now)["status"] == "DELIVERED", timeout=15, what="DELIVERED")
    error(ph.request("POST", f"/v1/emails/{now}/cancel", key=key), 409, "CONFLICT")

    time.sleep(max(0.0, at + 2 - time.time()))
    assert not arrived(sink, "canceled"), "a canceled email was delivered"
    assert get(ph, key, em)["status"] == "CANCELED"


@pytest.mark.parametrize("value, why", [
    ("2026-11-28T09:00:00", "with an offset"),
    ("2026-11-28", "with an offset"),
    ("next tuesday", "with an offset"),
    (12345, "must be a string"),
    ("past", "in the past"),
    ("far", "more than 30 days ahead"),
])
def test_bad_scheduled_at_is_refused(world, value, why):
    ph, key, _ = world
    if value == "past":
        value = iso(time.time() - 60)
    elif value == "far":
        value = iso(time.time() + 30 * 86400 + 120)
    msg = error(send(ph, key, "bad", scheduled_at=value))
    assert why in msg and "scheduled_at" in msg, msg
    assert ph.get("/v1/email", key=key).json()["total"] == 0


def submit_scheduled(ph, key, subject, scheduled_at):
    m = email.message.EmailMessage()
    m["From"] = f"Acme <hello@{SENDER}>"
    m["To"] = TO
    m["Subject"] = subject
    m["X-Posthorn-Scheduled-At"] = scheduled_at
    m.set_content("Hello over SMTP, later.\n")
    return submit(ph, key, m)


def test_smtp_header_schedules_and_is_not_delivered(world):
    ph, key, sink = world
    at = time.time() + 3
    assert submit_scheduled(ph, key, "smtp later", iso(at)) == {}
    (em,) = listed(ph, key, "SCHEDULED")
    assert abs(parse(get(ph, key, em)["scheduled_at"]) - at) < 0.01
    while time.time() < at - 0.3:
        assert not arrived(sink, "smtp later")
        time.sleep(0.1)
    wait_arrival(sink, "smtp later", at + 5)
    (message,) = arrived(sink, "smtp later")
    assert b"x-posthorn-scheduled-at" not in message.data.lower(), message.data
    assert b"x-posthorn" not in ph.stored_message(em).lower()

    for bad, why in [("tomorrow", "with an offset"), (iso(time.time() - 3600), "in the past")]:
        with pytest.raises(smtplib.SMTPDataError) as refused:
            submit_scheduled(ph, key, "smtp bad", bad)
        assert refused.value.smtp_code == 550, refused.value
        text = refused.value.smtp_error.decode()
        assert text.startswith("5.6.0 X-Posthorn-Scheduled-At") and why in text, text


def queue_cli(ph, *args):
    r = ph.cli("queue", *args, check=False)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    return r.stdout


def summary_rows(ph):
    """`posthorn queue summary` as {(domain, state): recipients}."""
    rows = {}
    for line in queue_cli(ph, "summary").splitlines()[1:-1]:
        domain, state, n, _oldest, _next = line.split()
        rows[(domain, state)] = int(n)
    return rows


def test_scheduled_recipients_are_their_own_queue_state_and_retry_leaves_them(world):
    ph, key, sink = world
    at = time.time() + 9
    r = send(ph, key, "not early", scheduled_at=iso(at))
    assert r.status == 200, r
    em = r.json()["id"]

    # Counted as scheduled, not deferred: GET /v1/queue, the CLI summary (table and JSON).
    r = ph.get("/v1/queue", key=key)
    assert r.status == 200, r
    v = r.json()
    assert [(g["domain"], g["state"], g["recipients"]) for g in v["data"]] == [
        ("sink.example.net", "scheduled", 1)], v
    assert v["total_recipients"] == 1
    assert abs(parse(v["data"][0]["next_attempt_at"]) - at) < 0.01, v
    r = ph.get("/v1/queue?state=scheduled", key=key)
    assert r.status == 200 and r.json()["total_recipients"] == 1, r
    r = ph.get("/v1/queue?state=deferred", key=key)
    assert r.status == 200 and r.json()["total_recipients"] == 0, r
    assert "scheduled" in error(ph.get("/v1/queue?state=later", key=key))
    assert summary_rows(ph) == {("sink.example.net", "scheduled"): 1}
    j = json.loads(queue_cli(ph, "summary", "--json"))
    assert [(g["state"], g["recipients"]) for g in j["data"]] == [("scheduled", 1)], j
    m = ph.request("GET", "/metrics")
    assert m.status == 200, m
    assert '\nposthorn_queue_recipients{state="scheduled"} 1\n' in m.body.decode(), m
    assert '\nposthorn_queue_recipients{state="deferred"} 0\n' in m.body.decode(), m

    # The operator's retry, by email and by domain, leaves it alone.
    assert queue_cli(ph, "retry", "--email", em).startswith("0 recipients retried"), em
    assert queue_cli(ph, "retry", "--domain", "sink.example.net").startswith("0 recipients")
    # Hold and release keep their behaviour: held, then scheduled again with its time.
    assert queue_cli(ph, "hold", "--email", em).startswith("1 recipient held")
    assert summary_rows(ph) == {("sink.example.net", "held"): 1}
    assert queue_cli(ph, "retry", "--email", em).startswith("0 recipients"), "held stays held"
    assert queue_cli(ph, "release", "--email", em).startswith("1 recipient released")
    assert summary_rows(ph) == {("sink.example.net", "scheduled"): 1}

    time.sleep(1.5)
    assert not arrived(sink, "not early"), "sent before its time"
    got = get(ph, key, em)
    assert got["status"] == "SCHEDULED", got
    assert abs(parse(got["scheduled_at"]) - at) < 0.01, got
    # Still reschedulable (not under way).
    r = ph.request("PATCH", f"/v1/emails/{em}", key=key, body={"scheduled_at": iso(at)})
    assert r.status == 200, r
    while time.time() < at - 0.3:
        assert not arrived(sink, "not early"), "sent before its time"
        time.sleep(0.1)
    came = wait_arrival(sink, "not early", at + 5)
    assert came >= at - 0.3, (came, at)
    assert len(arrived(sink, "not early")) == 1
    wait_for(lambda: get(ph, key, em)["status"] == "DELIVERED", timeout=10, what="DELIVERED")
    assert summary_rows(ph) == {}
