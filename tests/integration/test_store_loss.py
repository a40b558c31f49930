"""A PostgreSQL store that goes away and comes back (issue 26): while the server is out of
reach, what touches the store answers 503 STORE_UNAVAILABLE and /healthz says so, never a
200 for an email that is not stored; when it is back, everything resumes without a restart.
Runs on PostgreSQL only (integration.pg.test_store_loss), with a server of its own that it
stops and starts again: a SQLite store cannot go away."""

import pytest

from support import store
from support.domains import dns_env, verified_domain
from support.posthorn import wait_for

pytestmark = pytest.mark.skipif(not store.on_pg(), reason="a PostgreSQL store only")

pg = store.pg_test_server()


def send(ph, key, subject):
    return ph.request("POST", "/v1/emails", key=key,
                      body={"from": "a@mail.example.com", "to": "u@example.net",
                            "subject": subject, "text": "x"})


def test_sends_fail_cleanly_while_the_store_is_away_and_resume_after(posthorn_factory, dns,
                                                                     own_pg_server):
    import psycopg2
    admin = psycopg2.connect(own_pg_server["url"])
    admin.autocommit = True
    admin.cursor().execute('CREATE DATABASE "loss"')
    admin.close()
    db_url = own_pg_server["url"].rsplit("/", 1)[0] + "/loss"
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DATABASE_URL": db_url}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, "mail.example.com")
    assert send(ph, key, "before").status == 200

    pg.stop_pid(own_pg_server["pid"])  # the server goes away
    own_pg_server["pid"] = None
    r = send(ph, key, "while away")
    assert r.status == 503, r
    assert r.json()["code"] == "STORE_UNAVAILABLE" and r.headers["retry-after"] == "5"
    assert ph.get("/v1/logs", key=key).status == 503
    wait_for(lambda: ph.get("/healthz").status == 503, timeout=10,
             what="/healthz to say the store is away")
    assert ph.get("/healthz").json() == {"status": "store_unavailable"}
    r = ph.get("/readyz")  # out of rotation while the store is away
    assert r.status == 503 and r.json() == {"status": "store_unavailable"}, r

    own_pg_server["pid"] = pg.serve(own_pg_server["base"], own_pg_server["port"])  # and comes back
    wait_for(lambda: ph.get("/healthz").status == 200, timeout=15,
             what="/healthz to see the store back")
    wait_for(lambda: ph.get("/readyz").status == 200, timeout=15, what="/readyz to say ready")
    wait_for(lambda: send(ph, key, "after").status == 200, timeout=15,
             what="sends to resume without a restart")
    subjects = sorted(e["subject"] for e in
                      ph.get("/v1/email?limit=100", key=key).json()["data"])
    assert "before" in subjects and "after" in subjects
    assert "while away" not in subjects, "a send answered 503 stored nothing"
    assert ph.stop() == 0, ph.output()  # while the server is up: a clean shutdown
