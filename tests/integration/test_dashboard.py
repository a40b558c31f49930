"""The web dashboard's server side (issue 31, docs/dashboard.md): the page at `/` and its
assets compiled into the binary, with the strict CSP and the other headers, cached by ETag;
sessions (`/dashboard/session`) with an HttpOnly, SameSite=Strict cookie, a CSRF token on
every change, sign-out, expiry, a revoked key; the /v1 API acting with a session's key and
refusing a change without the token; another account's email (404); `dashboard.enabled`.
The sign-in is driven in a real headless Chromium (browser.py), whose console must show no
error (CSP violations appear there), with screenshots at 1280 and 375 px."""
import hashlib
import http.client
import re

from browser import By, EC, browser, console_errors, screenshot, server_url, wait  # noqa: F401
from support.dnsmasq import Dnsmasq
from support.domains import dns_env, publish, verified_domain
from support.posthorn import wait_for

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; frame-src 'self'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
COOKIE = "posthorn_session"
# A refused sign-in (POST /dashboard/session, 401), which the browser logs as a failed load.
SIGN_IN_401 = "/dashboard/session - Failed to load resource: the server responded with a " \
              "status of 401"
BAD_KEY = "ph_" + "0" * 32


def assert_dashboard_headers(r):
    assert r.headers.get("content-security-policy") == CSP, r.headers
    assert r.headers.get("x-content-type-options") == "nosniff", r.headers
    assert r.headers.get("referrer-policy") == "no-referrer", r.headers
    assert r.headers.get("x-frame-options") == "DENY", r.headers


def error_of(r, status, code):
    assert r.status == status, r
    body = r.json()
    assert body["code"] == code and body["status"] == status and body["message"], body
    return body


def sign_in(ph, key):
    """POST /dashboard/session: (the answer, the session cookie's value, the raw Set-Cookie)."""
    r = ph.request("POST", "/dashboard/session", body={"key": key})
    assert r.status == 200, r
    raw = r.headers["set-cookie"]
    m = re.match(COOKIE + r"=([^;]+);", raw)
    assert m, raw
    return r.json(), m.group(1), raw


def with_cookie(value, token=None):
    h = {"Cookie": f"{COOKIE}={value}"}
    if token is not None:
        h["X-CSRF-Token"] = token
    return h


def asset_paths(html: str) -> list[str]:
    return sorted(set(re.findall(r'(?:src|href)="(/assets/[^"]+)"', html)))


# ---- serving ----

def test_the_page_and_its_assets_are_served_with_the_csp_and_cached_by_etag(server):
    r = server.get("/")
    assert r.status == 200, r
    assert r.headers["content-type"].startswith("text/html"), r.headers
    assert_dashboard_headers(r)
    assert r.headers["cache-control"] == "no-cache"
    html = r.body.decode()
    assert "<script>" not in html and " onload=" not in html, "no inline script"
    assets = asset_paths(html)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets), \
        assets
    etag = r.headers["etag"]
    again = server.get("/", headers={"If-None-Match": etag})
    assert again.status == 304 and again.body == b"", again
    assert again.headers["etag"] == etag
    assert_dashboard_headers(again)

    for path in assets:
        a = server.get(path)
        assert a.status == 200, (path, a)
        assert_dashboard_headers(a)
        ct = a.headers["content-type"]
        assert ct.startswith("text/javascript" if path.endswith(".js") else
                             "text/css" if path.endswith(".css") else ""), (path, ct)
        assert a.body and int(a.headers["content-length"]) == len(a.body)
        cache = a.headers["cache-control"]
        assert cache in ("no-cache", "public, max-age=31536000, immutable"), cache
        tag = a.headers["etag"]
        assert re.fullmatch(r'"[0-9a-f]{32}"', tag), tag
        cached = server.get(path, headers={"If-None-Match": f'"nope", {tag}'})
        assert cached.status == 304 and cached.body == b"", cached
        stale = server.get(path, headers={"If-None-Match": '"nope"'})
        assert stale.status == 200 and stale.body == a.body
        head = server.request("HEAD", path)
        assert head.status == 200 and head.body == b"", head
        assert head.headers["content-length"] == str(len(a.body))
        assert head.headers["etag"] == tag

    missing = server.get("/assets/nope.js")
    error_of(missing, 404, "NOT_FOUND")
    assert_dashboard_headers(missing)
    error_of(server.get("/assets/"), 404, "NOT_FOUND")
    error_of(server.get("/index.html"), 404, "NOT_FOUND")
    error_of(server.get("/assets/../index.html"), 404, "NOT_FOUND")
    post = server.request("POST", "/", body={"x": 1})
    error_of(post, 405, "METHOD_NOT_ALLOWED")
    assert post.headers["allow"] == "GET, HEAD"
    # The API's answers do not get the dashboard's framing rules (the email preview is framed).
    v1 = server.get("/v1/logs")
    assert v1.status == 401 and "x-frame-options" not in v1.headers, v1.headers


def test_a_disabled_dashboard_is_not_found(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_DASHBOARD_ENABLED": "false"}).start()
    key = ph.account_with_key("acme")
    for path in ("/", "/assets/app.js", "/dashboard/session"):
        error_of(ph.get(path), 404, "NOT_FOUND")
    error_of(ph.request("POST", "/dashboard/session", body={"key": key}), 404, "NOT_FOUND")
    assert ph.get("/v1/logs", key=key).status == 200, "the API is not the dashboard"
    error_of(ph.get("/v1/logs", headers=with_cookie("x" * 64)), 401, "UNAUTHORIZED")


def test_the_dashboard_is_not_served_on_a_tracking_host(posthorn_factory, dns):
    """A verified custom tracking host is an account's domain: no sign-in page there."""
    sender, target = "mail.example.com", "track.posthorn.test"
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SERVER_PUBLIC_URL": "http://127.0.0.1:1",
                               "POSTHORN_TRACKING_CNAME_TARGET": target}).start()
    key = ph.account_with_key("acme")
    r = ph.request("POST", "/v1/domains", key=key, body={"domain": sender})
    assert r.status == 201, r
    domain = r.json()
    publish(dns, ph, domain, restart=False)
    dns.cname(f"links.{sender}", target)
    dns.host(target, "127.0.0.12")
    dns.restart()
    v = ph.request("POST", f"/v1/domains/{domain['id']}/verify", key=key).json()
    assert v["records"]["tracking"]["status"] == "VERIFIED", v
    host = {"Host": f"links.{sender}"}
    for path in ("/", "/assets/app.js"):
        error_of(ph.get(path, headers=host), 404, "NOT_FOUND")
    error_of(ph.request("POST", "/dashboard/session", body={"key": key}, headers=host), 404,
             "NOT_FOUND")
    assert ph.get("/").status == 200, "on public_url's host it is"
    assert ph.get("/", headers={"Host": "links.other.example.com"}).status == 200, \
        "nor on a host that is no verified tracking host"


# ---- sessions ----

def test_sign_in_sets_a_strict_http_only_cookie_and_keeps_only_its_hash(server):
    key = server.account_with_key("acme")
    body, cookie, raw = sign_in(server, key)
    parts = [p.strip() for p in raw.split(";")]
    assert "HttpOnly" in parts and "SameSite=Strict" in parts and "Path=/" in parts, raw
    assert "Max-Age=43200" in parts, raw
    assert "Secure" not in parts, "plain http public_url: no Secure"
    assert re.fullmatch(r"[0-9a-f]{64}", cookie), "256 random bits"
    assert body["account_id"].startswith("acc_"), body
    assert body["key"]["id"].startswith("key_") and body["key"]["permission"] == "full", body
    assert body["key"]["domain"] is None and "name" in body["key"], body
    assert re.fullmatch(r"[0-9a-f]{64}", body["csrf_token"]), body
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", body["expires_at"]), body

    # The store has the id's SHA-256, never the id.
    db = server.db()
    try:
        rows = db.execute("SELECT id_hash, key_id, csrf_token FROM dashboard_sessions").fetchall()
    finally:
        db.close()
    assert [tuple(r) for r in rows] == [
        (hashlib.sha256(cookie.encode()).hexdigest(), body["key"]["id"], body["csrf_token"])]

    # A reloaded page gets its session (and CSRF token) back.
    again = server.get("/dashboard/session", headers=with_cookie(cookie))
    assert again.status == 200 and again.json() == body, again
    assert_dashboard_headers(again)
    # No session is an answer, not an error (the sign-in page asks on every load): 200
    # {"signed_in": false}, and a cookie that names none is cleared.
    none = server.get("/dashboard/session")
    assert none.status == 200 and none.json() == {"signed_in": False}, none
    assert_dashboard_headers(none)
    raw = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    raw.request("GET", "/dashboard/session")
    csp = [v for k, v in raw.getresponse().getheaders() if k.lower() == "content-security-policy"]
    raw.close()
    assert csp == [CSP], "the dashboard's headers once"
    unknown = server.get("/dashboard/session", headers=with_cookie("0" * 64))
    assert unknown.status == 200 and unknown.json() == {"signed_in": False}, unknown
    assert "Max-Age=0" in unknown.headers["set-cookie"], unknown.headers
    error_of(server.request("PUT", "/dashboard/session", headers=with_cookie(cookie)), 405,
             "METHOD_NOT_ALLOWED")

    # Sign-out needs the CSRF token, and then the cookie is cleared and the session gone.
    error_of(server.request("DELETE", "/dashboard/session", headers=with_cookie(cookie)), 403,
             "CSRF_TOKEN_INVALID")
    error_of(server.request("DELETE", "/dashboard/session", headers=with_cookie(cookie, "x")),
             403, "CSRF_TOKEN_INVALID")
    assert server.get("/dashboard/session", headers=with_cookie(cookie)).status == 200
    out = server.request("DELETE", "/dashboard/session",
                         headers=with_cookie(cookie, body["csrf_token"]))
    assert out.status == 204, out
    assert "Max-Age=0" in out.headers["set-cookie"], out.headers
    ended = server.get("/dashboard/session", headers=with_cookie(cookie))
    assert ended.status == 200 and ended.json() == {"signed_in": False}, ended
    error_of(server.request("DELETE", "/dashboard/session",
                            headers=with_cookie(cookie, body["csrf_token"])), 401, "UNAUTHORIZED")
    v1 = server.get("/v1/logs", headers=with_cookie(cookie))
    error_of(v1, 401, "UNAUTHORIZED")
    # /v1's refusal is the API's: none of the dashboard page's headers.
    assert "content-security-policy" not in v1.headers, v1.headers


def test_bad_sign_ins_set_no_cookie(server):
    key = server.account_with_key("acme")
    for bad in (BAD_KEY, "not a key", key[:-1] + ("0" if key[-1] != "0" else "1")):
        r = server.request("POST", "/dashboard/session", body={"key": bad})
        error_of(r, 401, "UNAUTHORIZED")
        assert "set-cookie" not in r.headers, r.headers
        assert_dashboard_headers(r)
    error_of(server.request("POST", "/dashboard/session", body={"nokey": key}), 422,
             "VALIDATION_ERROR")
    error_of(server.request("POST", "/dashboard/session", body={"key": 7}), 422,
             "VALIDATION_ERROR")
    error_of(server.request("POST", "/dashboard/session", body="{nope"), 400, "INVALID_JSON")
    error_of(server.request("POST", "/dashboard/session", body=f"key={key}",
                            headers={"Content-Type": "application/x-www-form-urlencoded"}),
             400, "INVALID_JSON")
    big = server.request("POST", "/dashboard/session", body={"key": key, "pad": "x" * 5000})
    assert big.status == 413, big
    db = server.db()
    try:
        assert db.execute("SELECT count(*) FROM dashboard_sessions").fetchone()[0] == 0
    finally:
        db.close()


def test_the_cookie_is_secure_under_an_https_public_url(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_SERVER_PUBLIC_URL": "https://mail.example.net"}).start()
    _, _, raw = sign_in(ph, ph.account_with_key("acme"))
    assert "Secure" in [p.strip() for p in raw.split(";")], raw
    never = posthorn_factory(env={"POSTHORN_SERVER_PUBLIC_URL": "https://mail.example.net",
                                  "POSTHORN_DASHBOARD_SECURE_COOKIE": "never"}).start()
    _, _, raw = sign_in(never, never.account_with_key("acme"))
    assert "Secure" not in [p.strip() for p in raw.split(";")], raw


def test_an_expired_session_is_refused(server):
    key = server.account_with_key("acme")
    _, cookie, _ = sign_in(server, key)
    assert server.get("/v1/logs", headers=with_cookie(cookie)).status == 200
    db = server.db()
    try:  # its time has come (the store keeps it until the purge job; the API refuses it)
        db.execute("UPDATE dashboard_sessions SET expires_at = 1")
        db.commit()
    finally:
        db.close()
    error_of(server.get("/v1/logs", headers=with_cookie(cookie)), 401, "UNAUTHORIZED")
    r = server.get("/dashboard/session", headers=with_cookie(cookie))
    assert r.status == 200 and r.json() == {"signed_in": False}, r
    assert "Max-Age=0" in r.headers.get("set-cookie", ""), r.headers


def test_a_revoked_keys_session_is_refused_at_once(server):
    admin = server.account_with_key("acme")
    made = server.request("POST", "/v1/api-keys", key=admin,
                          body={"name": "dash", "permission": "sending"})
    assert made.status == 201, made
    other = made.json()
    body, cookie, _ = sign_in(server, other["key"])
    assert body["key"]["id"] == other["id"] and body["key"]["name"] == "dash"
    assert body["key"]["permission"] == "sending", body
    # The session has the key's permissions: a sending key manages no domains.
    error_of(server.get("/v1/domains", headers=with_cookie(cookie)), 403, "FORBIDDEN")
    error_of(server.get(f"/v1/emails/em_{'0' * 26}", headers=with_cookie(cookie)), 404,
             "NOT_FOUND")
    assert server.request("DELETE", f"/v1/api-keys/{other['id']}", key=admin).status == 200
    error_of(server.get(f"/v1/emails/em_{'0' * 26}", headers=with_cookie(cookie)), 401,
             "UNAUTHORIZED")
    gone = server.get("/dashboard/session", headers=with_cookie(cookie))
    assert gone.status == 200 and gone.json() == {"signed_in": False}, gone
    error_of(server.request("POST", "/dashboard/session", body={"key": other["key"]}), 401,
             "UNAUTHORIZED")


# ---- the API with a session ----

def test_a_change_through_a_session_needs_the_csrf_token(server):
    key = server.account_with_key("acme")
    body, cookie, _ = sign_in(server, key)
    token = body["csrf_token"]
    address = "blocked@example.net"

    def suppressed():
        r = server.get(f"/v1/suppressions/{address}", key=key)
        assert r.status in (200, 404), r
        return r.status == 200

    for headers in (with_cookie(cookie), with_cookie(cookie, "0" * 64),
                    with_cookie(cookie, token[:-1]), with_cookie(cookie, "")):
        r = server.request("POST", "/v1/suppressions", body={"email": address}, headers=headers)
        error_of(r, 403, "CSRF_TOKEN_INVALID")
        assert not suppressed(), "nothing changed"
    # Reads need no token.
    assert server.get("/v1/suppressions", headers=with_cookie(cookie)).status == 200
    r = server.request("POST", "/v1/suppressions", body={"email": address},
                       headers=with_cookie(cookie, token))
    assert r.status in (200, 201), r
    assert suppressed()
    r = server.request("DELETE", f"/v1/suppressions/{address}", headers=with_cookie(cookie))
    error_of(r, 403, "CSRF_TOKEN_INVALID")
    assert suppressed()
    # An Authorization header wins: the cookie is not looked at.
    r = server.get("/v1/suppressions", headers={**with_cookie(cookie), "Authorization": "Bearer x"})
    error_of(r, 401, "UNAUTHORIZED")
    # Requests made with the session are in the account's request log, marked as the
    # dashboard's ("source"); those made with the key as the API's.
    def logged():
        logs = server.get("/v1/logs?limit=100", key=key).json()["data"]
        return [e["source"] for e in logs if e["method"] == "POST"
                and e["url"] == "/v1/suppressions" and e["status"] in (200, 201)]
    assert wait_for(logged, what="the session's request in the account's request log") == [
        "dashboard"]
    assert server.request("DELETE", f"/v1/suppressions/{address}", key=key).status in (200, 204)

    def deleted():
        logs = server.get("/v1/logs?limit=100", key=key).json()["data"]
        return [e["source"] for e in logs if e["method"] == "DELETE" and e["status"] < 300]
    assert wait_for(deleted, what="the key's DELETE in the request log") == ["api"]


def test_a_session_sees_only_its_accounts_emails(tmp_path, posthorn_factory):
    dns = Dnsmasq(tmp_path / "dns")
    dns.start()
    try:
        ph = posthorn_factory(env=dns_env(dns)).start()
        key_a = ph.account_with_key("alpha")
        key_b = ph.account_with_key("beta")
        verified_domain(ph, dns, key_b, "beta.example.com")
        sent = ph.request("POST", "/v1/emails", key=key_b,
                          body={"from": "hello@beta.example.com", "to": ["u@sink.example.net"],
                                "subject": "hi", "text": "Hello."})
        assert sent.status in (200, 201, 202), sent
        email_id = sent.json()["id"]
        _, cookie_a, _ = sign_in(ph, key_a)
        _, cookie_b, _ = sign_in(ph, key_b)
        error_of(ph.get(f"/v1/emails/{email_id}", headers=with_cookie(cookie_a)), 404,
                 "NOT_FOUND")
        mine = ph.get(f"/v1/emails/{email_id}", headers=with_cookie(cookie_b))
        assert mine.status == 200 and mine.json()["id"] == email_id, mine
    finally:
        dns.stop()


# ---- in the browser ----

def test_sign_in_reload_and_sign_out_in_a_browser(server, browser):
    key = server.account_with_key("acme")
    browser.get(server_url(server))
    form = wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "form#signin")))
    screenshot(browser, "signin", 1280, 900)
    screenshot(browser, "signin", 375, 812)
    browser.set_window_size(1280, 900)
    form.find_element(By.CSS_SELECTOR, 'input[name="key"]').send_keys(key)
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"], input[type="submit"]').click()
    wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#signout")))
    menu = browser.find_element(By.CSS_SELECTOR, "nav#menu")
    assert menu.find_elements(By.CSS_SELECTOR, 'a[href="#/emails"]'), menu.get_attribute("outerHTML")
    wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, '[data-ready="true"]')))
    c = browser.get_cookie(COOKIE)
    assert c and c["httpOnly"] and c["sameSite"] == "Strict" and c["path"] == "/", c
    assert browser.execute_script("return document.cookie").find(COOKIE) == -1, "HttpOnly"
    cookie = c["value"]
    screenshot(browser, "signed-in", 1280, 900)
    screenshot(browser, "signed-in", 375, 812)
    browser.set_window_size(1280, 900)

    browser.refresh()
    wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#signout")))
    assert server.get("/v1/logs", headers=with_cookie(cookie)).status == 200

    browser.find_element(By.CSS_SELECTOR, "#signout").click()
    wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "form#signin")))
    wait(browser).until(lambda d: d.get_cookie(COOKIE) is None)
    error_of(server.get("/v1/logs", headers=with_cookie(cookie)), 401, "UNAUTHORIZED")
    assert console_errors(browser) == []


def test_a_wrong_key_in_the_browser_shows_an_error_and_sets_no_cookie(server, browser):
    server.account_with_key("acme")
    browser.get(server_url(server))
    form = wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "form#signin")))
    form.find_element(By.CSS_SELECTOR, 'input[name="key"]').send_keys(BAD_KEY)
    form.find_element(By.CSS_SELECTOR, 'button[type="submit"], input[type="submit"]').click()
    alert = wait(browser).until(
        EC.visibility_of_element_located((By.CSS_SELECTOR, '[role="alert"]')))
    assert alert.text.strip(), "the error is said in words"
    assert browser.find_elements(By.CSS_SELECTOR, "form#signin")
    assert not browser.find_elements(By.CSS_SELECTOR, "#signout")
    assert browser.get_cookie(COOKIE) is None
    screenshot(browser, "signin-error", 1280, 900)
    screenshot(browser, "signin-error", 375, 812)
    # The refused sign-in's 401 is in the console, once, and nothing else (the page's own
    # question, whether a session exists, is answered 200).
    errors = console_errors(browser)
    assert len(errors) == 1 and SIGN_IN_401 in errors[0]["message"], errors


def test_the_session_answers_match_the_openapi_document(server):
    from test_openapi import node_check
    key = server.account_with_key("acme")
    answers = []

    def record(method, r):
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") \
            else None
        answers.append({"method": method, "path": "/dashboard/session", "status": r.status,
                        "body": body})
        return r

    r = record("POST", server.request("POST", "/dashboard/session", body={"key": key}))
    cookie = re.match(COOKIE + r"=([^;]+);", r.headers["set-cookie"]).group(1)
    token = r.json()["csrf_token"]
    record("GET", server.get("/dashboard/session", headers=with_cookie(cookie)))
    record("POST", server.request("POST", "/dashboard/session", body={"key": BAD_KEY}))
    record("POST", server.request("POST", "/dashboard/session", body={"x": 1}))
    record("POST", server.request("POST", "/dashboard/session", body="{"))
    record("DELETE", server.request("DELETE", "/dashboard/session", headers=with_cookie(cookie)))
    record("DELETE", server.request("DELETE", "/dashboard/session",
                                    headers=with_cookie(cookie, token)))
    record("GET", server.get("/dashboard/session", headers=with_cookie(cookie)))
    record("DELETE", server.request("DELETE", "/dashboard/session",
                                    headers=with_cookie(cookie, token)))
    assert [a["status"] for a in answers] == [200, 200, 401, 422, 400, 403, 204, 200, 401], \
        answers
    assert answers[7]["body"] == {"signed_in": False}, answers[7]
    out = node_check(answers)
    assert out["ok"], out["errors"]
