"""An MTA-STS policy server for tests (RFC 8461 §3.3): Python's http.server over TLS on a
loopback port, answering GET /.well-known/mta-sts.txt with the policy set for the Host
header's domain (mta-sts.<domain>), as text/plain. Counts the fetches per domain."""
from __future__ import annotations

import http.server
import ssl
import threading

from support.ports import reserve_port


class MtaStsServer:
    def __init__(self, ctx: ssl.SSLContext, host: str = "127.0.0.1"):
        self.host, self.port = host, reserve_port()
        self.policies: dict[str, str] = {}  # domain → policy text
        self.fetches: dict[str, int] = {}
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                domain = host.removeprefix("mta-sts.")
                owner.fetches[domain] = owner.fetches.get(domain, 0) + 1
                policy = owner.policies.get(domain)
                if self.path != "/.well-known/mta-sts.txt" or policy is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = policy.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer((host, self.port), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def policy(self, domain: str, mode: str, mx: list[str], max_age: int = 86400) -> None:
        lines = ["version: STSv1", f"mode: {mode}"] + [f"mx: {m}" for m in mx] + \
            [f"max_age: {max_age}"]
        self.policies[domain] = "\r\n".join(lines) + "\r\n"

    def start(self) -> "MtaStsServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
