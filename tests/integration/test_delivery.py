"""The delivery engine against scriptable recipient servers (python3-aiosmtpd) found through
MX records served by dnsmasq: DESIGN §3 and §7, with DKIM checked by python3-dkim."""
import socket
import ssl
import threading
import time
import warnings

import dkim
import pytest

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain, zone_records
from support.posthorn import free_port
from support.smtp_sink import Script, SmtpSink, self_signed

SENDER = "mail.example.com"
FINAL = {"DELIVERED", "BOUNCED", "FAILED", "BLOCKED"}


@pytest.fixture
def world(tmp_path, posthorn_factory):
    """dnsmasq with MX records for a few recipient domains, each MX on its own loopback
    address and all on one port, and a posthorn whose verified sender is mail.example.com."""
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    hosts = {"accept": "127.0.0.2", "defer": "127.0.0.3", "refuse": "127.0.0.4",
             "slow": "127.0.0.5", "tls": "127.0.0.6", "other": "127.0.0.7", "bare": "127.0.0.8",
             "down": "127.0.0.9", "badtls": "127.0.0.10"}
    for name, ip in hosts.items():
        if name == "bare":
            continue
        dns.mx(f"{name}.example.net", f"mx.{name}.example.net", 10)
        dns.host(f"mx.{name}.example.net", ip)
    dns.host("bare.example.net", hosts["bare"])       # no MX: the A record is the MX
    dns.lines.append("mx-host=nullmx.example.net,.,0")  # RFC 7505 null MX
    # Two MX: the preferred one without STARTTLS, the other with it.
    dns.mx("twomx.example.net", "mx.accept.example.net", 10)
    dns.mx("twomx.example.net", "mx.tls.example.net", 20)
    # Two more domains whose mail goes to the same host as accept.example.net's.
    dns.mx("alias1.example.org", "mx.accept.example.net", 10)
    dns.mx("alias2.example.org", "mx.accept.example.net", 10)
    dns.start()
    sinks = []

    class World:
        pass

    w = World()
    w.dns, w.port, w.hosts, w.tmp = dns, port, hosts, tmp_path

    def sink(name, script=None, tls=False):
        ctx = self_signed(tmp_path, f"mx.{name}.example.net") if tls else None
        s = SmtpSink(hosts[name], port, script, ctx).start()
        sinks.append(s)
        return s

    def server(**env):
        base = {**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "1,1,1,1,1",
                "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S": "2",
                "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S": "3",
                "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}
        base.update(env)
        ph = posthorn_factory(env=base).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, SENDER)
        w.ph, w.key = ph, key
        return ph, key

    w.sink, w.server = sink, server
    yield w
    for s in sinks:
        s.stop()
    dns.stop()


def send(ph, key, to, **fields):
    body = {"from": f"Acme <hello@{SENDER}>", "to": to, "subject": "Delivery test",
            "text": "Hello from the delivery test.\r\n.a line starting with a dot\r\n"}
    body.update(fields)
    r = ph.request("POST", "/v1/emails", key=key, body=body)
    assert r.status == 200, r
    return r.json()["id"]


def wait_status(ph, key, em, statuses=FINAL, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        if e["status"] in statuses:
            return e
        if time.monotonic() > deadline:
            raise AssertionError(f"email stuck in {e['status']}: {e}")
        time.sleep(0.1)


def dkim_ok(ph, message: bytes) -> bool:
    zone = zone_records(ph)

    def dnsfunc(name, timeout=5):
        selector = name.decode().split(".")[0]
        for owner, txt in zone.items():
            if owner.startswith(selector + "."):
                return txt.encode()
        return None
    return dkim.verify(message, dnsfunc=dnsfunc)


def test_mail_servers_at_private_addresses_are_refused_by_default(world):
    # A recipient's domain is the API user's choice: its MX on loopback (as every test MX
    # is) must not make posthorn connect into the operator's network unless allowed.
    sink = world.sink("accept")
    ph, key = world.server(POSTHORN_DELIVERY_ALLOW_PRIVATE_TARGETS="false")
    em = send(ph, key, "ann@accept.example.net")
    e = wait_status(ph, key, em)
    assert e["status"] == "FAILED", e  # as for a domain with no address (5.1.2)
    (r,) = e["recipients"]
    assert "private or special-purpose addresses only" in r["last_response"], r
    assert "delivery.allow_private_targets" in r["last_response"], r
    assert sink.connections == 0  # not even a connection was made


def test_accepted_mail_is_delivered_and_dkim_signed(world):
    sink = world.sink("accept")
    ph, key = world.server()
    em = send(ph, key, "Ann <ann@accept.example.net>", cc="cc@accept.example.net",
              bcc="hidden@accept.example.net")
    e = wait_status(ph, key, em)
    assert e["status"] == "DELIVERED", e
    assert e["sent_at"] and e.get("delivered_at")
    assert all(r["status"] == "DELIVERED" and r["attempts"] == 1 for r in e["recipients"])
    assert all(r["last_response"].startswith("250 2.0.0 Ok") for r in e["recipients"])
    (m,) = sink.wait_messages(1)
    assert sink.transactions == 1, "one transaction carries every recipient of the domain"
    assert sorted(m.rcpt_tos) == ["ann@accept.example.net", "cc@accept.example.net",
                                  "hidden@accept.example.net"]
    assert m.mail_from.startswith("bounces+") and m.mail_from.endswith("@posthorn.test")
    assert m.helo == "posthorn.test"
    assert m.data.startswith(b"DKIM-Signature:")
    assert b"\r\n.a line starting with a dot\r\n" in m.data, "dot-stuffing undone by the server"
    assert b"hidden@accept.example.net" not in m.data
    assert dkim_ok(ph, m.data), "python3-dkim verifies the signature with the zone's TXT"
    sig = m.data.split(b"\r\n\r\n")[0].decode()
    for h in ("from", "to", "cc", "subject", "date", "message-id", "mime-version",
              "content-type"):
        assert h in sig.split("h=")[1].split(";")[0].split(":"), h
    events = [ev for (ev,) in ph.db().execute(
        "SELECT type FROM events WHERE email_id = ? ORDER BY id", (em,))]
    assert events == ["email.sent", "email.delivered"]


def test_deferred_twice_then_accepted(world):
    sink = world.sink("defer", Script(data=["451 4.7.1 greylisted", "451 4.7.1 greylisted"]))
    ph, key = world.server()
    em = send(ph, key, "a@defer.example.net")
    e = wait_status(ph, key, em)
    assert e["status"] == "DELIVERED", e
    assert e["recipients"][0]["attempts"] == 3
    assert len(sink.wait_messages(1)) == 1 and sink.transactions == 3


def test_always_deferred_fails_after_the_schedule(world):
    world.sink("defer", Script(data=["451 4.3.0 try later"] * 50))
    ph, key = world.server()
    em = send(ph, key, "a@defer.example.net")
    e = wait_status(ph, key, em, timeout=40)
    assert e["status"] == "FAILED", e
    r = e["recipients"][0]
    assert r["attempts"] == 6, "the first attempt and 5 retries"
    assert r["last_response"].startswith("451 4.3.0 try later")
    assert r["last_response"].endswith("(gave up after 6 attempts)")
    assert r["bounce"]["type"] == "soft" and r["bounce"]["code"] == "4.3.0", r
    assert e["failed_at"]


def test_refused_at_rcpt_bounces_and_suppresses(world):
    sink = world.sink("refuse", Script(rcpt={"gone@refuse.example.net": "550 5.1.1 no such user"}))
    ph, key = world.server()
    em = send(ph, key, ["gone@refuse.example.net", "here@refuse.example.net"])
    e = wait_status(ph, key, em)
    assert e["status"] == "BOUNCED", e
    by = {r["email"]: r for r in e["recipients"]}
    assert by["gone@refuse.example.net"]["status"] == "BOUNCED"
    assert by["gone@refuse.example.net"]["last_response"] == "550 5.1.1 no such user"
    assert by["gone@refuse.example.net"]["bounce"] == {
        "type": "hard", "code": "5.1.1", "message": "550 5.1.1 no such user"}
    assert by["here@refuse.example.net"]["status"] == "DELIVERED"
    assert by["here@refuse.example.net"]["bounce"] is None
    # A server without STARTTLS, under the default opportunistic TLS (docs/delivery.md).
    assert all(r["tls"] == {"policy": "opportunistic", "version": None, "verified": False,
                            "failure": None} for r in e["recipients"]), e
    # Suppressed now: the next email to it is BLOCKED without any attempt.
    attempts_before = len(sink.rcpt_attempts)
    em2 = send(ph, key, "gone@refuse.example.net")
    e2 = wait_status(ph, key, em2)
    assert e2["status"] == "BLOCKED" and e2["sent_at"] is None and e2["failed_at"]
    assert e2["recipients"][0]["attempts"] == 0
    assert len(sink.rcpt_attempts) == attempts_before


def test_refused_after_data_bounces_without_suppressing(world):
    sink = world.sink("refuse", Script(data=["554 5.7.1 message content rejected"]))
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@refuse.example.net"))
    assert e["status"] == "BOUNCED"
    assert e["recipients"][0]["last_response"] == "554 5.7.1 message content rejected"
    assert e["recipients"][0]["bounce"] == {
        "type": "block", "code": "5.7.1", "message": "554 5.7.1 message content rejected"}
    # A refusal of the content says nothing about the address: the next email is tried.
    e2 = wait_status(ph, key, send(ph, key, "a@refuse.example.net"))
    assert e2["status"] == "DELIVERED", e2
    assert len(sink.wait_messages(1)) == 1


def test_connection_dropped_in_data_is_retried(world):
    sink = world.sink("accept", Script(drop_in_data=1))
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@accept.example.net"))
    assert e["status"] == "DELIVERED", e
    assert e["recipients"][0]["attempts"] == 2
    assert len(sink.wait_messages(1)) == 1


def test_a_server_too_slow_to_answer_times_out_and_is_retried(world):
    world.sink("slow", Script(delay=6))
    ph, key = world.server()
    em = send(ph, key, "a@slow.example.net")
    deadline = time.monotonic() + 20
    while True:
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        r = e["recipients"][0]
        if r["attempts"] >= 1:
            break
        assert time.monotonic() < deadline, e
        time.sleep(0.2)
    assert e["status"] == "QUEUED"
    resp = (r["last_response"] or "").lower()
    assert r["next_attempt_at"] and ("timed out" in resp or "timeout" in resp), r


def test_starttls_with_a_self_signed_certificate(world):
    sink = world.sink("tls", tls=True)
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@tls.example.net"))
    assert e["status"] == "DELIVERED"
    (m,) = sink.wait_messages(1)
    assert m.tls, "opportunistic TLS was used"


def test_tls_required_fails_where_it_is_not_offered(world):
    world.sink("accept")
    sink_tls = world.sink("tls", tls=True)
    ph, key = world.server(POSTHORN_DELIVERY_TLS="required")
    e = wait_status(ph, key, send(ph, key, "a@accept.example.net"))
    assert e["status"] == "FAILED", e
    assert "TLS" in e["recipients"][0]["last_response"]
    ok = wait_status(ph, key, send(ph, key, "b@tls.example.net"))
    assert ok["status"] == "DELIVERED" and sink_tls.wait_messages(1)[0].tls


def test_tls_required_goes_on_to_the_next_mx(world):
    plain = world.sink("accept")
    sink_tls = world.sink("tls", tls=True)
    ph, key = world.server(POSTHORN_DELIVERY_TLS="required")
    e = wait_status(ph, key, send(ph, key, "c@twomx.example.net"))
    assert e["status"] == "DELIVERED", e
    assert sink_tls.wait_messages(1)[0].tls
    assert plain.messages == [], "the MX without STARTTLS got nothing"


def test_a_failed_tls_handshake_is_retried_in_plain_text(world):
    ctx = self_signed(world.tmp, "mx.badtls.example.net")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.maximum_version = ssl.TLSVersion.TLSv1  # nothing our client will speak
    bad = SmtpSink(world.hosts["badtls"], world.port, None, ctx).start()
    try:
        ph, key = world.server()
        e = wait_status(ph, key, send(ph, key, "d@badtls.example.net"))
        assert e["status"] == "DELIVERED", e
        (m,) = bad.wait_messages(1)
        assert not m.tls
        assert "TLS handshake with mx.badtls.example.net" in ph.output()
    finally:
        bad.stop()


def test_many_recipients_go_in_transactions_of_at_most_100(world):
    sink = world.sink("accept")
    ph, key = world.server()
    rcpts = [f"r{i:03}@accept.example.net" for i in range(230)]
    e = wait_status(ph, key, send(ph, key, rcpts[:1], bcc=rcpts[1:]), timeout=60)
    assert e["status"] == "DELIVERED", e
    got = sink.wait_messages(3)
    assert sorted(len(m.rcpt_tos) for m in got) == [30, 100, 100]
    assert sorted(r for m in got for r in m.rcpt_tos) == rcpts


def test_one_email_to_two_domains(world):
    a = world.sink("accept")
    b = world.sink("other")
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, ["x@accept.example.net", "y@other.example.net"]))
    assert e["status"] == "DELIVERED"
    assert a.wait_messages(1)[0].rcpt_tos == ["x@accept.example.net"]
    assert b.wait_messages(1)[0].rcpt_tos == ["y@other.example.net"]


def test_domains_with_the_same_mx_share_one_transaction(world):
    """Destinations are MX hosts, not domains: one email to three domains served by one MX
    host goes in one transaction, over one connection."""
    sink = world.sink("accept")
    ph, key = world.server()
    rcpts = ["x@accept.example.net", "y@alias1.example.org", "z@alias2.example.org"]
    e = wait_status(ph, key, send(ph, key, rcpts))
    assert e["status"] == "DELIVERED", e
    got = sink.wait_messages(1)
    time.sleep(0.5)  # nothing more arrives
    assert len(sink.messages) == 1 and sorted(got[0].rcpt_tos) == rcpts
    assert sink.connections == 1, ph.output()


def test_null_mx_fails(world):
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@nullmx.example.net"))
    assert e["status"] == "FAILED"
    assert "null MX" in e["recipients"][0]["last_response"]
    assert e["recipients"][0]["attempts"] == 1


def test_no_mx_falls_back_to_the_address_record(world):
    sink = world.sink("bare")
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@bare.example.net"))
    assert e["status"] == "DELIVERED"
    assert sink.wait_messages(1)[0].rcpt_tos == ["a@bare.example.net"]


def test_nonexistent_domain_fails_and_unreachable_server_is_retried(world):
    ph, key = world.server()
    e = wait_status(ph, key, send(ph, key, "a@nosuchdomain.example.net"))
    assert e["status"] == "FAILED" and "NXDOMAIN" in e["recipients"][0]["last_response"]
    em = send(ph, key, "a@down.example.net")  # an MX with nothing listening
    deadline = time.monotonic() + 15
    while ph.get(f"/v1/emails/{em}", key=key).json()["recipients"][0]["attempts"] < 2:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert ph.get(f"/v1/emails/{em}", key=key).json()["status"] == "QUEUED"


def test_relay_takes_everything(world):
    relay = world.sink("other")
    ph, key = world.server(POSTHORN_DELIVERY_RELAY=f"{world.hosts['other']}:{world.port}")
    e = wait_status(ph, key, send(ph, key, ["a@accept.example.net", "b@nullmx.example.net"]))
    assert e["status"] == "DELIVERED"
    assert sorted(relay.wait_messages(1)[0].rcpt_tos) == ["a@accept.example.net",
                                                          "b@nullmx.example.net"]


def test_stopping_while_the_relay_refuses_connections_exits_0(world):
    # Sends keep coming while every session to the relay fails at once (nothing listens
    # there), so sessions end and start all the time; SIGTERM in the middle. A session that
    # ended while stopping used to start the next one from within itself, and with jobs
    # waiting that recursion overflowed the stack (SIGSEGV instead of exit 0).
    ph, key = world.server(POSTHORN_DELIVERY_RELAY=f"{world.hosts['down']}:{world.port}",
                           POSTHORN_LIMITS_SEND_RATE_PER_MINUTE="1000000")
    stop = threading.Event()
    sent = []

    def load():
        conn = ph.connection()
        body = {"from": f"hello@{SENDER}", "to": "a@accept.example.net", "subject": "s",
                "text": "t"}
        while not stop.is_set():
            try:
                r = ph.request("POST", "/v1/emails", key=key, body=body, conn=conn)
            except OSError:
                return  # the server is stopping
            if r.status == 200:
                sent.append(r.json()["id"])
    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    try:
        assert ph.stop() == 0
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert len(sent) > 100
    ph.start()
    e = ph.get(f"/v1/emails/{sent[-1]}", key=key).json()
    assert e["status"] in ("QUEUED", "SENT", "FAILED"), e


def test_stopping_with_mail_waiting_for_a_session_exits_0(world):
    # A relay that takes connections and never greets: the sessions (8 at most to one
    # destination) wait for it, the other jobs wait for a session. SIGTERM then exits 0, and
    # the jobs keep their leases: nothing is lost or settled, and the next start claims them.
    hold = socket.socket()
    hold.bind((world.hosts["other"], world.port))
    hold.listen(64)
    held = []
    stop_accepting = threading.Event()

    def accept():
        hold.settimeout(0.2)
        while not stop_accepting.is_set():
            try:
                held.append(hold.accept()[0])
            except OSError:
                pass
    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        ph, key = world.server(POSTHORN_DELIVERY_RELAY=f"{world.hosts['other']}:{world.port}",
                               POSTHORN_DELIVERY_COMMAND_TIMEOUT_S="600",
                               POSTHORN_LIMITS_SEND_RATE_PER_MINUTE="100000")
        ids = [send(ph, key, f"user{i}@accept.example.net") for i in range(40)]

        def sessions_waiting(n):
            deadline = time.monotonic() + 20
            while len(held) < n and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(held) == n, "the sessions to the relay are open and waiting"
            time.sleep(0.5)  # and the sessions wait for the greeting
        sessions_waiting(8)
        assert ph.stop() == 0
        # At the next start the leases are lifted and all 40 are claimed at once: 8 sessions,
        # 32 jobs waiting for them.
        # Stops while the sessions are being opened, too: a few starts and stops in a row.
        for _ in range(3):
            ph.start()
            assert all(ph.get(f"/v1/emails/{em}", key=key).json()["status"] == "QUEUED"
                       for em in ids), "nothing was lost or settled by the stops"
            assert ph.stop() == 0
    finally:
        stop_accepting.set()
        acceptor.join()
        for c in held:
            c.close()
        hold.close()
