"""A domain's lifecycle (issue 29, point 4; docs/domains.md): DELETE /v1/domains/{identifier}
erases the domain and its DKIM keys (gone from `posthorn dns zone`), keeps its emails, and
refuses later sends from it, over the API and SMTP submission; another account's domain is
404; the name can be added again, with new DKIM records; mail from it still queued fails at
its next attempt, unsigned mail never going out."""
import smtplib
import ssl
import time

from support.domains import dns_env, verified_domain, zone_records
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink

SENDER = "mail.example.com"


def tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the server's certificate is self-signed in the data dir
    return ctx


def test_a_deleted_domain_sends_no_more_and_keeps_its_emails(posthorn_factory, dns):
    ph = posthorn_factory(env=dns_env(dns)).start()
    key = ph.account_with_key("acme")
    other_key = ph.account_with_key("other")
    domain = verified_domain(ph, dns, key, SENDER)
    kept = verified_domain(ph, dns, key, "kept.example.com")
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "before",
                         "text": "x"})
    assert r.status == 200, r
    email_id = r.json()["id"]
    zone = zone_records(ph)
    dkim_targets = [rec["value"] for rec in domain["records"]["dkim"]]
    assert all(t in zone for t in dkim_targets), zone

    # Another account's, an unknown one, a body: refused, nothing changes.
    error(ph.request("DELETE", f"/v1/domains/{domain['id']}", key=other_key), 404, "NOT_FOUND")
    error(ph.request("DELETE", f"/v1/domains/{SENDER}", key=other_key), 404, "NOT_FOUND")
    error(ph.request("DELETE", "/v1/domains/nope.example.com", key=key), 404, "NOT_FOUND")
    error(ph.request("DELETE", f"/v1/domains/{domain['id']}", key=key, body={"force": True}),
          400, "VALIDATION_ERROR")
    assert ph.get(f"/v1/domains/{domain['id']}", key=key).status == 200

    # By name (an id works as well: the other domain below).
    r = ph.request("DELETE", f"/v1/domains/{SENDER.upper()}", key=key)
    assert r.status == 200, r
    assert r.json() == {"id": domain["id"], "domain": SENDER, "deleted": True}
    error(ph.get(f"/v1/domains/{domain['id']}", key=key), 404, "NOT_FOUND")
    error(ph.get(f"/v1/domains/{SENDER}", key=key), 404, "NOT_FOUND")
    listed = ph.get("/v1/domains", key=key).json()
    assert [d["id"] for d in listed["data"]] == [kept["id"]], listed
    zone = zone_records(ph)
    assert not any(t in zone for t in dkim_targets), "its DKIM keys are erased"
    assert all(rec["value"] in zone for rec in kept["records"]["dkim"])
    error(ph.request("DELETE", f"/v1/domains/{domain['id']}", key=key), 404, "NOT_FOUND")

    # Its email is kept; sends from it are refused, over the API and SMTP submission.
    e = ph.get(f"/v1/emails/{email_id}", key=key)
    assert e.status == 200 and e.json()["from"].endswith(SENDER), e
    error(ph.request("POST", "/v1/emails", key=key,
                     body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "after",
                           "text": "x"}), 403, "DOMAIN_NOT_VERIFIED")
    with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
        s.starttls(context=tls_context())
        s.login(key, key)
        try:
            s.sendmail(f"a@{SENDER}", ["u@example.net"],
                       f"From: a@{SENDER}\r\nTo: u@example.net\r\nSubject: x\r\n\r\nx\r\n")
            raise AssertionError("the submission was accepted")
        except smtplib.SMTPResponseException as refused:
            assert refused.smtp_code == 550, refused
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": "a@kept.example.com", "to": "u@example.net",
                         "subject": "other", "text": "x"})
    assert r.status == 200, r

    # The name can be added again: a new domain, with new DKIM records, to verify again.
    r = ph.request("POST", "/v1/domains", key=key, body={"domain": SENDER})
    assert r.status == 201, r
    again = r.json()
    assert again["id"] != domain["id"] and again["status"] == "NOT_STARTED"
    assert [x["value"] for x in again["records"]["dkim"]] != dkim_targets
    assert ph.request("DELETE", f"/v1/domains/{again['id']}", key=key).status == 200


def test_mail_queued_from_a_deleted_domain_fails_at_its_next_attempt(posthorn_factory, dns):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    # The first attempt is deferred; the retry comes after the domain is gone.
    sink = SmtpSink("127.0.0.2", port, Script(data=["451 4.3.0 try again later"])).start()
    try:
        ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                                   "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "2,2,2"}).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, SENDER)
        r = ph.request("POST", "/v1/emails", key=key,
                       body={"from": f"a@{SENDER}", "to": "u@sink.example.net",
                             "subject": "queued", "text": "x"})
        assert r.status == 200, r
        email_id = r.json()["id"]
        wait_for(lambda: sink.transactions >= 1, timeout=20, what="the first attempt")
        assert ph.request("DELETE", f"/v1/domains/{SENDER}", key=key).status == 200

        def failed():
            e = ph.get(f"/v1/emails/{email_id}", key=key).json()
            return e if e["status"] == "FAILED" else None
        e = wait_for(failed, timeout=20, what="the email FAILED")
        (rcpt,) = e["recipients"]
        assert rcpt["bounce"]["code"] == "5.7.0", rcpt
        assert "was deleted" in rcpt["bounce"]["message"], rcpt
        time.sleep(3)
        assert sink.transactions == 1, "nothing unsigned went out, and no retry followed"
        assert sink.messages == [], "the deferred attempt delivered nothing"
    finally:
        sink.stop()
