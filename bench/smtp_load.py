#!/usr/bin/env python3
"""SMTP submission load for bench/smtp_accept.sh: what smtp-source does, with STARTTLS and AUTH.

Postfix's smtp-source speaks neither STARTTLS nor AUTH, which posthorn's submission listener
requires. This client keeps SESSIONS sessions open at once (a thread each, on blocking
sockets); each one connects, says EHLO, STARTTLS (optional), EHLO again, AUTH PLAIN once
(optional), and then runs MAIL FROM / RCPT TO / DATA transactions one after the other
until MESSAGES messages in all have been answered; then QUIT. Like smtp-source, it waits for each reply before the next command
(--pipelining sends MAIL, RCPT and DATA in one write, as RFC 2920 allows).

Every message is the same apart from its Message-ID (unique: posthorn uses the Message-ID
as an idempotency key): a From, To, Subject, Date and Message-ID header, a blank line and
SIZE bytes of body in lines of at most 80 octets (CRLF included), as smtp-source's -l SIZE.
--procs N splits the sessions and messages over N processes (the GIL of one process could
otherwise be the limit).

It prints one JSON object on stdout:
  ok           messages answered 250 after their data
  failed       messages refused at any step (their replies are counted in "refusals")
  elapsed_s    from the first connect to the last answer
  cpu_user_s, cpu_sys_s   this client's own CPU time (all its processes)
  latency_ms   p50 / p99 of a transaction (MAIL to the answer after the data)
  sessions, session_errors, first_errors
Exit status 0 when every message was answered 250, 1 otherwise, 2 bad usage.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import socket
import ssl
import sys
import threading
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--messages", type=int, required=True, help="messages in all")
    p.add_argument("--sessions", type=int, default=20)
    p.add_argument("--size", type=int, default=1024, help="bytes of body (headers not counted)")
    p.add_argument("--mail-from", required=True, help="the envelope sender")
    p.add_argument("--rcpt-to", required=True, help="the envelope recipient")
    p.add_argument("--header-from", help="the From header (default: the envelope sender)")
    p.add_argument("--ehlo", default="client.posthorn.test")
    p.add_argument("--starttls", action="store_true")
    p.add_argument("--user", help="AUTH PLAIN with this user name (needs --password)")
    p.add_argument("--password")
    p.add_argument("--pipelining", action="store_true", help="MAIL, RCPT and DATA in one write")
    p.add_argument("--procs", type=int, default=1, help="processes sharing the sessions")
    p.add_argument("--timeout", type=float, default=120, help="seconds for any one reply")
    p.add_argument("--tag", default=str(os.getpid()), help="part of every Message-ID")
    a = p.parse_args(argv)
    if a.messages < 1 or a.sessions < 1 or a.size < 0 or a.procs < 1:
        p.error("--messages, --sessions and --procs must be positive, --size not negative")
    if (a.user is None) != (a.password is None):
        p.error("--user and --password go together")
    return a


def body_of(size: int) -> bytes:
    """SIZE bytes of body in lines of at most 80 octets, CRLF included, ending in CRLF."""
    if size == 0:
        return b""
    left, n, out = max(size, 2), 0, []
    while left > 0:
        width = min(80, left)
        if left - width == 1:  # never leave one octet alone: it could not end in CRLF
            width -= 1
        text = (f"{n:06d} " + "posthorn smtp acceptance benchmark " * 3)[:width - 2]
        out.append(text.encode() + b"\r\n")
        left -= width
        n += 1
    return b"".join(out)


class Failure(Exception):
    pass


def reply(f):
    """One reply (all its lines) from the buffered reader F: (code, text)."""
    lines = []
    while True:
        line = f.readline(4096)
        if not line:
            raise ConnectionError("connection closed by the server")
        lines.append(line)
        if len(line) < 4 or line[3:4] != b"-":
            break
    try:
        code = int(lines[-1][:3])
    except ValueError:
        raise ConnectionError(f"bad reply {lines[-1][:100]!r}")
    return code, b"".join(lines).decode("utf-8", "replace").strip()


class Load:
    """The sessions of one process: a thread each, on blocking sockets (measured on these
    machines: about half the CPU per message of the same client on asyncio, whose TLS goes
    through memory BIOs and a protocol object)."""

    def __init__(self, a, messages, proc_index):
        self.a = a
        self.left = messages
        self.lock = threading.Lock()
        self.ok = 0
        self.failed = 0
        self.refusals: dict[str, int] = {}
        self.errors: list[str] = []
        self.session_errors = 0
        self.latencies: list[float] = []
        self.proc = proc_index
        sender = a.header_from or f"<{a.mail_from}>"
        self.head = (f"From: {sender}\r\nTo: <{a.rcpt_to}>\r\n"
                     f"Subject: posthorn SMTP acceptance benchmark, {a.size} bytes\r\n"
                     f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S +0000', time.gmtime())}\r\n")
        self.body = body_of(a.size) + b".\r\n"
        self.mail = f"MAIL FROM:<{a.mail_from}>\r\n".encode()
        self.rcpt = f"RCPT TO:<{a.rcpt_to}>\r\n".encode()
        self.ctx = None
        if a.starttls:
            self.ctx = ssl.create_default_context()
            self.ctx.check_hostname = False
            self.ctx.verify_mode = ssl.CERT_NONE  # both servers have self-signed certificates
        self.auth = None
        if a.user is not None:
            token = base64.b64encode(f"\0{a.user}\0{a.password}".encode()).decode()
            self.auth = f"AUTH PLAIN {token}\r\n".encode()

    def note(self, what):
        with self.lock:
            if len(self.errors) < 5 and what not in self.errors:
                self.errors.append(what)

    def refused(self, step, code, text):
        with self.lock:
            self.failed += 1
            key = f"{step} {code}"
            self.refusals[key] = self.refusals.get(key, 0) + 1
        self.note(f"{step}: {text[:200]}")

    def take(self):
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    @staticmethod
    def expect(f, want, step):
        code, text = reply(f)
        if code != want:
            raise Failure(f"{step}: {text[:200]}")
        return text

    def session(self, index):
        a = self.a
        sock = None
        seq = 0
        latencies = []
        try:
            sock = socket.create_connection((a.host, a.port), timeout=a.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            f = sock.makefile("rb")
            self.expect(f, 220, "greeting")
            sock.sendall(f"EHLO {a.ehlo}\r\n".encode())
            ehlo = self.expect(f, 250, "EHLO")
            if self.ctx is not None:
                if "STARTTLS" not in ehlo.upper():
                    raise Failure("the server does not offer STARTTLS")
                sock.sendall(b"STARTTLS\r\n")
                self.expect(f, 220, "STARTTLS")
                sock = self.ctx.wrap_socket(sock)
                f = sock.makefile("rb")
                sock.sendall(f"EHLO {a.ehlo}\r\n".encode())
                ehlo = self.expect(f, 250, "EHLO after STARTTLS")
            if a.pipelining and "PIPELINING" not in ehlo.upper():
                raise Failure("the server does not offer PIPELINING")
            if self.auth is not None:
                sock.sendall(self.auth)
                self.expect(f, 235, "AUTH PLAIN")
            while self.take():
                seq += 1
                message = (self.head + f"Message-ID: <{a.tag}.{self.proc}.{index}.{seq}@client.posthorn.test>\r\n\r\n"
                           ).encode() + self.body
                t0 = time.monotonic()
                bad = None
                if a.pipelining:
                    sock.sendall(self.mail + self.rcpt + b"DATA\r\n")
                    steps = [(250, "MAIL"), (250, "RCPT"), (354, "DATA")]
                    answers = [reply(f) for _ in steps]
                    bad = next(((s, c, t) for (w, s), (c, t) in zip(steps, answers) if c != w), None)
                    if bad is not None and answers[2][0] == 354:  # DATA went through after all
                        sock.sendall(b".\r\n")
                        reply(f)
                else:
                    for cmd, want, step in ((self.mail, 250, "MAIL"), (self.rcpt, 250, "RCPT"),
                                            (b"DATA\r\n", 354, "DATA")):
                        sock.sendall(cmd)
                        code, text = reply(f)
                        if code != want:
                            bad = (step, code, text)
                            break
                if bad is not None:
                    self.refused(*bad)
                    sock.sendall(b"RSET\r\n")
                    reply(f)
                    continue
                sock.sendall(message)
                code, text = reply(f)
                if code == 250:
                    latencies.append(time.monotonic() - t0)
                else:
                    self.refused("end of data", code, text)
            sock.sendall(b"QUIT\r\n")
            reply(f)
        except (Failure, OSError, ConnectionError) as e:  # ssl.SSLError and timeouts are OSErrors
            with self.lock:
                self.session_errors += 1
            self.note(f"session {index}: {type(e).__name__}: {e}")
        finally:
            with self.lock:
                self.ok += len(latencies)
                self.latencies.extend(latencies)
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass

    def run(self, sessions):
        threads = [threading.Thread(target=self.session, args=(i,)) for i in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def result(self):
        return {"ok": self.ok, "failed": self.failed, "refusals": self.refusals,
                "session_errors": self.session_errors, "first_errors": self.errors,
                "latencies": self.latencies}


def run_proc(a, messages, sessions, index):
    load = Load(a, messages, index)
    load.run(min(sessions, messages))
    return load.result()


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


def main(argv):
    a = parse_args(argv)
    procs = min(a.procs, a.sessions, a.messages)
    t0 = time.monotonic()
    if procs == 1:
        results = [run_proc(a, a.messages, a.sessions, 0)]
    else:
        # Each process gets its share of the sessions and of the messages; results come back
        # through a pipe as JSON.
        children = []
        for i in range(procs):
            share_m = a.messages // procs + (1 if i < a.messages % procs else 0)
            share_s = a.sessions // procs + (1 if i < a.sessions % procs else 0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    out = json.dumps(run_proc(a, share_m, share_s, i)).encode()
                    with os.fdopen(w, "wb") as f:
                        f.write(out)
                finally:
                    os._exit(0)
            os.close(w)
            children.append((pid, r))
        results = []
        for pid, r in children:
            with os.fdopen(r, "rb") as f:
                data = f.read()
            os.waitpid(pid, 0)
            results.append(json.loads(data) if data else {"ok": 0, "failed": 0, "refusals": {},
                                                        "session_errors": 1,
                                                        "first_errors": ["a client process died"],
                                                        "latencies": []})
    elapsed = time.monotonic() - t0
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    lat = sorted(x for r in results for x in r["latencies"])
    refusals: dict[str, int] = {}
    for r in results:
        for k, v in r["refusals"].items():
            refusals[k] = refusals.get(k, 0) + v
    out = {
        "ok": sum(r["ok"] for r in results),
        "failed": sum(r["failed"] for r in results),
        "messages": a.messages,
        "sessions": a.sessions,
        "procs": procs,
        "elapsed_s": round(elapsed, 4),
        "cpu_user_s": round(me.ru_utime + kids.ru_utime, 4),
        "cpu_sys_s": round(me.ru_stime + kids.ru_stime, 4),
        "latency_ms": {"p50": round(1000 * percentile(lat, 50), 3) if lat else None,
                       "p99": round(1000 * percentile(lat, 99), 3) if lat else None},
        "refusals": refusals,
        "session_errors": sum(r["session_errors"] for r in results),
        "first_errors": [e for r in results for e in r["first_errors"]][:5],
    }
    print(json.dumps(out))
    return 0 if out["ok"] == a.messages else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
