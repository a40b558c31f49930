"""Webhooks beyond the basics (issue 29, point 6; docs/webhooks.md): the signing secret
rotated (POST /v1/webhooks/{id}/rotate-secret), both secrets signing during the overlap as
Standard Webhooks allows (checked with the npm `standardwebhooks` library for each secret);
replays of one event's delivery or of every delivery given up since a time
(POST /v1/webhooks/{id}/replay); the `email.delivery_delayed` event when a recipient is first
deferred; and the payload's `timestamp`, next to `created_at`."""
import datetime
import time

from support.domains import verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink
from support.webhook_receiver import verify
# The helpers of the webhook tests (test files sit on pytest's path).
from test_webhooks import ISO, SECRET, create, deliveries, start

SENDER = "mail.example.com"


def iso_ms(text: str) -> float:
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def test_a_rotated_secret_signs_with_the_old_one_for_a_day(posthorn_factory, dns,
                                                           webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    other_key = ph.account_with_key("other")
    rcv = webhook_receiver()
    wh = create(ph, key, rcv.url)
    before = time.time()
    r = ph.request("POST", f"/v1/webhooks/{wh['id']}/rotate-secret", key=key)
    assert r.status == 200, r
    rotated = r.json()
    assert rotated["id"] == wh["id"] and SECRET.match(rotated["secret"]), rotated
    assert rotated["secret"] != wh["secret"]
    expires = iso_ms(rotated["previous_secret_expires_at"])
    assert before + 86400 - 5 <= expires <= time.time() + 86400 + 5, rotated
    got = ph.get(f"/v1/webhooks/{wh['id']}", key=key).json()
    assert "secret" not in got and "previous_secret_expires_at" not in got, got

    # Bad calls change nothing: another account's or an unknown webhook, a body.
    error(ph.request("POST", f"/v1/webhooks/{wh['id']}/rotate-secret", key=other_key),
          404, "NOT_FOUND")
    error(ph.request("POST", "/v1/webhooks/wh_00000000000000000000000000/rotate-secret",
                     key=key), 404, "NOT_FOUND")
    assert "no body" in error(ph.request("POST", f"/v1/webhooks/{wh['id']}/rotate-secret",
                                         key=key, body={"secret": "mine"}))

    verified_domain(ph, dns, key, SENDER)
    (req,) = rcv.wait_for(1)
    signatures = req.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures), req.headers
    # A receiver on either secret accepts the call; a third secret does not.
    for secret in (rotated["secret"], wh["secret"]):
        v = verify(secret, req)
        assert v.ok, (v.error, req.headers)
    unrelated = create(ph, key, "https://hooks.example.com/x")
    assert not verify(unrelated["secret"], req).ok

    # A second rotation: the first secret stops signing at once, the second one overlaps.
    again = ph.request("POST", f"/v1/webhooks/{wh['id']}/rotate-secret", key=key).json()
    r = ph.request("POST", f"/v1/webhooks/{wh['id']}/replay", key=key,
                   body={"event_id": req.headers["webhook-id"]})
    assert r.status == 200 and r.json()["replayed"] == 1, r
    (_, replayed) = rcv.wait_for(2)
    assert len(replayed.headers["webhook-signature"].split(" ")) == 2
    assert verify(again["secret"], replayed).ok
    assert verify(rotated["secret"], replayed).ok
    assert not verify(wh["secret"], replayed).ok, "the secret before the first rotation is gone"


def test_replays_send_a_delivery_again(posthorn_factory, dns, webhook_receiver):
    ph, key = start(posthorn_factory, dns)
    other_key = ph.account_with_key("other")
    # Four failures give the delivery up (1 attempt + 3 retries); the receiver is then fixed.
    rcv = webhook_receiver([503, 503, 503, 503, 200])
    wh = create(ph, key, rcv.url)
    verified_domain(ph, dns, key, SENDER)
    got = rcv.wait_for(4)
    event_id = got[0].headers["webhook-id"]
    deliveries(ph, key, wh["id"], 4)
    time.sleep(2.5)
    assert len(rcv.requests) == 4, "given up"

    path = f"/v1/webhooks/{wh['id']}/replay"
    # Bad bodies and other accounts change nothing.
    for body in ({}, {"event_id": event_id, "failed_since": "2026-01-01T00:00:00Z"},
                 {"failed_since": "yesterday"}, {"event_id": 7}, {"events": "all"}, [1]):
        error(ph.request("POST", path, key=key, body=body))
    error(ph.request("POST", path, key=key), 400)
    error(ph.request("POST", path, key=other_key, body={"event_id": event_id}), 404, "NOT_FOUND")
    error(ph.request("POST", path, key=key, body={"event_id": "evt_nope"}), 404, "NOT_FOUND")
    time.sleep(1.5)
    assert len(rcv.requests) == 4, "nothing was replayed"

    # Failed since a time after the event: none; since before it: this one.
    future = (datetime.datetime.now(datetime.timezone.utc)
              + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    r = ph.request("POST", path, key=key, body={"failed_since": future})
    assert r.status == 200 and r.json() == {"id": wh["id"], "replayed": 0}, r
    r = ph.request("POST", path, key=key, body={"failed_since": "2020-01-01T00:00:00Z"})
    assert r.status == 200 and r.json()["replayed"] == 1, r
    fifth = rcv.wait_for(5)[4]
    assert fifth.status == 200 and fifth.headers["webhook-id"] == event_id
    assert verify(wh["secret"], fifth).ok
    ds = deliveries(ph, key, wh["id"], 5)
    assert (ds[0]["attempt"], ds[0]["status_code"]) == (1, 200), ds
    # A delivered one is not failed any more: failed_since finds nothing; by id it goes again.
    r = ph.request("POST", path, key=key, body={"failed_since": "2020-01-01T00:00:00Z"})
    assert r.json()["replayed"] == 0, r
    r = ph.request("POST", path, key=key, body={"event_id": event_id})
    assert r.status == 200 and r.json()["replayed"] == 1, r
    sixth = rcv.wait_for(6)[5]
    assert sixth.headers["webhook-id"] == event_id and sixth.body == fifth.body


def test_delivery_delayed_when_a_recipient_is_first_deferred(posthorn_factory, dns,
                                                             webhook_receiver):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    # `later` is deferred at every attempt; `now` is taken at once.
    sink = SmtpSink("127.0.0.2", port, Script(rcpt={
        "later@sink.example.net": "451 4.2.0 <later@sink.example.net>: try again later"})).start()
    try:
        ph, key = start(posthorn_factory, dns, POSTHORN_DELIVERY_MX_PORT=str(port),
                        POSTHORN_DELIVERY_RETRY_SCHEDULE_S="1,1,1,60")
        rcv = webhook_receiver()
        wh = create(ph, key, rcv.url, ["email.delivery_delayed", "email.sent"])
        verified_domain(ph, dns, key, SENDER)
        r = ph.request("POST", "/v1/emails", key=key,
                       body={"from": f"a@{SENDER}", "subject": "slow", "text": "x",
                             "to": ["later@sink.example.net", "now@sink.example.net"]})
        assert r.status == 200, r
        em = r.json()["id"]
        wait_for(lambda: rcv.of_type("email.delivery_delayed"), timeout=20,
                 what="email.delivery_delayed")
        # Further deferrals of the same recipient raise no more.
        wait_for(lambda: sink.rcpt_attempts.count("later@sink.example.net") >= 3, timeout=20,
                 what="two retries")
        time.sleep(1.5)
        (req,) = rcv.of_type("email.delivery_delayed")
        body = verify(wh["secret"], req).payload
        assert body["type"] == "email.delivery_delayed", body
        assert ISO.match(body["timestamp"]) and body["timestamp"] == body["created_at"], body
        data = body["data"]
        assert data["email_id"] == em and data["status"] == "SENT", data
        (who,) = data["recipients"]
        assert who["email"] == "later@sink.example.net" and who["status"] == "QUEUED", who
        assert who["attempts"] == 1 and "try again later" in who["response"], who
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        assert e["status"] == "SENT", e
    finally:
        sink.stop()
