"""A real DNS server for tests: dnsmasq (Debian's dnsmasq-base) on a free loopback port,
answering only the records a test gives it. Restarting with new records keeps the port."""
from __future__ import annotations

import pathlib
import shutil
import socket
import subprocess
import time

from support.ports import reserve_port

DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"


def free_udp_port() -> int:
    # The port must be free for both UDP and TCP (dnsmasq listens on both).
    return reserve_port(udp=True)


def txt_strings(text: str) -> list[str]:
    """Splits a TXT value into character-strings of at most 255 octets (RFC 1035)."""
    return [text[i:i + 255] for i in range(0, len(text), 255)] or [""]


class Dnsmasq:
    def __init__(self, workdir: pathlib.Path):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_udp_port()
        self.proc: subprocess.Popen | None = None
        self.clear()

    # dnsmasq answers REFUSED for names outside the domains it is authoritative for
    # (--local); within them, an unknown name is NXDOMAIN and a missing type NODATA.
    LOCAL = ("test", "example", "example.com", "example.net", "example.org")

    def clear(self) -> "Dnsmasq":
        self.lines: list[str] = [f"local=/{d}/" for d in self.LOCAL]
        return self

    # ---- records (applied by start/restart) ----
    def txt(self, name: str, value: str) -> "Dnsmasq":
        quoted = ",".join('"' + s.replace('"', '\\"') + '"' for s in txt_strings(value))
        self.lines.append(f"txt-record={name},{quoted}")
        return self

    def cname(self, name: str, target: str) -> "Dnsmasq":
        self.lines.append(f"cname={name},{target}")
        return self

    def mx(self, name: str, host: str, preference: int = 10) -> "Dnsmasq":
        self.lines.append(f"mx-host={name},{host},{preference}")
        return self

    def host(self, name: str, ip: str) -> "Dnsmasq":
        self.lines.append(f"host-record={name},{ip}")
        return self

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "Dnsmasq":
        conf = self.workdir / "dnsmasq.conf"
        conf.write_text("\n".join(self.lines) + "\n")
        self.proc = subprocess.Popen(
            [DNSMASQ, "--no-daemon", "--no-resolv", "--no-hosts", "--no-poll",
             f"--port={self.port}", "--listen-address=127.0.0.1", "--bind-interfaces",
             f"--conf-file={conf}", "--pid-file=", "--user=root", "--group=root",
             "--log-facility=-", "--local-ttl=0"],
            stdout=subprocess.DEVNULL, stderr=open(self.workdir / "dnsmasq.log", "ab"))
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("dnsmasq exited: " +
                                     (self.workdir / "dnsmasq.log").read_text(errors="replace"))
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("dnsmasq did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> "Dnsmasq":
        self.stop()
        return self.start()
