"""Verified outbound TLS (docs/delivery.md, TLS policies) against real peers: aiosmtpd sinks
offering STARTTLS with certificates from a test CA made here (python3-cryptography), good
and bad; MTA-STS policies (RFC 8461) served over HTTPS by Python's http.server, found
through dnsmasq; and DANE (RFC 7672) with TLSA records in a zone signed by ldns-signzone,
served by nsd behind a validating unbound that posthorn asks."""
import time

import pytest

from support import store
from support.dnsmasq import Dnsmasq
from support.dnssec import SignedZone, Unbound, missing_tools
from support.domains import dns_env, verified_domain
from support.mta_sts_server import MtaStsServer
from support.posthorn import free_port
from support.smtp_sink import SmtpSink, self_signed
from support.test_ca import TestCa, leaf_spki_sha256

# The TLS policies of delivery, above the store (whose keeping of each recipient's TLS has
# its contract test on both back ends): one run, on SQLite, keeps CI's time for the rest.
pytestmark = pytest.mark.skipif(store.on_pg(), reason="delivery's TLS; one run is enough")

SENDER = "mail.example.com"
FINAL = {"DELIVERED", "BOUNCED", "FAILED", "BLOCKED"}
GOOD, WRONG, SELF = "127.0.0.21", "127.0.0.22", "127.0.0.23"


def send(ph, key, to):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"Acme <hello@{SENDER}>", "to": to, "subject": "TLS test",
                         "text": "Hello over TLS.\r\n"})
    assert r.status == 200, r
    return r.json()["id"]


def attempted(ph, key, em, timeout=20.0):
    """The email once its recipient has an outcome: final, or deferred with a TLS record."""
    deadline = time.monotonic() + timeout
    while True:
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        r = e["recipients"][0]
        if e["status"] in FINAL or (r["attempts"] >= 1 and r["tls"] is not None):
            return e
        if time.monotonic() > deadline:
            raise AssertionError(f"no outcome yet: {e}")
        time.sleep(0.1)


@pytest.fixture
def ca(tmp_path):
    return TestCa(tmp_path / "ca")


@pytest.fixture
def world(tmp_path, posthorn_factory, ca):
    """dnsmasq; three sinks on one port: GOOD (a test-CA certificate for its MX name), WRONG
    (a test-CA certificate for another name), SELF (self-signed for its name); an MTA-STS
    policy server for the domains a test publishes."""
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    good = SmtpSink(GOOD, port, tls=ca.server_context("good", ["mx.good.example.net"])).start()
    wrong = SmtpSink(WRONG, port, tls=ca.server_context("wrong", ["wrong.example.org"])).start()
    selfs = SmtpSink(SELF, port, tls=self_signed(tmp_path, "mx.self.example.net")).start()
    dns.host("mx.good.example.net", GOOD).host("mx.wrong.example.net", WRONG)
    dns.host("mx.self.example.net", SELF)
    policy_domains = ["enforce.example.net", "enforcebad.example.net", "testing.example.net",
                      "notlisted.example.net"]
    sts = MtaStsServer(ca.server_context("mta-sts", [f"mta-sts.{d}" for d in policy_domains]))
    sts.start()

    class World:
        pass

    w = World()
    w.dns, w.good, w.wrong, w.self_signed, w.sts = dns, good, wrong, selfs, sts

    def publish(domain, mx, mode=None, mx_patterns=None):
        dns.mx(domain, mx, 10)
        if mode:
            dns.txt(f"_mta-sts.{domain}", "v=STSv1; id=20261201T000000;")
            dns.host(f"mta-sts.{domain}", "127.0.0.1")
            sts.policy(domain, mode, mx_patterns or [mx])

    def server(**env):
        dns.start()
        base = {**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "60,60",
                "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S": "3",
                "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S": "5",
                "POSTHORN_SMTP_HOSTNAME": "posthorn.test",
                "POSTHORN_DELIVERY_TLS_CA_FILE": str(ca.ca_file),
                "POSTHORN_DELIVERY_MTA_STS_PORT": str(sts.port),
                "POSTHORN_DELIVERY_MTA_STS_ALLOW_PRIVATE": "true"}
        base.update(env)
        ph = posthorn_factory(env=base).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, SENDER)
        return ph, key

    w.publish, w.server = publish, server
    yield w
    for s in (good, wrong, selfs):
        s.stop()
    sts.stop()
    dns.stop()


def test_mta_sts_enforce_delivers_to_a_verified_mx(world):
    world.publish("enforce.example.net", "mx.good.example.net", "enforce", ["*.good.example.net"])
    ph, key = world.server()
    e = attempted(ph, key, send(ph, key, "ann@enforce.example.net"))
    assert e["status"] == "DELIVERED", (e["recipients"], ph.output()[-2000:])
    tls = e["recipients"][0]["tls"]
    assert tls["policy"] == "mta-sts" and tls["verified"] is True, tls
    assert tls["version"].startswith("TLSv1"), tls
    assert tls["failure"] is None, tls
    (m,) = world.good.wait_messages(1)
    assert m.tls
    assert world.sts.fetches.get("enforce.example.net") == 1


def test_mta_sts_enforce_defers_a_certificate_for_another_name(world):
    world.publish("enforcebad.example.net", "mx.wrong.example.net", "enforce")
    ph, key = world.server()
    e = attempted(ph, key, send(ph, key, "bob@enforcebad.example.net"))
    r = e["recipients"][0]
    assert e["status"] == "QUEUED" and r["status"] == "QUEUED", e
    assert r["next_attempt_at"], r
    assert "mta-sts policy" in r["last_response"] and "hostname mismatch" in r["last_response"], r
    assert r["tls"]["policy"] == "mta-sts" and r["tls"]["verified"] is False, r
    assert "hostname mismatch" in r["tls"]["failure"], r
    assert world.wrong.messages == [] and world.wrong.transactions == 0


def test_mta_sts_enforce_never_connects_to_an_mx_not_in_the_policy(world):
    world.publish("notlisted.example.net", "mx.good.example.net", "enforce",
                  ["mx.elsewhere.example.net"])
    ph, key = world.server()
    e = attempted(ph, key, send(ph, key, "cy@notlisted.example.net"))
    r = e["recipients"][0]
    assert e["status"] == "QUEUED", e
    assert "not an MX host of the domain's MTA-STS policy" in r["last_response"], r
    assert r["tls"] == {"policy": "mta-sts", "version": None, "verified": False,
                        "failure": "mx.good.example.net is not an MX host of the domain's "
                                   "MTA-STS policy"}, r
    assert world.good.connections == 0


def test_mta_sts_testing_delivers_and_records_the_failure(world):
    world.publish("testing.example.net", "mx.wrong.example.net", "testing")
    ph, key = world.server()
    e = attempted(ph, key, send(ph, key, "dee@testing.example.net"))
    assert e["status"] == "DELIVERED", (e["recipients"], ph.output()[-2000:])
    tls = e["recipients"][0]["tls"]
    assert tls["policy"] == "mta-sts" and tls["verified"] is False, tls
    assert tls["version"].startswith("TLSv1") and "hostname mismatch" in tls["failure"], tls
    assert len(world.wrong.wait_messages(1)) == 1
    assert "reported only" in ph.output()


def test_without_a_policy_opportunistic_tls_is_recorded_unverified(world):
    world.publish("plain.example.net", "mx.self.example.net")
    ph, key = world.server()
    e = attempted(ph, key, send(ph, key, "eve@plain.example.net"))
    assert e["status"] == "DELIVERED", (e["recipients"], ph.output()[-2000:])
    tls = e["recipients"][0]["tls"]
    assert tls["policy"] == "opportunistic" and tls["verified"] is False, tls
    assert tls["failure"] is None and tls["version"].startswith("TLSv1"), tls


def test_verify_mode_delivers_to_a_trusted_name_and_defers_an_untrusted_one(world):
    world.publish("trusted.example.net", "mx.good.example.net")
    world.publish("untrusted.example.net", "mx.self.example.net")
    ph, key = world.server(POSTHORN_DELIVERY_TLS="verify")
    ok = attempted(ph, key, send(ph, key, "fay@trusted.example.net"))
    assert ok["status"] == "DELIVERED", ok
    assert ok["recipients"][0]["tls"]["policy"] == "verify"
    assert ok["recipients"][0]["tls"]["verified"] is True
    bad = attempted(ph, key, send(ph, key, "gus@untrusted.example.net"))
    r = bad["recipients"][0]
    assert bad["status"] == "QUEUED", bad
    assert r["tls"]["policy"] == "verify" and r["tls"]["verified"] is False, r
    assert "self-signed" in r["tls"]["failure"] or "self signed" in r["tls"]["failure"], r
    assert world.self_signed.messages == []


# ---- DANE ----

ZONE = "dane.example.net"
DANE_SINK = "127.0.0.24"


@pytest.fixture
def dane_world(tmp_path, posthorn_factory, ca):
    if missing_tools():
        pytest.skip("not installed: " + ", ".join(missing_tools()))
    port = free_port()
    names = [f"mx.good.{ZONE}", f"mx.bad.{ZONE}", f"mx.ta.{ZONE}"]
    cert, key = ca.issue("dane", names)
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    sink = SmtpSink(DANE_SINK, port, tls=ctx).start()
    dns = Dnsmasq(tmp_path / "dns").start()
    zone = SignedZone(tmp_path / "zone", ZONE)
    for label in ("good", "bad", "ta"):
        zone.add(f"{label} IN MX 10 mx.{label}").add(f"mx.{label} IN A {DANE_SINK}")
    zone.add(f"_{port}._tcp.mx.good IN TLSA 3 1 1 {leaf_spki_sha256(cert)}")
    zone.add(f"_{port}._tcp.mx.bad IN TLSA 3 1 1 {'0' * 64}")
    zone.add(f"_{port}._tcp.mx.ta IN TLSA 2 1 1 {ca.ca_spki_sha256()}")
    zone.start()
    unbound = Unbound(tmp_path / "unbound", zone, dns.server).start()

    def server():
        # Every name through unbound: the zone validated, the rest (the sender's records)
        # from dnsmasq. No CA file: DANE needs none.
        env = {**dns_env(dns), "POSTHORN_DNS_SERVERS": unbound.server,
               "POSTHORN_DELIVERY_MX_PORT": str(port),
               "POSTHORN_DELIVERY_RETRY_SCHEDULE_S": "60,60",
               "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S": "3",
               "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S": "5",
               "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}
        ph = posthorn_factory(env=env).start()
        k = ph.account_with_key("acme")
        verified_domain(ph, dns, k, SENDER)
        return ph, k

    class World:
        pass

    w = World()
    w.sink, w.server = sink, server
    yield w
    sink.stop()
    unbound.stop()
    zone.stop()
    dns.stop()


def test_dane_tlsa_that_matches_delivers_and_a_mismatch_defers(dane_world):
    ph, key = dane_world.server()
    good = attempted(ph, key, send(ph, key, f"ann@good.{ZONE}"))
    assert good["status"] == "DELIVERED", good
    tls = good["recipients"][0]["tls"]
    assert tls["policy"] == "dane" and tls["verified"] is True, tls
    assert len(dane_world.sink.wait_messages(1)) == 1

    ta = attempted(ph, key, send(ph, key, f"ta@ta.{ZONE}"))
    assert ta["status"] == "DELIVERED", ta
    assert ta["recipients"][0]["tls"]["verified"] is True

    bad = attempted(ph, key, send(ph, key, f"bob@bad.{ZONE}"))
    r = bad["recipients"][0]
    assert bad["status"] == "QUEUED", bad
    assert r["tls"]["policy"] == "dane" and r["tls"]["verified"] is False, r
    assert "DANE" in r["tls"]["failure"], r
    assert "dane policy" in r["last_response"], r
    assert len(dane_world.sink.messages) == 2
