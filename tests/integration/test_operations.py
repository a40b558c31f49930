"""What an operator sees and controls (issue 28, docs/operations.md): GET /metrics scraped with
a real Prometheus text parser (python3-prometheus-client) while mail goes through real peers
(aiosmtpd sinks that accept and defer, found through dnsmasq; smtplib on submission; a real
webhook receiver), who may scrape it, /readyz, JSON logs with a line per delivery attempt,
and the drain on SIGTERM. On SQLite: the store's side of these (the webhook backlog, the
leases a drain lifts) has its contract tests on both back ends, and readiness with the store
away is in test_store_loss (PostgreSQL)."""
import base64
import json
import pathlib
import re
import signal
import smtplib
import socket
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from support import store
from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import free_port, wait_for
from support.smtp_sink import Script, SmtpSink

pytestmark = pytest.mark.skipif(store.on_pg(), reason="the process's own view; one run is enough")

SENDER = "mail.example.com"

FAMILIES = [
    "posthorn_build_info", "posthorn_emails_accepted", "posthorn_delivery_attempts",
    "posthorn_http_requests", "posthorn_http_request_duration_seconds",
    "posthorn_smtp_sessions", "posthorn_smtp_messages", "posthorn_webhook_deliveries",
    "posthorn_webhook_backlog", "posthorn_store_commit_duration_seconds",
    "posthorn_queue_recipients", "posthorn_queue_oldest_age_seconds",
    "process_resident_memory_bytes", "process_cpu_seconds", "process_open_fds",
]


def scrape(ph, headers=None):
    r = ph.request("GET", "/metrics", headers=headers or {})
    assert r.status == 200, r
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4"), r.headers
    families = {f.name: f for f in text_string_to_metric_families(r.body.decode())}
    samples = {}
    for f in families.values():
        for s in f.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return families, samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def world(tmp_path, posthorn_factory):
    """dnsmasq with MX records for accept.example.net and defer.example.net (two aiosmtpd
    sinks, the second answering 451 to every DATA), and a way to start a posthorn whose
    verified sender is mail.example.com."""
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    dns.mx("accept.example.net", "mx.accept.example.net", 10)
    dns.host("mx.accept.example.net", "127.0.0.2")
    dns.mx("defer.example.net", "mx.defer.example.net", 10)
    dns.host("mx.defer.example.net", "127.0.0.3")
    dns.start()
    accept = SmtpSink("127.0.0.2", port).start()
    defer = SmtpSink("127.0.0.3", port, Script(data=["451 4.3.0 try later"] * 100)).start()

    class World:
        pass

    w = World()
    w.accept, w.defer = accept, defer

    def server(**env):
        base = {**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "60,60",
                "POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS": "true",
                "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}
        base.update(env)
        ph = posthorn_factory(env=base).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, SENDER)
        return ph, key

    w.server = server
    yield w
    accept.stop()
    defer.stop()
    dns.stop()


def send(ph, key, to):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"hello@{SENDER}", "to": to, "subject": "ops", "text": "hi"})
    assert r.status == 200, r
    return r.json()["id"]


def submit(ph, key, to):
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.login(key, key)
        s.sendmail(f"hello@{SENDER}", [to],
                   f"From: hello@{SENDER}\r\nTo: {to}\r\nSubject: smtp\r\n\r\nhi\r\n")


def attempts(ph, em, key):
    e = ph.get(f"/v1/emails/{em}", key=key).json()
    return e["status"], e["recipients"][0]["attempts"]


def test_every_family_is_there_and_moves_with_the_mail(world, webhook_receiver):
    ph, key = world.server()
    receiver = webhook_receiver()
    r = ph.request("POST", "/v1/webhooks", key=key,
                   body={"url": receiver.url, "events": ["email.delivered"]})
    assert r.status in (200, 201), r
    families, before = scrape(ph)
    for name in FAMILIES:
        assert name in families, (name, sorted(families))
    version = ph.cli("--version").stdout.strip()
    assert version.startswith("posthorn "), version
    assert value(before, "posthorn_build_info", version=version.split()[1]) == 1

    delivered = send(ph, key, "ann@accept.example.net")
    deferred = send(ph, key, "bob@defer.example.net")
    submit(ph, key, "cy@accept.example.net")
    assert ph.request("POST", "/v1/emails", key=key, body={"from": "x"}).status == 400
    wait_for(lambda: attempts(ph, delivered, key)[0] == "DELIVERED", timeout=20,
             what="delivery to the accepting sink")
    wait_for(lambda: attempts(ph, deferred, key)[1] >= 1, timeout=20,
             what="an attempt at the deferring sink")
    world.accept.wait_messages(2)
    wait_for(lambda: len(receiver.requests) >= 2, timeout=20, what="the webhook calls")

    def moved():
        _, after = scrape(ph)
        d = lambda name, **lab: value(after, name, **lab) - value(before, name, **lab)  # noqa
        return after, d
    wait_for(lambda: moved()[1]("posthorn_webhook_deliveries_total", result="ok") >= 2,
             timeout=10, what="the webhook counter")
    after, d = moved()
    assert d("posthorn_emails_accepted_total", door="api") == 2
    assert d("posthorn_emails_accepted_total", door="smtp") == 1
    assert d("posthorn_delivery_attempts_total", result="delivered") == 2
    assert d("posthorn_delivery_attempts_total", result="deferred") >= 1
    assert d("posthorn_delivery_attempts_total", result="bounced") == 0
    assert d("posthorn_http_requests_total", method="POST", code="200") == 2
    assert d("posthorn_http_requests_total", method="POST", code="400") == 1
    assert d("posthorn_http_requests_total", method="GET", code="200") >= 3
    assert d("posthorn_http_request_duration_seconds_count") >= 6
    assert value(after, "posthorn_http_request_duration_seconds_bucket", le="+Inf") == \
        value(after, "posthorn_http_request_duration_seconds_count")
    assert d("posthorn_smtp_sessions_total", listener="submission") == 1
    assert d("posthorn_smtp_messages_total", listener="submission", result="accepted") == 1
    assert d("posthorn_smtp_messages_total", listener="inbound", result="accepted") == 0
    assert d("posthorn_store_commit_duration_seconds_count") >= 3
    assert value(after, "posthorn_webhook_backlog") == 0
    # The deferred recipient waits in the queue; the others are delivered.
    assert value(after, "posthorn_queue_recipients", state="deferred") == 1
    assert value(after, "posthorn_queue_recipients", state="ready") == 0
    assert value(after, "posthorn_queue_recipients", state="held") == 0
    assert value(after, "posthorn_queue_oldest_age_seconds") > 0
    ph.cli("queue", "hold", "--domain", "defer.example.net")
    _, held = scrape(ph)
    assert value(held, "posthorn_queue_recipients", state="held") == 1
    assert value(held, "posthorn_queue_recipients", state="deferred") == 0
    assert value(after, "process_resident_memory_bytes") > 1e6
    assert value(after, "process_open_fds") > 5
    assert value(after, "process_cpu_seconds_total") > 0


def test_the_grafana_dashboard_asks_only_for_what_is_exported(world):
    ph, _ = world.server()
    families, samples = scrape(ph)
    names = {n for n, _ in samples}
    dashboard = json.loads((pathlib.Path(__file__).parents[2] /
                            "contrib/grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert len(exprs) >= 14
    asked = {m for e in exprs for m in re.findall(r"\b(?:posthorn|process)_[a-z_]+", e)}
    missing = sorted(m for m in asked if m not in names and m not in families)
    assert not missing, missing


def test_inbound_rejections_and_the_webhook_backlog_are_counted(world, webhook_receiver):
    ph, key = world.server()
    down = webhook_receiver([500])  # answers 500 for ever: the delivery stays pending
    r = ph.request("POST", "/v1/webhooks", key=key,
                   body={"url": down.url, "events": ["email.sent", "email.delivered"]})
    assert r.status in (200, 201), r
    _, before = scrape(ph)
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        s.ehlo("client.test")
        code, _ = s.docmd("MAIL FROM:<a@client.test>")
        assert code == 250
        code, _ = s.docmd("RCPT TO:<nobody@nowhere.test>")  # no such domain here
        assert code >= 500
        s.docmd("RSET")
        s.docmd("MAIL FROM:<a@client.test>")
        s.docmd(f"RCPT TO:<postmaster@{SENDER}>")
        code, _ = s.docmd("DATA")
        if code == 354:
            s.send(b"Subject: bare\nLF only\r\n.\r\n")  # a bare LF: refused (smuggling)
            code, _ = s.getreply()
            assert code >= 500, code
    send(ph, key, "ann@accept.example.net")
    wait_for(lambda: value(scrape(ph)[1], "posthorn_webhook_backlog") >= 1, timeout=20,
             what="a pending webhook delivery in the backlog")
    _, after = scrape(ph)
    assert value(after, "posthorn_smtp_sessions_total", listener="inbound") - \
        value(before, "posthorn_smtp_sessions_total", listener="inbound") == 1
    rejected = value(after, "posthorn_smtp_messages_total", listener="inbound", result="rejected")
    assert rejected - value(before, "posthorn_smtp_messages_total", listener="inbound",
                            result="rejected") in (0, 1)
    assert value(after, "posthorn_webhook_deliveries_total", result="failed") >= 1


def test_only_trusted_networks_or_the_token_may_scrape(posthorn_factory):
    token = "scrape-" + "x" * 24
    ph = posthorn_factory(env={"POSTHORN_METRICS_TRUSTED_NETWORKS": "10.0.0.0/8",
                               "POSTHORN_METRICS_TOKEN": token}).start()
    r = ph.request("GET", "/metrics")
    assert r.status == 403 and r.json()["code"] == "FORBIDDEN", r
    assert ph.request("GET", "/metrics",
                      headers={"Authorization": "Bearer wrong"}).status == 403
    assert ph.request("GET", "/metrics",
                      headers={"Authorization": f"Bearer {token}x"}).status == 403
    families, _ = scrape(ph, {"Authorization": f"Bearer {token}"})
    assert "posthorn_http_requests" in families
    assert token not in ph.output()
    # A POST is not a scrape; /readyz needs no token.
    assert ph.request("POST", "/metrics", body={}).status == 405
    assert ph.get("/readyz").status == 200 and ph.get("/readyz").json() == {"status": "ready"}

    off = posthorn_factory(env={"POSTHORN_METRICS_ENABLED": "false"}).start()
    assert off.get("/metrics").status == 404
    assert off.get("/readyz").status == 200


def test_bad_operations_settings_are_refused(posthorn_factory):
    for env in [{"POSTHORN_METRICS_TRUSTED_NETWORKS": "10.0.0.0/33"},
                {"POSTHORN_METRICS_TOKEN": "two words"},
                {"POSTHORN_LOG_FORMAT": "xml"},
                {"POSTHORN_LOG_LEVEL": "loud"},
                {"POSTHORN_SERVER_SHUTDOWN_GRACE_S": "-1"}]:
        ph = posthorn_factory(env=env)
        r = ph.cli("serve", check=False)
        assert r.returncode == 2, (env, r)
        assert r.stderr.startswith("posthorn: configuration error: " + list(env)[0]), r.stderr
        assert "two words" not in r.stderr, "a token is never shown"


def json_lines(ph):
    out = []
    for line in ph.output().splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))  # every line must parse
        elif line and not line.startswith("="):
            raise AssertionError(f"not a JSON line: {line!r}")
    return out


def test_json_logs_have_a_line_per_delivery_attempt(world):
    ph, key = world.server(POSTHORN_LOG_FORMAT="json")
    delivered = send(ph, key, "ann@accept.example.net")
    deferred = send(ph, key, "bob@defer.example.net")
    wait_for(lambda: attempts(ph, delivered, key)[0] == "DELIVERED", timeout=20,
             what="the delivery")
    wait_for(lambda: attempts(ph, deferred, key)[1] >= 1, timeout=20, what="the deferral")
    assert ph.request("POST", "/v1/emails", key=key,
                      body={"from": "nobody@unverified.example", "to": "a@b.example",
                            "subject": "s", "text": "t"}).status == 403
    wrong = key[:-6] + ("aaaaaa" if not key.endswith("aaaaaa") else "bbbbbb")
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.ehlo("client.test")
        plain = base64.b64encode(f"\0{wrong}\0{wrong}".encode()).decode()
        assert s.docmd("AUTH", "PLAIN " + plain)[0] == 535
    assert ph.stop() == 0
    lines = json_lines(ph)
    for ln in lines:
        assert {"time", "level", "message"} <= ln.keys(), ln
        assert ln["time"].endswith("Z") and ln["level"] in ("debug", "info", "warn", "error")
    tries = {ln["email_id"]: ln for ln in lines if ln["message"] == "delivery attempt"}
    ok = tries[delivered]
    assert ok["recipient"] == "ann@accept.example.net"
    assert ok["disposition"] == "delivered" and ok["code"] == 250
    assert ok["host"] == "mx.accept.example.net" and ok["ip"] == "127.0.0.2"
    assert ok["status"] == "2.0.0" and "queued as test" in ok["reply"]
    assert ok["attempt"] == 1 and isinstance(ok["delay_s"], (int, float)) and ok["delay_s"] >= 0
    assert "tls" in ok
    late = tries[deferred]
    assert late["disposition"] == "deferred" and late["code"] == 451 and late["status"] == "4.3.0"
    refused = [ln for ln in lines if ln["message"] == "send refused"]
    assert any(ln["code"] == "DOMAIN_NOT_VERIFIED" and ln["door"] == "api" for ln in refused), \
        refused
    auth = [ln for ln in lines if ln["message"] == "smtp auth failed"]
    assert len(auth) == 1 and auth[0]["client_ip"] == "127.0.0.1", auth
    assert auth[0]["key_prefix"] == wrong[:11] and auth[0]["failures"] == 1, auth
    assert auth[0]["locked_out"] is False, auth
    text = ph.output()
    assert key not in text and wrong not in text, "no key in a log line"


def test_the_log_level_hides_what_is_below_it(world):
    ph, key = world.server(POSTHORN_LOG_LEVEL="warn")
    em = send(ph, key, "ann@accept.example.net")
    wait_for(lambda: attempts(ph, em, key)[0] == "DELIVERED", timeout=20, what="the delivery")
    assert ph.stop() == 0
    assert "delivery attempt" not in ph.output() and "serving" not in ph.output()


def test_a_drain_finishes_the_smtp_transaction_in_flight(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS": "true",
                               "POSTHORN_SERVER_SHUTDOWN_GRACE_S": "20"}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, SENDER)
    s = smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10)
    s.login(key, key)
    assert s.docmd(f"MAIL FROM:<hello@{SENDER}>")[0] == 250
    assert s.docmd("RCPT TO:<ann@example.net>")[0] == 250
    idle = smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10)
    idle.ehlo("idle.test")

    ph.proc.send_signal(signal.SIGTERM)
    # Nobody new gets in, and the idle session is told.
    wait_for(lambda: not accepts(ph.http_port) and not accepts(ph.submission_port), timeout=5,
             what="the listeners to close")
    code, text = idle.getreply()
    assert code == 421 and b"shutting down" in text, (code, text)
    # The transaction in flight goes through, and is stored.
    code, text = s.docmd("DATA")
    assert code == 354, (code, text)
    s.send(f"From: hello@{SENDER}\r\nTo: ann@example.net\r\nSubject: drained\r\n\r\nhi\r\n"
           ".\r\n".encode())
    code, text = s.getreply()
    assert code == 250, (code, text)
    s.close()
    rc = ph.proc.wait(timeout=10)
    assert rc == 0
    ph.proc = None
    ph.log.close()
    out = ph.output()
    assert "draining for up to 20 s" in out and "lifted" in out, out
    subjects = [row[0] for row in ph.db().execute("SELECT subject FROM emails")]
    assert subjects == ["drained"], subjects


def test_a_drain_gives_up_after_the_grace_period(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS": "true",
                               "POSTHORN_SERVER_SHUTDOWN_GRACE_S": "2"}).start()
    key = ph.account_with_key("acme")
    s = smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10)
    s.login(key, key)
    s.docmd("MAIL FROM:<hello@nowhere.example>")  # refused: no transaction
    stuck = socket.create_connection(("127.0.0.1", ph.http_port))
    stuck.sendall(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
    time.sleep(0.2)
    t = time.monotonic()
    ph.proc.send_signal(signal.SIGTERM)
    rc = ph.proc.wait(timeout=15)
    took = time.monotonic() - t
    assert rc == 0 and 1.5 <= took < 6, (rc, took)
    ph.proc = None
    ph.log.close()
    assert "still open after the grace period" in ph.output()
    stuck.close()
    s.close()


def accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False
