"""Runs the built posthorn binary for black-box tests: a temporary data dir, free loopback
ports, configuration through POSTHORN_* environment overrides, the CLI for accounts and
keys, and a small HTTP client over real sockets. Every later feature reuses it."""
from __future__ import annotations

import http.client
import json
import os
import pathlib
import signal
import subprocess
import time

from support import store
from support.ports import reserve_port

BIN = os.environ.get("POSTHORN_BIN") or str(
    pathlib.Path(__file__).resolve().parents[2] / "build" / "posthorn")


def free_port() -> int:
    return reserve_port()


class Response:
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<Response {self.status} {self.body[:200]!r}>"


def api_error(r: Response, status: int = 400, code: str = "VALIDATION_ERROR") -> str:
    """Asserts that r is the JSON error of DESIGN §4 with that status and code; answers its
    message."""
    assert r.status == status, r
    e = r.json()
    assert e["code"] == code and e["status"] == status, e
    return e["message"]


class Posthorn:
    """One posthorn instance. `env` adds or overrides POSTHORN_* variables."""

    def __init__(self, data_dir: pathlib.Path, env: dict[str, str] | None = None,
                 config: pathlib.Path | None = None):
        self.data_dir = pathlib.Path(data_dir)
        self.http_port = free_port()
        self.submission_port = free_port()
        self.inbound_port = free_port()
        self.config = config
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("POSTHORN_")}
        self.env.update({
            "POSTHORN_SERVER_DATA_DIR": str(self.data_dir),
            "POSTHORN_HTTP_LISTEN": f"127.0.0.1:{self.http_port}",
            "POSTHORN_SMTP_SUBMISSION_LISTEN": f"127.0.0.1:{self.submission_port}",
            "POSTHORN_SMTP_INBOUND_LISTEN": f"127.0.0.1:{self.inbound_port}",
        })
        self.env.update(env or {})
        # The store: SQLite in the data dir, unless the test names one, or the suite runs on
        # PostgreSQL (POSTHORN_TEST_STORE=pg: a database of its own on the test server).
        if "POSTHORN_DATABASE_URL" not in self.env and store.on_pg():
            self.env["POSTHORN_DATABASE_URL"] = store.fresh_pg_database()
        self.database_url = self.env.get("POSTHORN_DATABASE_URL") or \
            f"sqlite://{self.data_dir / 'posthorn.db'}"
        self.proc: subprocess.Popen | None = None
        self.log_path = self.data_dir.parent / f"posthorn-{self.http_port}.log"

    # ---- process ----

    def args(self, *rest: str) -> list[str]:
        a = [BIN]
        if self.config:
            a += ["--config", str(self.config)]
        return a + list(rest)

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(self.args(*args), env=self.env, capture_output=True, text=True,
                           timeout=60)
        if check and r.returncode != 0:
            raise AssertionError(f"posthorn {' '.join(args)} exited {r.returncode}: {r.stderr}")
        return r

    def start(self, wait: bool = True) -> "Posthorn":
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args("serve"), env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"posthorn exited {self.proc.returncode}:\n{self.output()}")
            try:
                if self.request("GET", "/healthz").status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"posthorn did not become ready:\n{self.output()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 40.0) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            raise AssertionError(f"posthorn did not stop within {timeout}s:\n{self.output()}")
        finally:
            self.log.close()
        self.proc = None
        return rc

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    @property
    def db_path(self) -> pathlib.Path:
        return self.data_dir / "posthorn.db"

    def db(self):
        """A connection to this instance's store (support/store.py: SQLite or PostgreSQL)."""
        return store.connect(self)

    def stored_message(self, email_id: str) -> bytes:
        """The raw message stored for an email (read from the database, as delivery does)."""
        db = self.db()
        try:
            sql = ("SELECT raw FROM emails WHERE id = ?"
                   if not self.database_url.startswith("sqlite://") else
                   "SELECT b.raw FROM emails e JOIN email_bodies b ON b.id = e.body_id "
                   "WHERE e.id = ?")
            (raw,) = db.execute(sql, (email_id,)).fetchone()
        finally:
            db.close()
        return raw

    # ---- accounts and keys ----

    def create_account(self, name: str) -> str:
        return self.cli("account", "create", name).stdout.strip()

    def create_key(self, account: str) -> tuple[str, str]:
        """Answers (key id, key)."""
        out = self.cli("key", "create", "--account", account).stdout.strip().splitlines()
        key = out[-1].strip()
        key_id = out[0].split()[2]
        return key_id, key

    def account_with_key(self, name: str) -> str:
        self.create_account(name)
        return self.create_key(name)[1]

    # ---- HTTP ----

    def connection(self, timeout: float = 10.0) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)

    def request(self, method: str, path: str, key: str | None = None, body=None,
                headers: dict[str, str] | None = None,
                conn: http.client.HTTPConnection | None = None) -> Response:
        h = dict(headers or {})
        if key is not None:
            h.setdefault("Authorization", f"Bearer {key}")
        data = None
        if body is not None:
            if isinstance(body, (bytes, str)):
                data = body.encode() if isinstance(body, str) else body
            else:
                data = json.dumps(body).encode()
                h.setdefault("Content-Type", "application/json")
        own = conn is None
        c = conn or self.connection()
        try:
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        finally:
            if own:
                c.close()

    def get(self, path: str, key: str | None = None, **kw) -> Response:
        return self.request("GET", path, key=key, **kw)


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"):
    """Polls until predicate() is truthy; answers its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)
