"""Scriptable recipient mail servers for tests: python3-aiosmtpd on a loopback address,
answering as a script says (accept, defer with 451, refuse with 550 at RCPT or after DATA,
drop the connection in the middle of DATA, answer too slowly), optionally offering
STARTTLS with a self-signed certificate. Every message it accepts is kept."""
from __future__ import annotations

import asyncio
import pathlib
import ssl
import subprocess
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP


def self_signed(workdir: pathlib.Path, name: str) -> ssl.SSLContext:
    cert, key = workdir / f"{name}.crt", workdir / f"{name}.key"
    if not cert.exists():
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


class Received:
    def __init__(self, mail_from, rcpt_tos, data, tls, helo, peer=None):
        self.mail_from, self.rcpt_tos, self.data, self.tls, self.helo = (
            mail_from, rcpt_tos, data, tls, helo)
        self.peer = peer  # the client's IP address (what an SPF check is asked about)


class Script:
    """What the server does. `data` answers may be a list, used one per transaction."""

    def __init__(self, rcpt=None, data=None, drop_in_data=0, delay=0.0):
        self.rcpt = rcpt or {}            # address → reply, e.g. "550 5.1.1 no such user"
        self.data = list(data or [])      # replies to DATA, in turn; then "250 OK"
        self.drop_in_data = drop_in_data  # the first N transactions are cut off mid-DATA
        self.delay = delay                # seconds before answering DATA


class Handler:
    def __init__(self, sink: "SmtpSink"):
        self.sink = sink

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        self.sink.rcpt_attempts.append(address)
        reply = self.sink.script.rcpt.get(address)
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        s = self.sink.script
        self.sink.transactions += 1
        if s.delay:
            await asyncio.sleep(s.delay)
        if s.drop_in_data > 0:
            s.drop_in_data -= 1
            server.transport.abort()
            return "421 dropped"
        if s.data:
            reply = s.data.pop(0)
            if not reply.startswith("2"):
                return reply
        self.sink.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                           envelope.original_content or envelope.content,
                                           session.ssl is not None, session.host_name,
                                           session.peer[0] if session.peer else None))
        return "250 2.0.0 Ok: queued as test"


class SmtpSink:
    def __init__(self, host: str, port: int, script: Script | None = None,
                 tls: ssl.SSLContext | None = None):
        self.host, self.port = host, port
        self.script = script or Script()
        self.messages: list[Received] = []
        self.rcpt_attempts: list[str] = []
        self.transactions = 0
        self.connections = 0
        sink = self

        class CountingSMTP(SMTP):
            def connection_made(self, transport):
                sink.connections += 1
                super().connection_made(transport)

        class Ctl(Controller):
            def factory(self):
                return CountingSMTP(self.handler, tls_context=tls, require_starttls=False,
                                    decode_data=False, enable_SMTPUTF8=True)

        self.controller = Ctl(Handler(self), hostname=host, port=port, ready_timeout=10)

    def start(self) -> "SmtpSink":
        self.controller.start()
        self.connections = 0  # the controller's own readiness probe is not a client
        return self

    def stop(self) -> None:
        try:
            self.controller.stop()
        except Exception:
            pass

    def wait_messages(self, n: int, timeout: float = 20.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.messages)} of {n} messages arrived")
            time.sleep(0.05)
        return self.messages
