"""Verified sending domains for tests: publishes a domain's records in dnsmasq (and the
DKIM TXT targets from `posthorn dns zone`) and verifies it through the API."""
from __future__ import annotations

import re

ZONE = "dkim.posthorn.test"
SPF = "spf.posthorn.test"
MX = "mx.posthorn.test"


def dns_env(dns) -> dict[str, str]:
    """The test DNS server and zones; the test MX hosts are on loopback, which delivery
    refuses unless private targets are allowed."""
    return {"POSTHORN_DNS_SERVERS": dns.server, "POSTHORN_DNS_DKIM_ZONE": ZONE,
            "POSTHORN_DNS_SPF_INCLUDE": SPF, "POSTHORN_DNS_INBOUND_MX": MX,
            "POSTHORN_DELIVERY_ALLOW_PRIVATE_TARGETS": "true"}


def zone_records(server) -> dict[str, str]:
    """`posthorn dns zone` parsed: TXT owner → joined text."""
    records = {}
    for line in server.cli("dns", "zone").stdout.splitlines():
        if line.startswith(";") or not line.strip():
            continue
        owner = line.split()[0].rstrip(".")
        records[owner] = "".join(re.findall(r'"([^"]*)"', line.split(" ; ")[0]))
    return records


def publish(dns, server, domain, *, dkim=True, spf=True, dmarc=True, inbound=True,
            cname_target=None, restart=True):
    recs = domain["records"]
    zone = zone_records(server)
    if dkim:
        for r in recs["dkim"]:
            target = cname_target or r["value"]
            dns.cname(r["host"], target)
            dns.host(target, "127.0.0.10")  # a dnsmasq cname target must be a name it knows
            if target in zone:
                dns.txt(target, zone[target])
    if spf:
        dns.txt(recs["spf"]["host"], recs["spf"]["value"])
    if dmarc:
        dns.txt(recs["dmarc"]["host"], recs["dmarc"]["value"])
    if inbound:
        dns.mx(recs["inbound"]["host"], MX)
        dns.host(MX, "127.0.0.11")
    if restart:
        dns.restart()


def verified_domain(server, dns, key, name) -> dict:
    r = server.request("POST", "/v1/domains", key=key, body={"domain": name})
    assert r.status == 201, r
    domain = r.json()
    publish(dns, server, domain)
    v = server.request("POST", f"/v1/domains/{domain['id']}/verify", key=key).json()
    assert v["status"] == "VERIFIED", v
    return v
