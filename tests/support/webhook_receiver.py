"""A real HTTP endpoint for webhook tests: Python's http.server (ThreadingHTTPServer in a
thread) on 127.0.0.1 and a free port. It records every request (method, path, lower-cased
headers, raw body bytes, time) and answers the status codes of a script in turn, the last
one repeating. Signatures are checked by the Standard Webhooks reference library
(`standardwebhooks` from npm, through tests/node/verify_webhook.js), never by Python code:
the point is that users' existing verifiers accept what posthorn sends."""
from __future__ import annotations

import base64
import dataclasses
import http.server
import json
import pathlib
import shutil
import subprocess
import threading
import time

NODE_DIR = pathlib.Path(__file__).resolve().parents[1] / "node"
VERIFY_JS = NODE_DIR / "verify_webhook.js"


@dataclasses.dataclass
class ReceivedRequest:
    method: str
    path: str                 # the request target as sent: path and query string
    headers: dict[str, str]   # names lower-cased
    body: bytes               # raw, exactly as received
    at: float                 # time.time() when it arrived
    status: int               # what the receiver answered

    def json(self):
        return json.loads(self.body)


class WebhookReceiver:
    """`statuses` is the script: the n-th request gets statuses[n], or the last one.

    The port is bound at construction; the receiver only listens from start(). Until then
    (and after stop()) a connection to it is refused, which is how a test makes "the
    endpoint is down" without losing its port to someone else."""

    def __init__(self, statuses=(200,), host: str = "127.0.0.1", path: str = "/hook"):
        self.statuses = list(statuses) or [200]
        self.path = path
        self.requests: list[ReceivedRequest] = []
        self._offset = 0  # requests before the current script
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _read_body(self) -> bytes:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    body = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass  # trailers
                            return body
                        body += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self):
                body = self._read_body()
                status = receiver._record(self.command, self.path,
                                          {k.lower(): v for k, v in self.headers.items()}, body)
                answer = b'{"received":true}' if 200 <= status < 300 else b'{"error":"scripted"}'
                if status in (204, 304):
                    answer = b""  # answers that carry no body
                self.send_response(status)
                if 300 <= status < 400:
                    # A redirect posthorn must not follow: it points at a path of this
                    # receiver, so that following it would show up in `requests`.
                    self.send_header("Location", "/redirected")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format, *args):  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler,
                                                      bind_and_activate=False)
        self.server.daemon_threads = True
        self.server.server_bind()
        self.host, self.port = self.server.server_address[:2]

    # ---- life ----

    def start(self) -> "WebhookReceiver":
        if self._thread is None:
            self.server.server_activate()  # listen()
            self._thread = threading.Thread(target=self.server.serve_forever,
                                            kwargs={"poll_interval": 0.05}, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self.server.server_close()

    # ---- script and records ----

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    def set_statuses(self, statuses) -> None:
        """A new script, counted from the next request."""
        with self._cond:
            self.statuses = list(statuses) or [200]
            self._offset = len(self.requests)

    def _record(self, method, path, headers, body) -> int:
        with self._cond:
            n = len(self.requests) - self._offset
            status = self.statuses[min(n, len(self.statuses) - 1)]
            self.requests.append(ReceivedRequest(method, path, headers, body, time.time(),
                                                 status))
            self._cond.notify_all()
            return status

    def wait_for(self, n: int, timeout: float = 20.0) -> list[ReceivedRequest]:
        """Waits until at least n requests have arrived; answers all of them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.requests)} of {n} webhook calls arrived "
                                         f"at {self.url}")
                self._cond.wait(left)
            return list(self.requests)

    def of_type(self, event_type: str) -> list[ReceivedRequest]:
        with self._cond:
            return [r for r in self.requests if _type_of(r) == event_type]


def _type_of(r: ReceivedRequest):
    try:
        return r.json().get("type")
    except ValueError:
        return None


# ---- verification by the npm library ----

@dataclasses.dataclass
class Verification:
    ok: bool
    payload: object   # the parsed body, when ok
    error: str | None


def node_verifier_missing() -> str | None:
    """Why the npm verifier cannot run, or None when it can."""
    if not shutil.which("node"):
        return "node is not installed (scripts/install-deps.sh installs it)"
    if not (NODE_DIR / "node_modules" / "standardwebhooks").is_dir():
        return ("the npm package standardwebhooks is not in tests/node/node_modules "
                "(scripts/install-deps.sh installs it)")
    return None


def verify(secret: str, request: ReceivedRequest, *, body: bytes | None = None,
           headers: dict[str, str] | None = None) -> Verification:
    """Checks a received call with `standardwebhooks` (Webhook(secret).verify(body, headers)).
    `body` / `headers` replace the received ones, to show that a tampered call fails."""
    missing = node_verifier_missing()
    if missing:
        raise AssertionError(missing)
    raw = request.body if body is None else body
    data = {"secret": secret,
            "headers": request.headers if headers is None else headers,
            "body_base64": base64.b64encode(raw).decode()}
    r = subprocess.run(["node", str(VERIFY_JS)], input=json.dumps(data), capture_output=True,
                       text=True, timeout=60)
    lines = r.stdout.strip().splitlines()
    if not lines:
        raise AssertionError(f"verify_webhook.js printed nothing (exit {r.returncode}): "
                             f"{r.stderr}")
    out = json.loads(lines[-1])
    assert out["ok"] == (r.returncode == 0), (out, r.returncode, r.stderr)
    return Verification(out["ok"], out.get("payload"), out.get("error"))
