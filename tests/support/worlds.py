"""A common test world: a DNS server (dnsmasq) whose MX for sink.example.net points at a
recipient mail server (aiosmtpd) on 127.0.0.2, a posthorn delivering there, an account
with a key, and a sending domain verified against that DNS.

    @pytest.fixture
    def world(tmp_path, posthorn_factory):
        with sink_world(tmp_path, posthorn_factory, "mail.example.com") as w:
            yield w            # (posthorn, key, sink)
"""
from __future__ import annotations

import contextlib

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain
from support.posthorn import free_port
from support.smtp_sink import SmtpSink


def dns_and_sink(base, domain: str = "sink.example.net"):
    """A started dnsmasq (in base/dns) whose MX for `domain` is mx.<domain> on 127.0.0.2, and
    a started accepting aiosmtpd sink there: (dns, sink, the env that makes a posthorn
    deliver to it). The caller stops both."""
    dns = Dnsmasq(base / "dns")
    port = free_port()
    dns.mx(domain, f"mx.{domain}", 10)
    dns.host(f"mx.{domain}", "127.0.0.2")
    dns.start()
    sink = SmtpSink("127.0.0.2", port).start()
    env = {**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
           "POSTHORN_SMTP_HOSTNAME": "posthorn.test"}
    return dns, sink, env


@contextlib.contextmanager
def sink_world(tmp_path, posthorn_factory, sender: str):
    dns, sink, env = dns_and_sink(tmp_path)
    try:
        ph = posthorn_factory(env=env).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, sender)
        yield ph, key, sink
    finally:
        sink.stop()
        dns.stop()
