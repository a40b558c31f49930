"""The custom return path (issue 29 point 4, docs/domains.md#return-path): a domain's
`return_path` CNAME (<label>.<domain> → the operator's bounce host), served by dnsmasq and
verified by posthorn; once verified, mail leaves with the envelope sender
bounces+<token>@<label>.<domain>, which passes an SPF check made by a real SPF library
(Debian's python3-spf) against dnsmasq's records; DSNs to it are matched to the right
recipient, and nothing else at that host is taken."""
import smtplib

import dns.resolver
import pytest
import spf

from support.domains import MX, SPF
from test_delivery import SENDER, send, wait_status, world  # noqa: F401 (world: a fixture)
from test_smtp import DSN

HOST = f"bounces.{SENDER}"  # the default label


def spf_result(dnsmasq, ip, mail_from, helo="posthorn.test"):
    """RFC 7208 check_host() by pyspf, its DNS asked of the test's dnsmasq."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = dnsmasq.port
    saved = dns.resolver.default_resolver
    dns.resolver.default_resolver = resolver  # pyspf asks through dns.resolver.query()
    try:
        result, _explanation = spf.check2(i=ip, s=mail_from, h=helo)
    finally:
        dns.resolver.default_resolver = saved
    return result


def publish_return_path(world, domain):
    """What the user publishes (the CNAME) and what the operator publishes at its target:
    SPF naming dns.spf_include, which lists the sending address. The target is MX (the
    default: dns.inbound_mx), whose address record is the implicit MX."""
    rp = domain["records"]["return_path"]
    assert rp["type"] == "CNAME" and rp["value"] == MX, rp
    world.dns.cname(rp["host"], rp["value"])
    world.dns.txt(MX, f"v=spf1 include:{SPF} -all")
    world.dns.txt(SPF, "v=spf1 ip4:127.0.0.1 -all")
    world.dns.restart()


def verify(ph, key):
    r = ph.request("POST", f"/v1/domains/{SENDER}/verify", key=key)
    assert r.status == 200, r
    return r.json()


def delivered(world, ph, key, to):
    sink_count = len(world.accept.messages)
    em = send(ph, key, to)
    assert wait_status(ph, key, em)["status"] == "DELIVERED"
    assert len(world.accept.messages) == sink_count + 1
    return em, world.accept.messages[-1]


def rcpt_code(ph, address):
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        s.ehlo("mx.example.net")
        s.mail("")
        code, _ = s.rcpt(address)
        return code


@pytest.fixture
def rp_world(world):
    ph, key = world.server()
    world.accept = world.sink("accept")
    return world, ph, key


def test_the_return_path_record_is_shown_and_does_not_decide_the_status(rp_world):
    world, ph, key = rp_world
    d = ph.get(f"/v1/domains/{SENDER}", key=key).json()
    assert d["status"] == "VERIFIED", "verified without any return path published"
    assert d["return_path"] == {"label": "bounces", "host": HOST, "verified": False}
    rp = d["records"]["return_path"]
    assert rp["host"] == HOST and rp["value"] == MX and rp["type"] == "CNAME"
    assert rp["status"] == "NOT_FOUND" and rp["found"] == []

    # A CNAME to somewhere else is a MISMATCH, and still not counted.
    world.dns.cname(HOST, "elsewhere.example.org")
    world.dns.host("elsewhere.example.org", "127.0.0.12")
    world.dns.restart()
    v = verify(ph, key)
    assert v["status"] == "VERIFIED"
    assert v["records"]["return_path"]["status"] == "MISMATCH"
    assert v["records"]["return_path"]["found"] == ["elsewhere.example.org"]
    assert v["return_path"]["verified"] is False


def test_a_verified_return_path_aligns_spf_and_takes_the_dsns(rp_world):
    world, ph, key = rp_world
    # Before verification: the server's own envelope sender.
    old_em, old = delivered(world, ph, key, "before@accept.example.net")
    assert old.mail_from.startswith("bounces+") and old.mail_from.endswith("@posthorn.test")

    d = ph.get(f"/v1/domains/{SENDER}", key=key).json()
    publish_return_path(world, d)
    v = verify(ph, key)
    assert v["status"] == "VERIFIED"
    assert v["records"]["return_path"]["status"] == "VERIFIED", v["records"]["return_path"]
    assert v["records"]["return_path"]["found"] == [MX]
    assert v["return_path"] == {"label": "bounces", "host": HOST, "verified": True}
    assert ph.get(f"/v1/domains/{SENDER}", key=key).json()["return_path"]["verified"] is True

    em, m = delivered(world, ph, key, ["ann@accept.example.net", "bob@accept.example.net"])
    local, _, host = m.mail_from.partition("@")
    assert host == HOST, m.mail_from
    assert local.startswith("bounces+")
    # SPF under the user's own domain (aligned with From: hello@mail.example.com for DMARC),
    # passing for the address the message came from, failing for any other.
    assert m.peer == "127.0.0.1", m.peer
    assert spf_result(world.dns, m.peer, m.mail_from) == "pass"
    assert spf_result(world.dns, "192.0.2.1", m.mail_from) == "fail"
    # The server's own envelope sender names no SPF record here: not a pass.
    assert spf_result(world.dns, m.peer, old.mail_from) != "pass"

    # Nothing else at the return-path host is taken: an unknown token, the bounce address
    # of an email sent before (its return path is the server's), and a host that is no
    # return path of that email.
    assert rcpt_code(ph, f"bounces+garbage@{HOST}") == 550
    assert rcpt_code(ph, old.mail_from.replace("@posthorn.test", f"@{HOST}")) == 550
    assert rcpt_code(ph, f"{local}@bounces.other.example.com") == 550
    assert rcpt_code(ph, f"postmaster@{HOST}") == 550
    assert wait_status(ph, key, old_em)["status"] == "DELIVERED", "not bounced by any of them"

    # A real DSN to the new address bounces the recipient it names, and only that one.
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        assert s.sendmail("", [m.mail_from],
                          DSN.format(rcpt=m.mail_from, failed="bob@accept.example.net")) == {}
    e = ph.get(f"/v1/emails/{em}", key=key).json()
    by_address = {r["email"]: r for r in e["recipients"]}
    assert by_address["bob@accept.example.net"]["status"] == "BOUNCED", e
    assert by_address["bob@accept.example.net"]["bounce"]["code"] == "5.1.1"
    assert by_address["ann@accept.example.net"]["status"] == "DELIVERED", e

    # Another label: not verified until checked, so the next mail goes out with the server's
    # envelope sender again; a DSN about the earlier mail still finds it (its return path
    # was decided when it was accepted).
    r = ph.request("PATCH", f"/v1/domains/{SENDER}", key=key,
                   body={"return_path": {"label": "RP"}})
    assert r.status == 200, r
    d = ph.get(f"/v1/domains/{SENDER}", key=key).json()
    assert d["return_path"] == {"label": "rp", "host": f"rp.{SENDER}", "verified": False}
    assert d["records"]["return_path"]["host"] == f"rp.{SENDER}"
    assert "status" not in d["records"]["return_path"]
    assert d["status"] == "VERIFIED" and d["config"]["sending"] is True
    _em3, m3 = delivered(world, ph, key, "carol@accept.example.net")
    assert m3.mail_from.endswith("@posthorn.test"), m3.mail_from
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        assert s.sendmail("", [m.mail_from],
                          DSN.format(rcpt=m.mail_from, failed="ann@accept.example.net")) == {}
    e = ph.get(f"/v1/emails/{em}", key=key).json()
    assert {r["status"] for r in e["recipients"]} == {"BOUNCED"}, e
    # Once the new label's CNAME is found, the mail goes out under it.
    world.dns.cname(f"rp.{SENDER}", MX)
    world.dns.restart()
    assert verify(ph, key)["return_path"]["verified"] is True
    _em4, m4 = delivered(world, ph, key, "dave@accept.example.net")
    assert m4.mail_from.endswith(f"@rp.{SENDER}"), m4.mail_from
    assert spf_result(world.dns, m4.peer, m4.mail_from) == "pass"
    # A CNAME taken away: the next check unverifies it.
    world.dns.lines = [ln for ln in world.dns.lines if not ln.startswith(f"cname=rp.{SENDER},")]
    world.dns.restart()
    v = verify(ph, key)
    assert v["records"]["return_path"]["status"] == "NOT_FOUND"
    assert v["return_path"]["verified"] is False and v["status"] == "VERIFIED"


def test_labels_are_checked_and_scoped_to_the_account(rp_world):
    world, ph, key = rp_world
    r = ph.request("POST", "/v1/domains", key=key,
                   body={"domain": "other.example.com", "return_path": {"label": "mail-from"}})
    assert r.status == 201, r
    d = r.json()
    assert d["return_path"] == {"label": "mail-from", "host": "mail-from.other.example.com",
                                "verified": False}
    assert d["records"]["return_path"] == {"type": "CNAME", "host": "mail-from.other.example.com",
                                           "value": MX}

    bad_bodies = [
        ({"return_path": {"label": "bad_label"}}, "return_path.label"),
        ({"return_path": {"label": "-x"}}, "hyphen"),
        ({"return_path": {"label": "a.b"}}, "return_path.label"),
        ({"return_path": {"label": ""}}, "1 to 63"),
        ({"return_path": {"label": "x" * 64}}, "1 to 63"),
        ({"return_path": {"label": 7}}, "must be a string"),
        ({"return_path": {}}, "return_path.label is required"),
        ({"return_path": {"label": "ok", "other": 1}}, "unknown field 'return_path.other'"),
        ({"return_path": "bounces"}, "return_path must be an object"),
    ]
    for body, words in bad_bodies:
        r = ph.request("POST", "/v1/domains", key=key, body={"domain": "bad.example.com", **body})
        assert r.status == 400, (body, r)
        assert r.json()["code"] == "VALIDATION_ERROR"
        assert words in r.json()["message"], (body, r.json())
        r = ph.request("PATCH", f"/v1/domains/{SENDER}", key=key, body=body)
        assert r.status == 400, (body, r)
        assert words in r.json()["message"], (body, r.json())
    names = [x["domain"] for x in ph.get("/v1/domains", key=key).json()["data"]]
    assert "bad.example.com" not in names, "nothing made"
    assert ph.get(f"/v1/domains/{SENDER}", key=key).json()["return_path"]["label"] == "bounces"
    # Too long with the domain's name (253 in all).
    long_name = ".".join(["d" * 63] * 3 + ["d" * 50, "com"])  # 246 characters
    r = ph.request("POST", "/v1/domains", key=key,
                   body={"domain": long_name, "return_path": {"label": "b" * 20}})
    assert r.status == 400, r
    assert "253" in r.json()["message"]

    # Another account's domain is not found, and keeps its label.
    other_key = ph.account_with_key("other")
    r = ph.request("PATCH", f"/v1/domains/{SENDER}", key=other_key,
                   body={"return_path": {"label": "mine"}})
    assert r.status == 404, r
    r = ph.request("PATCH", f"/v1/domains/{d['id']}", key=other_key,
                   body={"return_path": {"label": "mine"}})
    assert r.status == 404, r
    assert ph.get(f"/v1/domains/{d['id']}", key=key).json()["return_path"]["label"] == "mail-from"
