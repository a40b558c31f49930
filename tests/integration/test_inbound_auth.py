"""Inbound SPF, DKIM and DMARC (docs/inbound.md, "Authentication"): mail from senders whose
records dnsmasq serves, signed by python3-dkim, sent over SMTP to the inbound listener;
the results in GET /v1/emails/inbound (and /{id}) and in inbound.received at a real
webhook receiver (the signature checked by the standardwebhooks npm package), each
answer's shape checked against docs/openapi.yaml by test_openapi.py."""
import base64
import smtplib

import dkim
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from support.domains import verified_domain
from support.posthorn import wait_for
from test_webhooks import assert_signed, create, start

RECEIVER = "mail.example.com"
SELECTOR = "s1"


def dkim_key():
    """A fresh RSA key: its PEM for python3-dkim and its TXT record value."""
    k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption())
    der = k.public_key().public_bytes(serialization.Encoding.DER,
                                      serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem, "v=DKIM1; k=rsa; p=" + base64.b64encode(der).decode()


def message(from_addr: str, subject: str, body: str = "Hello there.\r\n") -> bytes:
    return (f"From: Sender <{from_addr}>\r\nTo: support@{RECEIVER}\r\n"
            f"Subject: {subject}\r\nMessage-ID: <{subject}@sender.test>\r\n"
            f"Date: Fri, 27 Nov 2026 15:00:00 +0000\r\n\r\n{body}").encode()


def signed(msg: bytes, domain: str, pem: bytes) -> bytes:
    sig = dkim.sign(msg, SELECTOR.encode(), domain.encode(), pem,
                    include_headers=[b"From", b"To", b"Subject", b"Message-ID"])
    return sig + msg


def send(ph, mail_from: str, msg: bytes, helo: str = "client.example.org"):
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=30) as s:
        s.ehlo(helo)
        s.sendmail(mail_from, [f"support@{RECEIVER}"], msg)


def stored(ph, key, subject: str) -> dict:
    """The inbound email of that subject, from the list and from GET /{id} (their shapes
    against docs/openapi.yaml are checked in test_openapi.py); answers the authentication
    object."""
    def listed():
        r = ph.get(f"/v1/emails/inbound?search={subject}", key=key)
        assert r.status == 200, r
        data = r.json()["data"]
        return data[0] if data else None
    item = wait_for(listed, timeout=30, what=f"inbound email {subject}")
    one = ph.get(f"/v1/emails/inbound/{item['id']}", key=key)
    assert one.status == 200, one
    assert one.json()["text"].startswith("Hello"), one.json()  # the raw message read back
    assert one.json()["authentication"] == item["authentication"]
    return item["authentication"]


@pytest.fixture
def world(posthorn_factory, dns, webhook_receiver):
    pem, txt = dkim_key()
    # good: SPF allows the test client, a DKIM key, DMARC p=reject.
    dns.txt("good.example.org", "v=spf1 ip4:127.0.0.1 -all")
    dns.txt(f"{SELECTOR}._domainkey.good.example.org", txt)
    dns.txt("_dmarc.good.example.org", "v=DMARC1; p=reject; adkim=r; aspf=r")
    # hard: SPF -all, DMARC p=reject; soft: ~all; none: no record at all.
    dns.txt("hard.example.org", "v=spf1 -all")
    dns.txt("_dmarc.hard.example.org", "v=DMARC1; p=reject")
    dns.txt("soft.example.org", "v=spf1 ~all")
    dns.txt("neutral.example.org", "v=spf1 ?all")
    dns.host("none.example.org", "127.0.0.20")
    ph, key = start(posthorn_factory, dns)
    rcv = webhook_receiver()
    wh = create(ph, key, rcv.url, ["inbound.received"])
    domain = verified_domain(ph, dns, key, RECEIVER)  # restarts dnsmasq with every record
    assert ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                      body={"config": {"inbound": True}}).status == 200
    return ph, key, pem, rcv, wh


def test_a_signed_message_from_an_spf_domain_passes_all_three(world):
    ph, key, pem, rcv, wh = world
    send(ph, "bounce@good.example.org", signed(message("ann@good.example.org", "allpass"),
                                               "good.example.org", pem))
    auth = stored(ph, key, "allpass")
    assert auth["spf"] == {"result": "pass", "domain": "good.example.org", "scope": "mailfrom"}
    assert auth["dkim"] == [{"result": "pass", "domain": "good.example.org",
                             "selector": SELECTOR}]
    assert auth["dmarc"] == {"result": "pass", "domain": "good.example.org", "policy": "reject",
                             "spf_aligned": True, "dkim_aligned": True}
    # The same object in inbound.received, at the receiver, signed.
    (req,) = rcv.wait_for(1)
    body = assert_signed(wh["secret"], req)
    assert body["type"] == "inbound.received"
    assert body["data"]["authentication"] == auth, body


def test_a_tampered_body_fails_dkim_and_dmarc_still_passes_on_spf(world):
    ph, key, pem, _, _ = world
    msg = signed(message("ann@good.example.org", "tampered"), "good.example.org", pem)
    msg = msg.replace(b"Hello there.", b"Hello THERE.")
    send(ph, "bounce@good.example.org", msg)
    auth = stored(ph, key, "tampered")
    assert auth["dkim"] == [{"result": "fail", "domain": "good.example.org",
                             "selector": SELECTOR}]
    assert auth["spf"]["result"] == "pass"
    assert auth["dmarc"]["result"] == "pass"
    assert auth["dmarc"]["spf_aligned"] is True and auth["dmarc"]["dkim_aligned"] is False


def test_spf_fail_softfail_neutral_none(world):
    ph, key, _, _, _ = world
    for sender, subject, result in [("x@hard.example.org", "spfhard", "fail"),
                                    ("x@soft.example.org", "spfsoft", "softfail"),
                                    ("x@neutral.example.org", "spfneutral", "neutral"),
                                    ("x@none.example.org", "spfnone", "none")]:
        send(ph, sender, message(sender, subject))
        auth = stored(ph, key, subject)
        assert auth["spf"] == {"result": result, "domain": sender.split("@")[1],
                               "scope": "mailfrom"}, (subject, auth)
        assert auth["dkim"] == [], auth


def test_dmarc_fail_with_p_reject_is_stored_and_shown(world):
    ph, key, _, rcv, _ = world
    send(ph, "x@hard.example.org", message("boss@hard.example.org", "dmarcreject"))
    auth = stored(ph, key, "dmarcreject")  # accepted and stored: reported, not enforced
    assert auth["spf"]["result"] == "fail"
    assert auth["dmarc"] == {"result": "fail", "domain": "hard.example.org", "policy": "reject",
                             "spf_aligned": False, "dkim_aligned": False}
    (req,) = rcv.wait_for(1)
    assert req.json()["data"]["authentication"]["dmarc"]["result"] == "fail"


def test_null_sender_checks_the_helo_and_a_from_without_dmarc_is_none(world):
    ph, key, pem, _, _ = world
    send(ph, "", signed(message("ann@soft.example.org", "nullsender"), "good.example.org", pem),
         helo="good.example.org")
    auth = stored(ph, key, "nullsender")
    assert auth["spf"] == {"result": "pass", "domain": "good.example.org", "scope": "helo"}
    # Signed by good.example.org for a From of soft.example.org, which has no DMARC record.
    assert auth["dkim"][0]["result"] == "pass"
    assert auth["dmarc"] == {"result": "none", "domain": "soft.example.org", "policy": None,
                             "spf_aligned": False, "dkim_aligned": False}


def test_a_dns_failure_is_a_temperror_and_the_mail_is_kept(world):
    ph, key, _, _, _ = world
    # dnsmasq refuses names outside its zones (REFUSED): no answer, not "no record".
    send(ph, "x@sender.invalid", message("ann@sender.invalid", "dnsfails"))
    auth = stored(ph, key, "dnsfails")
    assert auth["spf"] == {"result": "temperror", "domain": "sender.invalid", "scope": "mailfrom"}
    assert auth["dmarc"]["result"] == "temperror" and auth["dmarc"]["domain"] == "sender.invalid"
