"""Moving an install from SQLite to PostgreSQL (issue 26, docs/postgresql.md "Moving an install
from SQLite"): a posthorn on SQLite sends mail (delivered, and one deferred by its recipient's
server), receives an inbound email, verifies a domain (DKIM keys sealed with the master key)
and delivers webhook events; it stops; `posthorn store copy` moves its store into a new
PostgreSQL database and prints the counts; a posthorn on that database, with the same
master key file, answers the same key, emails, searches, domain, DKIM records, webhook,
request log and inbound mail, delivers the deferred email once its server accepts (DKIM-
signed with the copied key) and signs its webhook calls with the copied secret. A second
copy into the same database is refused and changes nothing; wrong arguments are refused
with a clear message, a password is never printed. Runs on PostgreSQL only
(integration.pg.test_store_copy)."""
import re
import smtplib
import urllib.parse

import dkim
import pytest

from support import store
from support.domains import dns_env, verified_domain, zone_records
from support.posthorn import free_port, wait_for
from support.smtp_sink import Script, SmtpSink
from support.webhook_receiver import verify

pytestmark = pytest.mark.skipif(not store.on_pg(), reason="copies into PostgreSQL")

SENDER = "mail.example.com"
COUNT_LINE = re.compile(r"^([a-z_]+)\s+(\d+)\s+(\d+)(\s+differs)?$")
TABLES = ["accounts", "api_keys", "domains", "dkim_keys", "emails", "recipients",
          "suppressions", "idempotency_keys", "events", "webhooks", "webhook_deliveries",
          "webhook_attempts", "request_logs", "inbound_emails", "inbound_attachments",
          "email_tags", "templates", "stat_counters"]


def counts_of(stdout: str) -> dict[str, tuple[int, int]]:
    out = {}
    for line in stdout.splitlines():
        m = COUNT_LINE.match(line.strip())
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def rows_in(url: str) -> dict[str, int]:
    import psycopg2
    db = psycopg2.connect(url)
    try:
        with db.cursor() as c:
            out = {}
            for t in TABLES:
                c.execute(f"SELECT count(*) FROM {t}")
                out[t] = c.fetchone()[0]
            return out
    finally:
        db.close()


def with_password(url: str, password: str) -> str:
    u = urllib.parse.urlsplit(url)
    netloc = f"{u.username}:{password}@{u.hostname}:{u.port}"
    return urllib.parse.urlunsplit(u._replace(netloc=netloc))


def send(ph, key, to, subject, **fields):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"Acme <hello@{SENDER}>", "to": to, "subject": subject,
                         "text": "Hello from before the move.\r\n", **fields})
    assert r.status == 200, r
    return r.json()["id"]


def email(ph, key, em):
    r = ph.get(f"/v1/emails/{em}", key=key)
    assert r.status == 200, r
    return r.json()


def listed(ph, key, path):
    r = ph.get(path, key=key)
    assert r.status == 200, r
    return r.json()


def attempts_of(ph, key, wh_id) -> set:
    return {(a["event_id"], a["event"], a["attempt"], a["status_code"], a["created_at"])
            for a in listed(ph, key, f"/v1/webhooks/{wh_id}/deliveries?limit=100")["data"]}


def test_a_sqlite_install_moves_to_postgresql(tmp_path, posthorn_factory, dns, webhook_receiver):
    port = free_port()
    for name, ip in (("accept", "127.0.0.2"), ("defer", "127.0.0.3")):
        dns.mx(f"{name}.example.net", f"mx.{name}.example.net", 10)
        dns.host(f"mx.{name}.example.net", ip)
    dns.restart()
    accept = SmtpSink("127.0.0.2", port).start()
    defer = SmtpSink("127.0.0.3", port, Script(data=["451 4.7.1 try again later"] * 100)).start()
    rcv = webhook_receiver()
    env = {**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
           "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": ",".join(["2"] * 10),
           "POSTHORN_SMTP_HOSTNAME": "posthorn.test",
           "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
           "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1,1,1"}
    try:
        old_db = tmp_path / "old.db"
        old = posthorn_factory(env={**env, "POSTHORN_DATABASE_URL": f"sqlite://{old_db}"},
                               name="sqlite").start()
        key = old.account_with_key("acme")
        wh = old.request("POST", "/v1/webhooks", key=key,
                         body={"url": rcv.url, "events": ["email.sent", "email.delivered",
                                                          "inbound.received",
                                                          "domain.verified"]}).json()
        domain = verified_domain(old, dns, key, SENDER)
        assert old.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                           body={"config": {"inbound": True}}).status == 200
        delivered = [send(old, key, "Ann <ann@accept.example.net>", "first",
                          cc="cc@accept.example.net", tags=[{"name": "batch", "value": "b1"}],
                          metadata={"order": 7}),
                     send(old, key, "bob@accept.example.net", "second")]
        deferred = send(old, key, "dan@defer.example.net", "deferred",
                        tags=[{"name": "batch", "value": "b1"}, {"name": "moved", "value": "yes"}])
        for em in delivered:
            wait_for(lambda: email(old, key, em)["status"] == "DELIVERED", timeout=20,
                     what=f"{em} delivered")
        wait_for(lambda: email(old, key, deferred)["recipients"][0]["attempts"] >= 1,
                 timeout=20, what="the first attempt at the deferred email")
        with smtplib.SMTP("127.0.0.1", old.inbound_port, timeout=10) as s:
            s.sendmail("zoe@sender.example.org", [f"support@{SENDER}"],
                       b"From: Zoe <zoe@sender.example.org>\r\nTo: support@mail.example.com\r\n"
                       b"Subject: A question\r\n\r\nHello?\r\n")
        wait_for(lambda: listed(old, key, "/v1/emails/inbound")["data"], what="inbound stored")
        # domain.verified, email.sent and email.delivered of each delivered email, inbound.
        rcv.wait_for(6)

        # What the SQLite node answers, to be answered again by the PostgreSQL one.
        before = {
            "emails": {e["id"]: e["status"]
                       for e in listed(old, key, "/v1/email?limit=100")["data"]},
            "first": email(old, key, delivered[0]),
            "search": [e["id"] for e in listed(old, key, "/v1/email?search=bob@accept")["data"]],
            "tagged": [e["id"] for e in listed(old, key, "/v1/email?tag=batch:b1")["data"]],
            "domain": listed(old, key, f"/v1/domains/{domain['id']}"),
            "inbound": listed(old, key, "/v1/emails/inbound")["data"],
            "attempts": attempts_of(old, key, wh["id"]),
            "zone": old.cli("dns", "zone").stdout,
        }
        assert before["emails"][deferred] == "QUEUED" and len(before["emails"]) == 3
        assert before["search"] == [delivered[1]]
        logs_before = {e["id"] for e in listed(old, key, "/v1/logs?limit=100")["data"]}
        assert logs_before

        target = store.fresh_pg_database()
        # While the SQLite node runs, the copy is refused and writes nothing.
        busy = old.cli("store", "copy", "--from", f"sqlite://{old_db}", "--to", target,
                       check=False)
        assert busy.returncode == 1, busy
        assert "another process has" in busy.stderr and "stop it first" in busy.stderr, busy.stderr
        assert old.stop() == 0, old.output()

        copied = old.cli("store", "copy", "--from", f"sqlite://{old_db}", "--to", target,
                         check=False)
        assert copied.returncode == 0, copied.stderr
        counts = counts_of(copied.stdout)
        assert sorted(counts) == sorted(TABLES), copied.stdout
        assert all(s == t for s, t in counts.values()), copied.stdout
        assert counts["accounts"] == (1, 1) and counts["emails"] == (3, 3)
        assert counts["recipients"] == (4, 4) and counts["inbound_emails"] == (1, 1)
        assert counts["webhooks"] == (1, 1) and counts["dkim_keys"][0] >= 1
        assert counts["email_tags"] == (3, 3)
        assert counts["webhook_attempts"][0] >= 6 and counts["request_logs"][0] >= len(logs_before)
        assert "every count matches" in copied.stdout
        assert rows_in(target) == {t: n for t, (_, n) in counts.items()}

        # The PostgreSQL node: the same master key file (it unseals the DKIM keys and the
        # webhook secret); the deferred email's server accepts now.
        defer.script.data = []
        new = posthorn_factory(env={**env, "POSTHORN_DATABASE_URL": target,
                                    "POSTHORN_SERVER_MASTER_KEY_FILE":
                                        str(old.data_dir / "master.key")},
                               name="pg").start()
        final = wait_for(lambda: (e := email(new, key, deferred))["status"] == "DELIVERED" and e,
                         timeout=20, what="the deferred email delivered from the PostgreSQL node")
        assert final["recipients"][0]["attempts"] >= 2
        (m,) = defer.wait_messages(1)
        zone = zone_records(new)

        def dnsfunc(name, timeout=5):
            selector = name.decode().split(".")[0]
            return next((txt.encode() for owner, txt in zone.items()
                         if owner.startswith(selector + ".")), None)
        assert dkim.verify(m.data, dnsfunc=dnsfunc), "signed with the copied DKIM key"

        after = {e["id"]: e["status"] for e in listed(new, key, "/v1/email?limit=100")["data"]}
        assert after == {**before["emails"], deferred: "DELIVERED"}
        assert email(new, key, delivered[0]) == before["first"]
        assert [e["id"] for e in listed(new, key, "/v1/email?search=bob@accept")["data"]] == \
            before["search"]
        assert before["first"]["tags"] == [{"name": "batch", "value": "b1"}]
        assert before["tagged"] == [deferred, delivered[0]]
        assert [e["id"] for e in listed(new, key, "/v1/email?tag=batch:b1")["data"]] == \
            before["tagged"]
        assert listed(new, key, f"/v1/domains/{domain['id']}") == before["domain"]
        assert new.cli("dns", "zone").stdout == before["zone"]
        assert listed(new, key, "/v1/emails/inbound")["data"] == before["inbound"]
        assert listed(new, key, f"/v1/webhooks/{wh['id']}")["url"] == rcv.url
        logs_after = {e["id"] for e in listed(new, key, "/v1/logs?limit=100")["data"]}
        assert logs_before <= logs_after
        # The webhook goes on: the deferred email's events, signed with the copied secret.
        def deferred_calls():
            calls = [r for r in rcv.requests if r.json()["data"].get("email_id") == deferred]
            return calls if len(calls) >= 2 else None
        calls = wait_for(deferred_calls, timeout=20, what="the deferred email's webhook calls")
        assert sorted(c.json()["type"] for c in calls) == ["email.delivered", "email.sent"]
        assert all(c.json()["data"]["tags"] == [{"name": "batch", "value": "b1"},
                                                {"name": "moved", "value": "yes"}] for c in calls)
        for call in calls:
            v = verify(wh["secret"], call)
            assert v.ok, v.error
        assert before["attempts"] < attempts_of(new, key, wh["id"])
        assert new.stop() == 0, new.output()

        # A second copy into the same database: refused, and nothing changes. The password
        # in the URL is never printed.
        rows = rows_in(target)
        again = old.cli("store", "copy", "--from", f"sqlite://{old_db}", "--to",
                        with_password(target, "s3cret-pw"), check=False)
        assert again.returncode == 1, again
        assert "not empty" in again.stderr and "accounts (1 rows)" in again.stderr, again.stderr
        assert "s3cret-pw" not in again.stdout + again.stderr and "***" in again.stderr
        assert rows_in(target) == rows
    finally:
        accept.stop()
        defer.stop()


def test_wrong_arguments_are_refused_clearly(posthorn_factory, tmp_path):
    ph = posthorn_factory()
    target = store.fresh_pg_database()
    secret = with_password(target, "s3cret-pw")

    def copy(*args):
        r = ph.cli("store", "copy", *args, check=False)
        assert "s3cret-pw" not in r.stdout + r.stderr, r
        return r

    r = copy("--from", secret, "--to", target)
    assert r.returncode == 2 and "--from" in r.stderr and "SQLite" in r.stderr, r.stderr
    r = copy("--from", f"sqlite://{tmp_path}/x.db", "--to", f"sqlite://{tmp_path}/y.db")
    assert r.returncode == 2 and "--to" in r.stderr, r.stderr
    r = copy("--from", f"sqlite://{tmp_path}/x.db", "--to", "mysql://root:s3cret-pw@db/p")
    assert r.returncode == 2 and "mysql://root:***@db/p" in r.stderr, r.stderr
    r = copy("--from", f"sqlite://{tmp_path}/x.db")
    assert r.returncode == 2 and "--to is required" in r.stderr, r.stderr
    r = copy("--from", f"sqlite://{tmp_path}/missing.db", "--to", secret)
    assert r.returncode == 1 and "cannot read" in r.stderr and "missing.db" in r.stderr, r.stderr
    (tmp_path / "not-a-store.db").write_bytes(b"")
    r = copy("--from", f"sqlite://{tmp_path}/not-a-store.db", "--to", secret)
    assert r.returncode == 1 and "not a posthorn store" in r.stderr, r.stderr
    import psycopg2
    db = psycopg2.connect(target)
    try:
        with db.cursor() as c:
            c.execute("SELECT to_regclass('accounts') IS NULL")
            assert c.fetchone()[0], "a refused copy does not even migrate the target"
    finally:
        db.close()
