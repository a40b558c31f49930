"""DKIM rotation behind the CNAMEs users published (issue 29, point 4; docs/domains.md,
"Rotation"): POST /v1/domains/{identifier}/dkim/rotate makes a new key for the selector that
does not sign; it is in `posthorn dns zone` at once, but mail stays signed by the old
selector until posthorn sees, by a real DNS lookup (dnsmasq), that the zone serves the new
key; then the background job switches, and mail is signed by the new selector. Signatures
are verified by python3-dkim against the TXT records dnsmasq serves."""
import time

import dkim
import dns.message
import dns.query
import dns.rdatatype

from support.domains import dns_env, publish, verified_domain, zone_records
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import SmtpSink

SENDER = "mail.example.com"


def dkim_verifies(dnsmasq, message: bytes) -> bool:
    """python3-dkim, its key looked up at dnsmasq, following the user's CNAME into the
    operator's zone as a recursive resolver would (dnsmasq answers a TXT query for a local
    CNAME with the CNAME alone)."""
    host, port = dnsmasq.server.split(":")

    def dnsfunc(name, timeout=5):
        name = name.decode().rstrip(".")
        for _ in range(5):
            q = dns.message.make_query(name, dns.rdatatype.TXT)
            answer = dns.query.udp(q, host, port=int(port), timeout=timeout)
            txt = [rrset for rrset in answer.answer if rrset.rdtype == dns.rdatatype.TXT]
            if txt:
                return b"".join(b"".join(rd.strings) for rd in txt[0])
            cname = [rrset for rrset in answer.answer if rrset.rdtype == dns.rdatatype.CNAME]
            if not cname:
                return None
            name = str(cname[0][0].target).rstrip(".")
        return None
    return dkim.verify(message, dnsfunc=dnsfunc)


def selector_of(message: bytes) -> str:
    header = message.split(b"\r\n\r\n")[0].decode()
    sig = header.split("DKIM-Signature:")[1]
    tags = dict(t.strip().split("=", 1) for t in sig.replace("\r\n", "").split(";") if "=" in t)
    return tags["s"].strip()


def send_and_receive(ph, key, sink, subject):
    before = len(sink.messages)
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": "u@sink.example.net",
                         "subject": subject, "text": "hello"})
    assert r.status == 200, r
    msgs = sink.wait_messages(before + 1)
    return msgs[before].data


def test_rotation_switches_only_once_the_zone_serves_the_new_key(posthorn_factory, dns):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    sink = SmtpSink("127.0.0.2", port).start()
    try:
        # pending_recheck_s 1: the background job passes every second.
        ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                                   "POSTHORN_DNS_PENDING_RECHECK_S": "1"}).start()
        key = ph.account_with_key("acme")
        other_key = ph.account_with_key("other")
        domain = verified_domain(ph, dns, key, SENDER)
        assert domain["dkim"] == {"active_selector": "ph1", "rotation": "NONE",
                                  "pending_selector": None, "rotated_at": None}, domain["dkim"]
        assert [r["state"] for r in domain["records"]["dkim"]] == ["ACTIVE", "INACTIVE"]
        old_zone = zone_records(ph)
        ph2_target = domain["records"]["dkim"][1]["value"]
        ph1_target = domain["records"]["dkim"][0]["value"]
        first = send_and_receive(ph, key, sink, "before")
        assert selector_of(first) == "ph1" and dkim_verifies(dns, first)

        # Refused, changing nothing: another account's domain, unknown or malformed
        # identifiers, a body.
        path = f"/v1/domains/{domain['id']}/dkim/rotate"
        error(ph.request("POST", path, key=other_key), 404, "NOT_FOUND")
        error(ph.request("POST", f"/v1/domains/{SENDER}/dkim/rotate", key=other_key), 404,
              "NOT_FOUND")
        error(ph.request("POST", "/v1/domains/nope.example.com/dkim/rotate", key=key), 404,
              "NOT_FOUND")
        error(ph.request("POST", "/v1/domains/not%20a%20domain!/dkim/rotate", key=key), 404,
              "NOT_FOUND")
        error(ph.request("POST", "/v1/domains/dom_0000/dkim/rotate", key=key), 404, "NOT_FOUND")
        error(ph.request("POST", path, key=key, body={"selector": "ph2"}), 400,
              "VALIDATION_ERROR")
        error(ph.request("GET", path, key=key), 405, "METHOD_NOT_ALLOWED")
        assert zone_records(ph) == old_zone

        # The rotation: a new ph2 key, in the zone at once, pending.
        r = ph.request("POST", f"/v1/domains/{SENDER.upper()}/dkim/rotate", key=key)
        assert r.status == 200, r
        rotated = r.json()
        assert rotated["id"] == domain["id"]
        assert rotated["dkim"] == {"active_selector": "ph1", "rotation": "PENDING",
                                   "pending_selector": "ph2", "rotated_at": None}, rotated
        assert [x["state"] for x in rotated["records"]["dkim"]] == ["ACTIVE", "PENDING"]
        assert [x["value"] for x in rotated["records"]["dkim"]] == [ph1_target, ph2_target], \
            "the CNAMEs the user published stay as they are"
        new_zone = zone_records(ph)
        assert new_zone[ph1_target] == old_zone[ph1_target]
        assert new_zone[ph2_target] != old_zone[ph2_target], "a new key for ph2"
        assert new_zone[ph2_target].startswith("v=DKIM1; k=rsa; p=")
        got = ph.get(f"/v1/domains/{domain['id']}", key=key).json()
        assert got["dkim"]["rotation"] == "PENDING" and got["status"] == "VERIFIED", got
        listed = ph.get("/v1/domains", key=key).json()["data"]
        assert listed[0]["dkim"]["pending_selector"] == "ph2", listed

        # One rotation at a time.
        msg = error(ph.request("POST", path, key=key), 409, "CONFLICT")
        assert "pending" in msg, msg
        assert zone_records(ph) == new_zone, "the refused rotation made no key"

        # dnsmasq still serves the old ph2 key: several passes of the job later, ph1 signs.
        time.sleep(4)
        got = ph.get(f"/v1/domains/{domain['id']}", key=key).json()
        assert got["dkim"]["active_selector"] == "ph1", got["dkim"]
        assert got["dkim"]["rotation"] == "PENDING", got["dkim"]
        during = send_and_receive(ph, key, sink, "during")
        assert selector_of(during) == "ph1"
        assert dkim_verifies(dns, during), "the old key still signs, and verifies"

        # The operator loads the new zone; once dnsmasq serves it, ph2 signs.
        dns.clear()
        dns.mx("sink.example.net", "mx.sink.example.net", 10)
        dns.host("mx.sink.example.net", "127.0.0.2")
        publish(dns, ph, domain)  # the records again, with the TXT of `posthorn dns zone`

        def switched():
            d = ph.get(f"/v1/domains/{domain['id']}", key=key).json()
            return d if d["dkim"]["rotation"] == "NONE" else None
        done = wait_for(switched, timeout=20, what="the switch to ph2")
        assert done["dkim"]["active_selector"] == "ph2", done["dkim"]
        assert done["dkim"]["pending_selector"] is None
        assert done["dkim"]["rotated_at"] is not None
        assert [x["state"] for x in done["records"]["dkim"]] == ["INACTIVE", "ACTIVE"]
        assert done["status"] == "VERIFIED"
        assert ("DKIM rotation of mail.example.com: the DKIM zone serves the new key, "
                "ph2 signs now") in ph.output()
        after = send_and_receive(ph, key, sink, "after")
        assert selector_of(after) == "ph2", "the new selector signs"
        assert dkim_verifies(dns, after), "and python3-dkim verifies it through dnsmasq"

        # The next rotation replaces ph1's key; ph2 signs meanwhile.
        r = ph.request("POST", path, key=key)
        assert r.status == 200, r
        assert r.json()["dkim"]["pending_selector"] == "ph1"
        assert zone_records(ph)[ph1_target] != new_zone[ph1_target]
        again = send_and_receive(ph, key, sink, "again")
        assert selector_of(again) == "ph2" and dkim_verifies(dns, again)
    finally:
        sink.stop()


def test_keys_older_than_rotate_days_rotate_by_themselves(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DKIM_ROTATE_DAYS": "1",
                               "POSTHORN_DNS_PENDING_RECHECK_S": "1"}).start()
    key = ph.account_with_key("acme")
    old = verified_domain(ph, dns, key, SENDER)
    young = verified_domain(ph, dns, key, "young.example.com")
    before = zone_records(ph)
    time.sleep(3)  # several passes of the job: keys made now are not a day old
    assert ph.get(f"/v1/domains/{old['id']}", key=key).json()["dkim"]["rotation"] == "NONE"
    # The active key of one domain made two days ago (as if it had been).
    db = ph.db()
    try:
        db.execute("UPDATE dkim_keys SET created_at = created_at - 172800000 "
                   "WHERE domain_id = ? AND selector = 'ph1'", (old["id"],))
        db.commit()
    finally:
        db.close()

    def rotating():
        d = ph.get(f"/v1/domains/{old['id']}", key=key).json()
        return d if d["dkim"]["rotation"] == "PENDING" else None
    d = wait_for(rotating, timeout=20, what="the automatic rotation")
    assert d["dkim"]["active_selector"] == "ph1" and d["dkim"]["pending_selector"] == "ph2"
    assert "DKIM rotation of mail.example.com: key older than 1 days, new key for ph2" \
        in ph.output()
    ph2 = old["records"]["dkim"][1]["value"]
    assert zone_records(ph)[ph2] != before[ph2], "its new key is in the zone"
    time.sleep(2)
    assert ph.get(f"/v1/domains/{young['id']}", key=key).json()["dkim"]["rotation"] == "NONE"
    assert ph.get(f"/v1/domains/{old['id']}", key=key).json()["dkim"]["active_selector"] == \
        "ph1", "the old key signs until dnsmasq serves the new one"
