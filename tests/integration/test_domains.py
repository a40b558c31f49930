"""Domains: create, list, read, update, verify against a real DNS server (dnsmasq), the
background re-checks, and the DKIM zone round trip."""
import base64
import re
import subprocess

import pytest

from support.domains import MX, SPF, ZONE, dns_env, publish, zone_records
from support.posthorn import wait_for



def make_server(posthorn_factory, dns, **env):
    return posthorn_factory(env={**dns_env(dns), **env}).start()


@pytest.fixture
def server(posthorn_factory, dns):
    return make_server(posthorn_factory, dns)


def create(server, key, name):
    r = server.request("POST", "/v1/domains", key=key, body={"domain": name})
    assert r.status == 201, r
    return r.json()


def test_create_answers_not_started_with_every_record(server):
    key = server.account_with_key("acme")
    d = create(server, key, "Mail.Example.COM")
    assert re.fullmatch(r"dom_[0-9a-z]{26}", d["id"])
    assert d["domain"] == "mail.example.com"
    assert d["status"] == "NOT_STARTED"
    assert d["config"] == {"sending": True, "inbound": False}
    assert d["tracking"] == {"open_tracking": False, "click_tracking": False, "label": "links"}
    recs = d["records"]
    assert len(recs["dkim"]) >= 2, "two selectors, so that keys can rotate"
    tokens = set()
    for r in recs["dkim"]:
        assert r["type"] == "CNAME"
        sel = r["host"].split(".")[0]
        assert r["host"] == f"{sel}._domainkey.mail.example.com"
        m = re.fullmatch(rf"{sel}\.([a-z0-9]+)\.{re.escape(ZONE)}", r["value"])
        assert m, r
        tokens.add(m.group(1))
        assert "status" not in r, "a status comes with a verify"
    assert len(tokens) == 1
    assert recs["spf"] == {"type": "TXT", "host": "mail.example.com",
                           "value": f"v=spf1 include:{SPF} ~all"}
    assert recs["dmarc"]["type"] == "TXT" and recs["dmarc"]["host"] == "_dmarc.mail.example.com"
    assert recs["dmarc"]["value"].startswith("v=DMARC1")
    assert recs["inbound"]["type"] == "MX" and recs["inbound"]["value"] == MX

    other = create(server, key, "other.example.com")
    other_token = other["records"]["dkim"][0]["value"].split(".")[1]
    assert other_token not in tokens, "the DKIM token is unique to a domain"


def test_idn_names_are_stored_as_punycode(server):
    key = server.account_with_key("acme")
    d = create(server, key, "Bücher.example")
    assert d["domain"] == "xn--bcher-kva.example"
    by_unicode = server.get("/v1/domains/B%C3%BCcher.example", key=key)  # percent-encoded UTF-8
    assert by_unicode.status == 200 and by_unicode.json()["id"] == d["id"]
    by_puny = server.get("/v1/domains/xn--bcher-kva.example", key=key)
    assert by_puny.status == 200 and by_puny.json()["id"] == d["id"]


BAD_NAMES = ["exa mple.com", "example", "_dmarc.example.com", "ex_ample.com", "example.com.",
             "a" * 64 + ".example.com", ".".join(["a" * 63] * 4),
             ".".join(["a" * 63] * 3) + "." + "b" * 62,  # 254 characters: one too many
             "192.168.1.1", "1.2.3.4",
             "[::1]", "", "-bad.example.com", "bad-.example.com", "ex..ample.com",
             "💌.example", "exa\u0000mple.com", "example.com/path", "user@example.com"]


def test_bad_names_are_400_and_create_nothing(server):
    key = server.account_with_key("acme")
    for name in BAD_NAMES:
        r = server.request("POST", "/v1/domains", key=key, body={"domain": name})
        assert r.status == 400, (name, r)
        assert r.json()["code"] == "VALIDATION_ERROR"
    for body in [{}, {"domain": 5}, {"domain": None}, {"domain": ["a.com"]}, [],
                 {"domain": "ok.example.com", "extra": 1}]:
        r = server.request("POST", "/v1/domains", key=key, body=body)
        assert r.status == 400, (body, r)
        assert r.json()["code"] == "VALIDATION_ERROR"
    assert server.get("/v1/domains", key=key).json()["pagination"]["total"] == 0


def test_duplicates_conflict_within_an_account_only(server):
    a = server.account_with_key("alpha")
    b = server.account_with_key("beta")
    create(server, a, "shared.example.com")
    r = server.request("POST", "/v1/domains", key=a, body={"domain": "SHARED.example.com"})
    assert r.status == 409 and r.json()["code"] == "CONFLICT"
    create(server, b, "shared.example.com")


def test_list_get_update_and_isolation(server):
    a = server.account_with_key("alpha")
    b = server.account_with_key("beta")
    ids = [create(server, a, f"d{i}.example.com")["id"] for i in range(5)]
    mine = create(server, b, "beta.example.com")

    page = server.get("/v1/domains?limit=2&page=1", key=a).json()
    assert page["pagination"] == {"page": 1, "limit": 2, "total": 5, "total_pages": 3,
                                  "has_more": True}
    assert [d["id"] for d in page["data"]] == ids[::-1][:2], "newest first by default"
    asc = server.get("/v1/domains?sortOrder=asc&limit=100", key=a).json()
    assert [d["id"] for d in asc["data"]] == ids
    assert all({"domain", "status"} <= d.keys() for d in asc["data"])
    for q in ("limit=0", "limit=101", "page=0", "sortOrder=up"):
        assert server.get(f"/v1/domains?{q}", key=a).status == 400

    by_id = server.get(f"/v1/domains/{ids[0]}", key=a).json()
    by_name = server.get("/v1/domains/D0.Example.com", key=a).json()
    assert by_id == by_name
    assert set(by_id) >= {"id", "domain", "status", "config", "tracking", "records"}

    # Another account's domain does not exist, by id or by name, for reading or writing.
    for ident in (mine["id"], "beta.example.com"):
        assert server.get(f"/v1/domains/{ident}", key=a).status == 404
        assert server.request("PATCH", f"/v1/domains/{ident}", key=a,
                              body={"config": {"sending": False}}).status == 404
        assert server.request("POST", f"/v1/domains/{ident}/verify", key=a).status == 404
    assert server.get("/v1/domains/nope.example.com", key=a).status == 404
    assert server.get("/v1/domains/dom_00000000000000000000000000", key=a).status == 404

    r = server.request("PATCH", f"/v1/domains/{ids[1]}", key=a,
                       body={"config": {"inbound": True},
                             "tracking": {"open_tracking": True, "click_tracking": True}})
    assert r.status == 200 and r.json() == {"id": ids[1]}
    d = server.get(f"/v1/domains/{ids[1]}", key=a).json()
    assert d["config"] == {"sending": True, "inbound": True}
    assert d["tracking"] == {"open_tracking": True, "click_tracking": True, "label": "links"}
    r = server.request("PATCH", "/v1/domains/d1.example.com", key=a,
                       body={"config": {"sending": False}})
    assert r.status == 200
    assert server.get(f"/v1/domains/{ids[1]}", key=a).json()["config"] == \
        {"sending": False, "inbound": True}

    for body in [{"config": {"sending": "no"}}, {"config": {"sendng": True}}, {"colour": 1},
                 {"tracking": True}, {"tracking": {"open_tracking": 1}}, []]:
        r = server.request("PATCH", f"/v1/domains/{ids[1]}", key=a, body=body)
        assert r.status == 400, (body, r)
        assert r.json()["code"] == "VALIDATION_ERROR"
    assert server.get(f"/v1/domains/{ids[1]}", key=a).json()["config"] == \
        {"sending": False, "inbound": True}, "a refused PATCH changes nothing"


def verify(server, key, ident):
    r = server.request("POST", f"/v1/domains/{ident}/verify", key=key)
    assert r.status == 200, r
    return r.json()


def test_verification_against_real_dns(server, dns):
    key = server.account_with_key("acme")
    d = create(server, key, "mail.example.com")

    # Nothing published: not VERIFIED.
    v = verify(server, key, d["id"])
    assert v["status"] == "FAILED"
    assert all(r["status"] == "NOT_FOUND" for r in v["records"]["dkim"])
    assert v["records"]["spf"]["status"] == "NOT_FOUND"

    # Some records: PENDING.
    publish(dns, server, d, dkim=False, dmarc=False)
    v = verify(server, key, "mail.example.com")
    assert v["status"] == "PENDING"
    assert v["records"]["spf"]["status"] == "VERIFIED"
    assert v["records"]["dmarc"]["status"] == "NOT_FOUND"
    assert v["records"]["inbound"]["status"] == "VERIFIED"

    # A wrong CNAME target: still not VERIFIED, and the record says why.
    dns.clear()
    publish(dns, server, d, cname_target=f"ph1.wrongtoken.{ZONE}")
    v = verify(server, key, d["id"])
    assert v["status"] == "PENDING"
    assert {r["status"] for r in v["records"]["dkim"]} == {"MISMATCH"}
    assert v["records"]["dkim"][0]["found"] == [f"ph1.wrongtoken.{ZONE}"]

    # Everything right: VERIFIED, and the GET says so too.
    dns.clear()
    publish(dns, server, d)
    v = verify(server, key, d["id"])
    assert v["status"] == "VERIFIED", v
    assert all(r["status"] == "VERIFIED" for r in v["records"]["dkim"])
    got = server.get(f"/v1/domains/{d['id']}", key=key).json()
    assert got["status"] == "VERIFIED" and got["verified_at"]

    # The DNS server is down: the status does not change, and the answer says why.
    dns.stop()
    v = verify(server, key, d["id"])
    assert v["status"] == "VERIFIED"
    assert "dns_error" in v and v["dns_error"]
    assert server.get(f"/v1/domains/{d['id']}", key=key).json()["status"] == "VERIFIED"

    db = server.db()
    events = [t for (t,) in db.execute("SELECT type FROM events ORDER BY id")]
    assert events == ["domain.failed", "domain.verified"]


def test_background_checks_verify_pending_and_fail_vanished(posthorn_factory, dns):
    server = make_server(posthorn_factory, dns, POSTHORN_DNS_PENDING_RECHECK_S="1",
                         POSTHORN_DNS_VERIFIED_RECHECK_S="1")
    key = server.account_with_key("acme")
    d = create(server, key, "bg.example.com")
    publish(dns, server, d, dkim=False)
    assert verify(server, key, d["id"])["status"] == "PENDING"

    # The user publishes the rest and never calls verify again: the re-check finds it.
    dns.clear()
    publish(dns, server, d)
    wait_for(lambda: server.get(f"/v1/domains/{d['id']}", key=key).json()["status"] == "VERIFIED",
             timeout=20, what="the background check to verify the domain")

    # The records disappear: the daily check (here every second) turns it FAILED.
    dns.clear().restart()
    wait_for(lambda: server.get(f"/v1/domains/{d['id']}", key=key).json()["status"] == "FAILED",
             timeout=20, what="the re-check to fail the domain")


def test_dns_zone_publishes_the_key_the_service_holds(server, dns):
    """The TXT from `posthorn dns zone` carries the public half of the private key stored
    (sealed) for the domain: decrypt it with the data dir's master key, sign a message with
    it, and let an independent DKIM verifier (python3-dkim) check the signature against the
    TXT record from the zone."""
    import dkim
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.ciphers import aead

    key = server.account_with_key("acme")
    d = create(server, key, "signed.example.com")
    zone = zone_records(server)
    master = (server.data_dir / "master.key").read_bytes()
    assert len(master) == 32
    db = server.db()
    rows = db.execute("SELECT selector, private_key, public_key FROM dkim_keys "
                      "WHERE domain_id = ?", (d["id"],)).fetchall()
    assert len(rows) == 2
    for selector, sealed, public in rows:
        assert b"PRIVATE KEY" not in sealed, "private keys are encrypted at rest"
        pem = aead.AESGCM(master).decrypt(sealed[:12], sealed[12:],
                                            f"dkim:{d['id']}:{selector}".encode())
        private = serialization.load_pem_private_key(pem, password=None)
        spki = private.public_key().public_bytes(serialization.Encoding.DER,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
        target = next(r["value"] for r in d["records"]["dkim"] if r["host"].startswith(selector + "."))
        txt = zone[target]
        assert txt == "v=DKIM1; k=rsa; p=" + base64.b64encode(spki).decode()

        msg = (b"From: a@signed.example.com\r\nTo: b@example.net\r\nSubject: hi\r\n\r\nbody\r\n")
        sig = dkim.sign(msg, selector.encode(), b"signed.example.com", pem,
                        include_headers=[b"from", b"to", b"subject"])

        def dnsfunc(name, timeout=5):
            want = f"{selector}._domainkey.signed.example.com."
            assert name.decode() == want
            return txt.encode()
        assert dkim.verify(sig + msg, dnsfunc=dnsfunc), selector

    # Zone-file syntax: every character-string at most 255 octets.
    for line in server.cli("dns", "zone").stdout.splitlines():
        for s in re.findall(r'"([^"]*)"', line):
            assert len(s) <= 255
