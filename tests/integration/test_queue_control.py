"""Queue control (docs/delivery.md "Queue control", docs/api.md "GET /v1/queue"): the operator's
`posthorn queue summary|hold|release|retry|purge`, run as its own process beside a running
server on the same store, against recipient servers (python3-aiosmtpd) that defer every
message; and an account's GET /v1/queue."""
import json
import time

import pytest

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import free_port, wait_for
from support.smtp_sink import Script, SmtpSink

SENDER = "mail.example.com"
DEFER = "451 4.7.1 try again later"
# After the first attempt a retry 5 s later, then 60 s: a hold spans the first wait, and a
# retry that comes within a few seconds after the second attempt is the operator's.
RETRY_SCHEDULE = "5,60,60,60,60"


@pytest.fixture
def world(tmp_path, posthorn_factory, webhook_receiver):
    """dnsmasq with MX records for defer.example.net and other.example.net, each a sink that
    answers every DATA with 451; a posthorn with a verified sender and a webhook for
    email.failed."""
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    hosts = {"defer": "127.0.0.3", "other": "127.0.0.7"}
    for name, ip in hosts.items():
        dns.mx(f"{name}.example.net", f"mx.{name}.example.net", 10)
        dns.host(f"mx.{name}.example.net", ip)
    dns.start()
    sinks = {name: SmtpSink(ip, port, Script(data=[DEFER] * 100)).start()
             for name, ip in hosts.items()}

    class World:
        pass

    w = World()
    w.dns, w.sinks = dns, sinks
    w.ph = posthorn_factory(env={
        **dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
        "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": RETRY_SCHEDULE,
        "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S": "2", "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S": "3",
        "POSTHORN_SMTP_HOSTNAME": "posthorn.test",
        "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true"}).start()
    w.key = w.ph.account_with_key("acme")
    verified_domain(w.ph, dns, w.key, SENDER)
    w.hook = webhook_receiver()
    r = w.ph.request("POST", "/v1/webhooks", key=w.key,
                     body={"url": w.hook.url, "events": ["email.failed"]})
    assert r.status == 200, r
    yield w
    for s in sinks.values():
        s.stop()
    dns.stop()


def send(ph, key, to, sender=SENDER):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"hello@{sender}", "to": to, "subject": "Queue control",
                         "text": "Hello."})
    assert r.status == 200, r
    return r.json()["id"]


def email(ph, key, em):
    r = ph.get(f"/v1/emails/{em}", key=key)
    assert r.status == 200, r
    return r.json()


def attempts(ph, key, em):
    return [r["attempts"] for r in email(ph, key, em)["recipients"]]


def wait_attempts(ph, key, em, n, timeout=15.0):
    """Until every recipient of `em` has had n attempts, recorded (and is not in flight)."""
    wait_for(lambda: all(a >= n for a in attempts(ph, key, em)), timeout=timeout,
             what=f"{n} attempts of {em}")
    assert all(a == n for a in attempts(ph, key, em)), email(ph, key, em)


def queue(ph, *args, check_rc=0):
    r = ph.cli("queue", *args, check=False)
    assert r.returncode == check_rc, (r.returncode, r.stdout, r.stderr)
    return r


def table(ph, *args):
    """`queue summary` as {(domain, state): recipients}, each line checked."""
    out = queue(ph, "summary", *args).stdout.splitlines()
    assert out[0].split() == ["DOMAIN", "STATE", "RECIPIENTS", "OLDEST", "QUEUED", "NEXT",
                              "ATTEMPT"], out
    rows = {}
    for line in out[1:-1]:
        domain, state, n, oldest, next_attempt = line.split()
        assert oldest.endswith("Z") and next_attempt.endswith("Z"), line
        rows[(domain, state)] = int(n)
    assert out[-1].startswith(f"{sum(rows.values())} recipient"), out
    return rows


def changed(result, verb):
    """The count a control command printed: "<n> recipient(s) <verb>…"."""
    words = result.stdout.split()
    assert words[1].startswith("recipient") and words[2] == verb, result.stdout
    return int(words[0])


def events_of(ph, em):
    db = ph.db()
    try:
        return [t for (t,) in db.execute("SELECT type FROM events WHERE email_id = ? ORDER BY id",
                                         (em,))]
    finally:
        db.close()


def test_hold_release_retry_and_purge_against_a_deferring_server(world):
    ph, key, sink = world.ph, world.key, world.sinks["defer"]
    em = send(ph, key, ["a@defer.example.net", "b@defer.example.net"])
    other = send(ph, key, "c@other.example.net")
    wait_attempts(ph, key, em, 1)
    wait_attempts(ph, key, other, 1)
    assert sink.transactions == 1

    # The summary: by destination domain and state, across accounts.
    rows = table(ph)
    assert rows[("defer.example.net", "deferred")] == 2, rows
    summary = json.loads(queue(ph, "summary", "--json").stdout)
    assert summary["total_recipients"] == 3, summary
    defer = [g for g in summary["data"] if g["domain"] == "defer.example.net"]
    assert defer and defer[0]["state"] == "deferred" and defer[0]["recipients"] == 2, summary
    queued_at = email(ph, key, em)["queued_at"]
    assert defer[0]["oldest_queued_at"] == queued_at, (defer, queued_at)
    assert defer[0]["next_attempt_at"] > queued_at

    # Hold: no attempt, even once the retry is due (the other domain's, due at the same
    # time, is made).
    assert changed(queue(ph, "hold", "--domain", "defer.example.net"), "held") == 2
    assert table(ph, "--domain", "defer.example.net") == {("defer.example.net", "held"): 2}
    assert {d for d, _ in table(ph, "--account", "acme", "--domain", "other.example.net")} == {
        "other.example.net"}
    e = email(ph, key, em)
    assert e["status"] == "QUEUED"
    assert all(r["status"] == "QUEUED" and r["held"] for r in e["recipients"]), e
    assert not email(ph, key, other)["recipients"][0]["held"]
    wait_attempts(ph, key, other, 2)
    time.sleep(2)  # well past the held ones' retry time, two polls of the queue
    assert sink.transactions == 1, "a held recipient is not attempted"
    assert attempts(ph, key, em) == [1, 1]
    assert changed(queue(ph, "hold", "--domain", "defer.example.net"), "held") == 0

    # Release: due as it was (its time has passed), so attempted at once.
    assert changed(queue(ph, "release", "--domain", "defer.example.net"), "released") == 2
    wait_attempts(ph, key, em, 2, timeout=10)
    assert sink.transactions == 2
    assert not any(r["held"] for r in email(ph, key, em)["recipients"])

    # Retry: the next attempt is 60 s away; made due now, it comes within moments.
    asked = time.monotonic()
    assert changed(queue(ph, "retry", "--email", em), "retried") == 2
    wait_attempts(ph, key, em, 3, timeout=10)
    assert time.monotonic() - asked < 10
    assert sink.transactions == 3

    # Purge: FAILED with reason purged, the email FAILED, email.failed sent to the webhook.
    assert changed(queue(ph, "purge", "--domain", "defer.example.net", "--account", "acme"),
                   "purged") == 2
    e = email(ph, key, em)
    assert e["status"] == "FAILED" and e["failed_at"], e
    for r in e["recipients"]:
        assert r["status"] == "FAILED" and r["last_response"] == "purged", r
        assert r["bounce"] == {"type": "undetermined", "code": None, "message": "purged"}, r
        assert r["attempts"] == 3 and r["next_attempt_at"] is None and not r["held"], r
    # The first deferral raised email.delivery_delayed (once, for both recipients).
    assert events_of(ph, em) == ["email.delivery_delayed", "email.failed"]
    (call,) = world.hook.wait_for(1)
    body = call.json()
    assert body["type"] == "email.failed" and body["data"]["email_id"] == em, body
    assert {r["response"] for r in body["data"]["recipients"]} == {"purged"}, body
    # The other domain's mail is untouched, and nothing of the purged is queued any more.
    assert email(ph, key, other)["status"] == "QUEUED"
    assert all(d == "other.example.net" for d, _ in table(ph)), table(ph)
    assert changed(queue(ph, "purge", "--email", em), "purged") == 0
    time.sleep(1.5)
    assert sink.transactions == 3, "a purged recipient is never attempted"


def test_the_api_shows_only_the_accounts_own_queue(world):
    ph, key = world.ph, world.key
    beta = ph.account_with_key("beta")
    verified_domain(ph, world.dns, beta, "mail.example.org")
    mine = send(ph, key, ["a@defer.example.net", "b@defer.example.net"])
    theirs = send(ph, beta, "c@defer.example.net", sender="mail.example.org")
    wait_attempts(ph, key, mine, 1)
    wait_attempts(ph, beta, theirs, 1)

    def view(k, query=""):
        r = ph.get(f"/v1/queue{query}", key=k)
        assert r.status == 200, r
        return r.json()

    v = view(key)
    assert v["total_recipients"] == 2, v
    assert [(g["domain"], g["state"], g["recipients"]) for g in v["data"]] == [
        ("defer.example.net", "deferred", 2)], v
    assert v["oldest_queued_at"] == email(ph, key, mine)["queued_at"]
    assert view(beta)["total_recipients"] == 1
    assert view(key, "?domain=DEFER.Example.NET&state=deferred")["total_recipients"] == 2
    assert view(key, "?state=held") == {"data": [], "total_recipients": 0,
                                        "oldest_queued_at": None}
    assert view(key, "?domain=other.example.net")["total_recipients"] == 0
    # The operator's view has both accounts'; a hold of one account's leaves the other's (whose
    # retry may be under way by now: its state is not looked at).
    assert sum(n for (d, _), n in table(ph).items() if d == "defer.example.net") == 3
    assert changed(queue(ph, "hold", "--account", "beta"), "held") == 1
    assert [(g["state"], g["recipients"]) for g in view(beta)["data"]] == [("held", 1)]
    v = view(key)
    assert v["total_recipients"] == 2 and all(g["state"] != "held" for g in v["data"]), v

    for query, field in (("?state=stuck", "state"), ("?domain=no_such..name", "domain")):
        r = ph.get(f"/v1/queue{query}", key=key)
        assert r.status == 400, r
        assert r.json()["code"] == "VALIDATION_ERROR" and field in r.json()["message"], r
    assert ph.request("POST", "/v1/queue", key=key).status == 405
    assert ph.get("/v1/queue").status == 401


def test_bad_usage_is_refused_and_changes_nothing(world):
    ph, key = world.ph, world.key
    em = send(ph, key, "a@defer.example.net")
    wait_attempts(ph, key, em, 1)
    assert table(ph) == {("defer.example.net", "deferred"): 1}

    refusals = [
        (("hold",), 2, "--domain, --account or --email"),
        (("purge",), 2, "--domain, --account or --email"),
        (("hold", "--account", "nobody"), 1, "no account named 'nobody'"),
        (("purge", "--email", "em_bad"), 2, "is not an email id"),
        (("release", "--domain", "not a domain"), 2, "is not a domain name"),
        (("summary", "--account", "nobody"), 1, "no account named 'nobody'"),
        (("retry", "--domain"), 2, ""),
        (("shred", "--domain", "defer.example.net"), 2, ""),
    ]
    for args, rc, message in refusals:
        r = queue(ph, *args, check_rc=rc)
        assert message in r.stderr, (args, r.stderr)
        assert r.stdout == "", (args, r.stdout)
    # A well-formed email id of nothing queued selects nothing.
    assert changed(queue(ph, "purge", "--email", "em_" + "0" * 26), "purged") == 0
    assert changed(queue(ph, "hold", "--domain", "other.example.net"), "held") == 0
    # Nothing held or failed (its retry, 5 s after the first attempt, may be under way).
    rows = table(ph)
    assert sum(rows.values()) == 1 and ("defer.example.net", "held") not in rows, rows
    e = email(ph, key, em)
    assert e["status"] == "QUEUED" and not e["recipients"][0]["held"], e
    assert events_of(ph, em) == ["email.delivery_delayed"], "its first deferral, nothing else"
