"""A DNSSEC-signed zone behind a validating resolver, for DANE tests (RFC 7672): the zone
is signed with ldns-signzone (Debian ldnsutils, a key from ldns-keygen) and served by nsd
on a loopback port; unbound on another loopback port validates it with the zone's own key
as trust anchor (stub-zone to nsd) and forwards every other name to a fallback server (the
test's dnsmasq), whose answers are insecure: no trust anchor covers them."""
from __future__ import annotations

import pathlib
import shutil
import socket
import subprocess
import time

from support.ports import reserve_port

TOOLS = {t: shutil.which(t) or f"/usr/sbin/{t}"
         for t in ("nsd", "unbound", "ldns-keygen", "ldns-signzone")}


def missing_tools() -> list[str]:
    return [t for t, path in TOOLS.items() if not pathlib.Path(path).exists()]


def _wait_port(proc: subprocess.Popen, port: int, log: pathlib.Path, what: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited: " + log.read_text(errors="replace"))
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not start: " + log.read_text(errors="replace"))


class _Daemon:
    """A peer run in the foreground (-d) until stop(); its stderr goes to <dir>/<name>.log."""
    proc = None

    def _run(self, name: str, args: list[str]) -> None:
        log = self.dir / f"{name}.log"
        log.touch()
        self.proc = subprocess.Popen([TOOLS[name], *args],
                                     stdout=subprocess.DEVNULL, stderr=open(log, "ab"))
        _wait_port(self.proc, self.port, log, name)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None


class SignedZone(_Daemon):
    """`origin`'s records (zone-file lines relative to it), signed and served by nsd."""

    def __init__(self, workdir: pathlib.Path, origin: str):
        self.dir = pathlib.Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.origin = origin.rstrip(".")
        self.port = reserve_port(udp=True)
        self.records: list[str] = []
        self.proc: subprocess.Popen | None = None
        out = subprocess.run([TOOLS["ldns-keygen"], "-a", "ECDSAP256SHA256", "-k", self.origin],
                             cwd=self.dir, check=True, capture_output=True, text=True)
        self.key = out.stdout.strip()  # K<origin>.+013+<tag>
        self.trust_anchor = self.dir / f"{self.key}.key"  # the DNSKEY, as unbound reads it

    def add(self, line: str) -> "SignedZone":
        self.records.append(line)
        return self

    def start(self) -> "SignedZone":
        zone = self.dir / "zone"
        zone.write_text("\n".join([
            f"$ORIGIN {self.origin}.", "$TTL 60",
            f"@ IN SOA ns.{self.origin}. admin.{self.origin}. 1 3600 600 86400 60",
            f"@ IN NS ns.{self.origin}.", "ns IN A 127.0.0.1", *self.records]) + "\n")
        subprocess.run([TOOLS["ldns-signzone"], "-f", str(self.dir / "zone.signed"), str(zone),
                        self.key], cwd=self.dir, check=True, capture_output=True)
        conf = self.dir / "nsd.conf"
        conf.write_text(f"""server:
    ip-address: 127.0.0.1@{self.port}
    port: {self.port}
    do-ip6: no
    username: ""
    chroot: ""
    zonesdir: "{self.dir}"
    pidfile: "{self.dir}/nsd.pid"
    logfile: "{self.dir}/nsd.log"
    database: ""
    zonelistfile: "{self.dir}/zone.list"
    xfrdfile: "{self.dir}/xfrd.state"
    xfrdir: "{self.dir}"
    server-count: 1
    verbosity: 1
remote-control:
    control-enable: no
zone:
    name: "{self.origin}"
    zonefile: "{self.dir}/zone.signed"
""")
        self._run("nsd", ["-d", "-c", str(conf)])
        return self


class Unbound(_Daemon):
    """A validating resolver: `zone` through its trust anchor, the rest from `fallback`
    ("127.0.0.1:port")."""

    def __init__(self, workdir: pathlib.Path, zone: SignedZone, fallback: str):
        self.dir = pathlib.Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = reserve_port(udp=True)
        fb_host, fb_port = fallback.rsplit(":", 1)
        self.conf = self.dir / "unbound.conf"
        self.conf.write_text(f"""server:
    interface: 127.0.0.1
    port: {self.port}
    do-ip6: no
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "{self.dir}"
    pidfile: "{self.dir}/unbound.pid"
    use-syslog: no
    logfile: "{self.dir}/unbound.log"
    verbosity: 1
    val-log-level: 2
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    qname-minimisation: no
    module-config: "validator iterator"
    trust-anchor-file: "{zone.trust_anchor}"
    num-threads: 1
remote-control:
    control-enable: no
stub-zone:
    name: "{zone.origin}"
    stub-addr: 127.0.0.1@{zone.port}
forward-zone:
    name: "."
    forward-addr: {fb_host}@{fb_port}
""")
        self.proc: subprocess.Popen | None = None

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "Unbound":
        self._run("unbound", ["-d", "-c", str(self.conf)])
        return self
