"""Crash safety (DESIGN §7): posthorn killed with SIGKILL while 1,000 accepted emails are
being delivered, then restarted: every one reaches the recipient server, none is lost and
none stays QUEUED. At-least-once: duplicates are counted and reported, not failed."""
import concurrent.futures
import re
import signal
import time

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import free_port
from support.smtp_sink import Script, SmtpSink

TOTAL = 1000


def test_sigkill_during_delivery_loses_nothing(tmp_path, posthorn_factory):
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    dns.start()
    sink = SmtpSink("127.0.0.2", port, Script(delay=0.1)).start()  # ~80/s over 8 sessions
    try:
        ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                                   "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "1,1,1,1,1",
                                   "POSTHORN_LIMITS_SEND_RATE_PER_MINUTE": "1000000",
                                   "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, "mail.example.com")

        def send(i):
            c = ph.connection()
            try:
                r = ph.request("POST", "/v1/emails", key=key, conn=c,
                               body={"from": "a@mail.example.com", "to": f"u{i}@sink.example.net",
                                     "subject": f"crash {i}", "text": "x" * 500})
                assert r.status == 200, r
                return r.json()["id"]
            finally:
                c.close()

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            ids = set(pool.map(send, range(TOTAL)))
        assert len(ids) == TOTAL

        # Kill it in the middle of delivering them.
        deadline = time.monotonic() + 60
        while len(sink.messages) < 200:
            assert time.monotonic() < deadline, "delivery did not start"
            time.sleep(0.01)
        ph.proc.send_signal(signal.SIGKILL)
        ph.proc.wait(timeout=10)
        ph.proc = None
        ph.log.close()
        delivered_before = len(sink.messages)

        ph.start()
        deadline = time.monotonic() + 120
        db = ph.db()
        while True:
            open_ = db.execute("SELECT COUNT(*) FROM emails WHERE status NOT IN "
                               "('DELIVERED', 'BOUNCED', 'FAILED', 'BLOCKED')").fetchone()[0]
            if open_ == 0:
                break
            assert time.monotonic() < deadline, f"{open_} emails still open after restart"
            time.sleep(0.2)
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM emails GROUP BY status"))
        assert statuses == {"DELIVERED": TOTAL}, statuses

        seen = {}
        for m in sink.messages:
            mid = re.search(rb"Message-I[dD]: <(em_[0-9a-z]+)@", m.data).group(1).decode()
            seen[mid] = seen.get(mid, 0) + 1
        assert set(seen) == ids, f"lost: {len(ids - set(seen))}"
        duplicates = sum(n - 1 for n in seen.values())
        print(f"\ncrash test: {delivered_before} delivered before SIGKILL, "
              f"{len(sink.messages)} in all, {duplicates} duplicates (at-least-once)")
        # Only what was in flight at the kill can be sent twice.
        assert duplicates <= 64 * 8
    finally:
        sink.stop()
        dns.stop()
