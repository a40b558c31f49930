#!/usr/bin/env python3
"""A development stand-in for the dashboard's server side (issue 31), for working on web/
without a posthorn that serves the dashboard itself. NOT for production: sessions live in
this process's memory and it trusts whoever reaches it.

It serves a built bundle (node web/build.mjs OUTDIR) at / and /assets/<name> with the
dashboard's Content-Security-Policy, implements the three /dashboard/session calls of the
contract (POST: sign in with {"key"}, GET: who is signed in, DELETE: sign out; an HttpOnly
SameSite=Strict cookie and a CSRF token checked on every change), and forwards /v1/* to a
posthorn, adding `Authorization: Bearer <the session's key>`.

    npm ci --prefix web && node web/build.mjs build/dashboard
    python3 web/dev/proxy.py --dir build/dashboard --upstream http://127.0.0.1:8080 \
        --listen 127.0.0.1:8000
    # then open http://127.0.0.1:8000/ and sign in with an API key

It prints `listening on http://HOST:PORT` once it accepts connections (tests wait for it).
"""
from __future__ import annotations

import argparse
import http.client
import http.server
import json
import mimetypes
import pathlib
import re
import secrets
import sys
import threading
import time
import urllib.parse

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; frame-src 'self'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
COOKIE = "ph_dev_session"
SESSION_TTL_S = 12 * 3600
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-authenticate", "proxy-authorization", "content-length"}


class Sessions:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_token: dict[str, dict] = {}

    def add(self, key: str, info: dict) -> tuple[str, dict]:
        token = secrets.token_urlsafe(32)
        expires = time.time() + SESSION_TTL_S
        body = dict(info, csrf_token=secrets.token_urlsafe(24),
                    expires_at=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(expires)))
        with self.lock:
            self.by_token[token] = {"key": key, "body": body, "expires": expires}
        return token, body

    def get(self, token: str | None) -> dict | None:
        if not token:
            return None
        with self.lock:
            s = self.by_token.get(token)
            if s and s["expires"] < time.time():
                del self.by_token[token]
                s = None
        return s

    def drop(self, token: str) -> None:
        with self.lock:
            self.by_token.pop(token, None)


def make_handler(root: pathlib.Path, upstream: urllib.parse.SplitResult, sessions: Sessions):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "posthorn-dev-proxy"

        def log_message(self, fmt, *args):  # quiet unless asked
            if self.server.verbose:
                super().log_message(fmt, *args)

        # ---- helpers ----

        def send(self, status: int, body: bytes, ctype: str, headers: dict | None = None):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def json_error(self, status: int, code: str, message: str, headers=None):
            body = json.dumps({"code": code, "message": message, "status": status}).encode()
            self.send(status, body, "application/json", headers)

        def body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def cookie(self) -> str | None:
            for part in (self.headers.get("Cookie") or "").split(";"):
                name, _, value = part.strip().partition("=")
                if name == COOKIE:
                    return value
            return None

        def upstream(self, method: str, path: str, key: str, body: bytes = b"",
                     headers: dict | None = None):
            c = http.client.HTTPConnection(upstream.hostname, upstream.port or 80, timeout=30)
            h = {"Authorization": f"Bearer {key}"}
            h.update(headers or {})
            try:
                c.request(method, path, body=body or None, headers=h)
                r = c.getresponse()
                return r.status, r.getheaders(), r.read()
            finally:
                c.close()

        # ---- static files ----

        def static(self):
            path = urllib.parse.urlsplit(self.path).path
            if path in ("/", "/index.html"):
                f = root / "index.html"
            elif re.fullmatch(r"/assets/[A-Za-z0-9._-]+", path) and ".." not in path:
                f = root / "assets" / path[len("/assets/"):]
            else:
                return self.json_error(404, "NOT_FOUND", "not found")
            if not f.is_file():
                return self.json_error(404, "NOT_FOUND", "not found")
            ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype.endswith("javascript"):
                ctype += "; charset=utf-8"
            cache = "no-cache" if f.name == "index.html" else "public, max-age=31536000, immutable"
            self.send(200, f.read_bytes(), ctype, {
                "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer", "Cache-Control": cache})

        # ---- /dashboard/session ----

        def session_call(self):
            token = self.cookie()
            s = sessions.get(token)
            if self.command == "GET":
                if not s:  # no session is an answer, as the server gives it
                    return self.send(200, json.dumps({"signed_in": False}).encode(),
                                     "application/json", {"Cache-Control": "no-store"})
                return self.send(200, json.dumps(s["body"]).encode(), "application/json",
                                 {"Cache-Control": "no-store"})
            if self.command == "DELETE":
                if not s:
                    return self.json_error(401, "UNAUTHORIZED", "not signed in")
                if self.headers.get("X-CSRF-Token") != s["body"]["csrf_token"]:
                    return self.json_error(403, "FORBIDDEN", "missing or wrong X-CSRF-Token")
                sessions.drop(token)
                return self.send(204, b"", "application/json", {
                    "Set-Cookie": f"{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"})
            if self.command != "POST":
                return self.json_error(405, "METHOD_NOT_ALLOWED", "method not allowed",
                                       {"Allow": "GET, POST, DELETE"})
            try:
                key = json.loads(self.body() or b"{}")["key"]
                assert isinstance(key, str) and key
            except Exception:
                return self.json_error(400, "VALIDATION_ERROR",
                                       'the body must be {"key": "ph_…"}')
            # Who is this key? GET /v1/api-keys answers a full key's list (its own entry by
            # prefix); a sending key is 403 there, which still proves it valid.
            status, _, raw = self.upstream("GET", "/v1/api-keys?limit=100", key)
            if status == 401:
                msg = "unknown or revoked API key"
                try:
                    msg = json.loads(raw)["message"]
                except Exception:
                    pass
                return self.json_error(401, "UNAUTHORIZED", msg)
            info = {"signed_in": True, "account_id": None,
                    "key": {"id": None, "name": "", "permission": "sending", "domain": None}}
            if status == 200:
                for k in json.loads(raw)["data"]:
                    if key.startswith(k["prefix"]) and not k["revoked_at"]:
                        info["key"] = {"id": k["id"], "name": k["name"],
                                       "permission": k["permission"], "domain": k["domain"]}
                        break
            elif status != 403:
                return self.json_error(502, "BAD_GATEWAY", f"posthorn answered {status}")
            token, body = sessions.add(key, info)
            self.send(200, json.dumps(body).encode(), "application/json", {
                "Set-Cookie": f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict",
                "Cache-Control": "no-store"})

        # ---- /v1 ----

        def forward(self):
            s = sessions.get(self.cookie())
            body = self.body()
            if not s:
                return self.json_error(401, "UNAUTHORIZED", "not signed in (no dashboard session)")
            if self.command not in ("GET", "HEAD") and \
                    self.headers.get("X-CSRF-Token") != s["body"]["csrf_token"]:
                return self.json_error(403, "FORBIDDEN", "missing or wrong X-CSRF-Token")
            h = {k: v for k, v in self.headers.items()
                 if k.lower() in ("content-type", "accept", "user-agent", "idempotency-key")}
            status, headers, raw = self.upstream(self.command, self.path, s["key"], body, h)
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(raw)

        def route(self):
            path = urllib.parse.urlsplit(self.path).path
            try:
                if path == "/dashboard/session":
                    return self.session_call()
                if path.startswith("/v1/"):
                    return self.forward()
                if self.command in ("GET", "HEAD"):
                    return self.static()
                return self.json_error(404, "NOT_FOUND", "not found")
            except (ConnectionError, OSError) as e:
                return self.json_error(502, "BAD_GATEWAY", f"posthorn could not be reached: {e}")

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = route

    return Handler


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="the built bundle (node web/build.mjs DIR)")
    ap.add_argument("--upstream", required=True, help="posthorn's base URL, http://HOST:PORT")
    ap.add_argument("--listen", default="127.0.0.1:8000", help="HOST:PORT (port 0: any free one)")
    ap.add_argument("-v", "--verbose", action="store_true", help="log every request")
    a = ap.parse_args(argv)
    root = pathlib.Path(a.dir).resolve()
    if not (root / "index.html").is_file():
        print(f"{root}/index.html is missing: run node web/build.mjs {a.dir}", file=sys.stderr)
        return 2
    host, _, port = a.listen.rpartition(":")
    handler = make_handler(root, urllib.parse.urlsplit(a.upstream), Sessions())
    srv = http.server.ThreadingHTTPServer((host or "127.0.0.1", int(port)), handler)
    srv.daemon_threads = True
    srv.verbose = a.verbose
    print(f"listening on http://{srv.server_address[0]}:{srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
