"""The dashboard's controls that test_dashboard_pages.py does not drive (issue 31), in a real
headless Chromium against the real binary: the Emails page's day range, a webhook's replay of
the failed deliveries since a time, Cancel on a scheduled email's page, and the sign-in form
throttled after repeated wrong keys.

Times: an email's or an event's time is only ever the moment it was made, so the tests make
things on both sides of a bound T (a whole second, waited for) and put the bound where the
page's control can name it by giving the browser a time zone of their own (an ICU custom zone,
"GMT-01:51:07", through Emulation.setTimezoneOverride): a local midnight at T for the Emails
page's days, a local minute at T for the webhook's datetime-local. The page turns local days
and minutes into instants itself, which is part of what is checked.

The tests share one posthorn (and DNS, recipient server) with an account each, except the
throttling test, which locks its own client address out of its own posthorn."""
from __future__ import annotations

import datetime as dt
import json
import math
import re
import time
import urllib.parse

import pytest

from browser import open_browser, server_url
from support.domains import verified_domain
from support.posthorn import wait_for
from support.worlds import dns_and_sink
from test_dashboard_pages import goto, severe, sign_in, wait, wait_ready

pytest.importorskip("selenium.webdriver", reason="python3-selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def world(tmp_path_factory, module_posthorn_factory):
    tmp = tmp_path_factory.mktemp("controls")
    dns, sink, env = dns_and_sink(tmp, "accept.example.net")
    ph = module_posthorn_factory(env={
        **env, "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        # One retry a second later, then a failing call is given up.
        "POSTHORN_WEBHOOKS_RETRY_SCHEDULE_S": "1"}).start()

    class World:
        pass

    w = World()
    w.dns, w.sink, w.server = dns, sink, ph
    yield w
    sink.stop()
    dns.stop()


def account(world, name, sender=None) -> str:
    """A new account of the shared posthorn with a full key, and its verified sending domain
    when `sender` names one."""
    key = world.server.account_with_key(name)
    if sender:
        verified_domain(world.server, world.dns, key, sender)
    return key


@pytest.fixture
def browser():
    with open_browser() as d:
        d.console = []
        yield d


# ---- helpers ----

def iso(t: float) -> str:
    """An instant as the page's Date.toISOString() writes it."""
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{round(t * 1000) % 1000:03d}Z"


def parse_iso(s: str) -> float:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def next_second_after(t: float) -> int:
    """A whole second after t, waited for: what is made from now on is made at or after it."""
    bound = math.floor(t) + 1
    wait_for(lambda: time.time() >= bound + 0.02, timeout=3, interval=0.01, what="the bound")
    return bound


def zone_with_boundary_at(t: int, period: int) -> tuple[str, int]:
    """A custom time zone (ICU "GMT±hh:mm:ss") in which the instant t starts a local period
    (86400: a day, 60: a minute), and its offset in seconds."""
    off = -(t % period)
    if off < -43200:
        off += 86400
    sign = "+" if off >= 0 else "-"
    a = abs(off)
    return f"GMT{sign}{a // 3600:02d}:{a // 60 % 60:02d}:{a % 60:02d}", off


def use_time_zone(d, zone: str, offset: int) -> None:
    d.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": zone})
    d.get("about:blank")
    # The page's clock is the zone asked for (getTimezoneOffset is minutes west of UTC).
    assert d.execute_script("return new Date().getTimezoneOffset() * -60") == \
        pytest.approx(offset, abs=0.01)


RECORD_FETCH = """
window.__calls = [];
const orig = window.fetch;
window.fetch = function (url, init) {
  const c = {url: String(url), method: (init && init.method) || 'GET',
             body: (init && init.body) || null, status: null, retryAfter: null};
  window.__calls.push(c);
  return orig.apply(this, arguments).then((r) => {
    c.status = r.status; c.retryAfter = r.headers.get('Retry-After'); return r; });
};
"""


def record_fetch(d) -> None:
    """From now on the page's requests (fetch) are kept in window.__calls: URL, method, body,
    the answer's status and Retry-After. The page's code is not changed, only watched."""
    d.execute_script(RECORD_FETCH)


def calls(d, part: str, method: str = "GET") -> list[dict]:
    return [c for c in d.execute_script("return window.__calls")
            if part in c["url"] and c["method"] == method]


def assert_console_clean(d, extra=()) -> None:
    errors = severe(d, list(extra))
    assert errors == [], "errors in the browser console:\n" + "\n".join(errors)


def send(ph, key, sender, to, subject, **more) -> dict:
    r = ph.request("POST", "/v1/emails", key=key, body={
        "from": f"hello@{sender}", "to": to, "subject": subject, "text": "Hello.",
        "html": "<p>Hello.</p>", **more})
    assert r.status == 200, r
    return ph.get(f"/v1/emails/{r.json()['id']}", key=key).json()


def listed_ids(main) -> list[str]:
    return [a.get_attribute("href").split("#/emails/")[1]
            for a in main.find_elements(By.CSS_SELECTOR, "table.list a[href^='#/emails/']")]


def type_date(d, name: str, day: dt.date) -> None:
    """Types a day into the filter form's <input type=date> as a person does (en-US)."""
    field = d.find_element(By.CSS_SELECTOR, f"form.filters input[name={name}]")
    field.send_keys(day.strftime("%m%d%Y"))
    assert field.get_attribute("value") == day.isoformat(), field.get_attribute("value")


def filter_emails(d) -> object:
    d.execute_script("document.getElementById('main').dataset.stale = '1';")
    d.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
    return wait_ready(d, "emails")


# ---- the tests ----

def test_the_emails_day_range_lists_exactly_the_emails_in_it(world, browser):
    d, ph = browser, world.server
    sender = "dates.example.com"
    key = account(world, "dates", sender)
    early = [send(ph, key, sender, f"early{i}@accept.example.net", f"Early {i}") for i in (1, 2)]
    bound = next_second_after(max(parse_iso(e["created_at"]) for e in early))
    late = [send(ph, key, sender, f"late{i}@accept.example.net", f"Late {i}") for i in (1, 2)]
    assert all(parse_iso(e["created_at"]) < bound for e in early)
    assert all(parse_iso(e["created_at"]) >= bound for e in late), (bound, late)
    early_ids = sorted(e["id"] for e in early)
    late_ids = sorted(e["id"] for e in late)

    # In the browser's zone, the day of `bound` starts at `bound`: the early emails are on
    # the day before.
    zone, offset = zone_with_boundary_at(bound, 86400)
    use_time_zone(d, zone, offset)
    day = dt.datetime.fromtimestamp(bound + offset, dt.timezone.utc).date()
    before = day - dt.timedelta(days=1)

    sign_in(d, server_url(ph), key)
    wait_ready(d, "overview")
    main = goto(d, server_url(ph), "#/emails", "emails")
    assert sorted(listed_ids(main)) == sorted(early_ids + late_ids)
    record_fetch(d)

    # From the day of the bound: the late emails only.
    type_date(d, "from", day)
    main = filter_emails(d)
    assert f"from={day.isoformat()}" in d.current_url and "to=" not in d.current_url
    assert sorted(listed_ids(main)) == late_ids, main.text
    assert "Late 1" in main.text and "Early" not in main.text
    assert "4 in all" not in main.text and "2 in all" in main.text
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(calls(d, "/v1/email?")[-1]["url"]).query)
    assert q["start_date"] == [iso(bound)] and "end_date" not in q, q

    # Up to the day before: the early emails only (the day ends a millisecond before bound).
    d.find_element(By.LINK_TEXT, "Clear").click()
    main = wait_ready(d, "emails")
    assert sorted(listed_ids(main)) == sorted(early_ids + late_ids)
    type_date(d, "to", before)
    main = filter_emails(d)
    assert f"to={before.isoformat()}" in d.current_url and "from=" not in d.current_url
    assert sorted(listed_ids(main)) == early_ids, main.text
    assert "Early 2" in main.text and "Late" not in main.text
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(calls(d, "/v1/email?")[-1]["url"]).query)
    assert q["end_date"] == [iso(bound - 0.001)] and "start_date" not in q, q

    # One day, both bounds: from and to the day of the bound.
    d.find_element(By.LINK_TEXT, "Clear").click()
    wait_ready(d, "emails")
    type_date(d, "from", day)
    type_date(d, "to", day)
    main = filter_emails(d)
    assert sorted(listed_ids(main)) == late_ids, main.text
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(calls(d, "/v1/email?")[-1]["url"]).query)
    assert q["start_date"] == [iso(bound)] and q["end_date"] == [iso(bound + 86400 - 0.001)], q
    # The range survives a reload: it is in the URL.
    d.refresh()
    main = wait_ready(d, "emails")
    assert sorted(listed_ids(main)) == late_ids
    assert d.find_element(By.CSS_SELECTOR, "form.filters input[name=from]").get_attribute(
        "value") == day.isoformat()

    # From the day after: nothing, and the page says so.
    main = goto(d, server_url(ph), f"#/emails?from={day + dt.timedelta(days=1)}", "emails")
    assert listed_ids(main) == [] and "No email matches" in main.text
    # A URL edited by hand: what is not a day is no filter (it was "Invalid time value").
    for bad in ("garbage", "2026-02-30", "2026-1-5"):
        main = goto(d, server_url(ph), f"#/emails?from={bad}&to={bad}", "emails")
        assert "went wrong" not in main.text, (bad, main.text)
        assert sorted(listed_ids(main)) == sorted(early_ids + late_ids), bad
    assert_console_clean(d)


def test_replaying_the_failed_deliveries_since_a_time(world, browser, webhook_receiver):
    d, ph = browser, world.server
    key = account(world, "hooks")
    receiver = webhook_receiver([500])
    r = ph.request("POST", "/v1/webhooks", key=key,
                   body={"url": receiver.url, "events": ["suppression.added"]})
    assert r.status == 200, r
    hook = r.json()["id"]

    def given_up(address):
        """The event of the suppression of `address`, once both of its calls failed."""
        got = [c for c in receiver.requests if c.json()["data"].get("email") == address]
        if len(got) < 2:
            return None
        ev = got[0].headers["webhook-id"]
        log = ph.get(f"/v1/webhooks/{hook}/deliveries?limit=100", key=key).json()["data"]
        tries = [x for x in log if x["event_id"] == ev]
        return got[0] if len(tries) == 2 and all(x["status_code"] == 500 for x in tries) \
            else None

    assert ph.request("POST", "/v1/suppressions", key=key,
                      body={"email": "old@example.org"}).status in (200, 201)
    old = wait_for(lambda: given_up("old@example.org"), timeout=20, what="the old event given up")
    bound = next_second_after(parse_iso(old.json()["created_at"]))
    assert ph.request("POST", "/v1/suppressions", key=key,
                      body={"email": "new@example.org"}).status in (200, 201)
    new = wait_for(lambda: given_up("new@example.org"), timeout=20, what="the new event given up")
    assert parse_iso(new.json()["created_at"]) >= bound
    old_id, new_id = old.headers["webhook-id"], new.headers["webhook-id"]
    receiver.set_statuses([200])  # the endpoint is fixed
    before = len(receiver.requests)

    # A local minute starts at the bound: the page's datetime-local can name it.
    zone, offset = zone_with_boundary_at(bound, 60)
    use_time_zone(d, zone, offset)
    local = dt.datetime.fromtimestamp(bound + offset, dt.timezone.utc)
    sign_in(d, server_url(ph), key)
    wait_ready(d, "overview")
    main = goto(d, server_url(ph), f"#/webhooks/{hook}", "webhook")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "table.deliveries").text.count("HTTP 500")
         >= 4, what="the four failed calls listed")
    record_fetch(d)
    since = d.find_element(By.CSS_SELECTOR, "input[name=since]")
    since.send_keys(local.strftime("%m%d%Y"), Keys.TAB, local.strftime("%I%M%p"))
    assert since.get_attribute("value") == local.strftime("%Y-%m-%dT%H:%M"), \
        since.get_attribute("value")
    d.find_element(By.XPATH, "//button[text()='Replay failed']").click()
    wait(d, lambda: "pending again" in d.find_element(By.CSS_SELECTOR, "main .out").text,
         what="the replay's answer")
    assert "1 given-up delivery is pending again." in main.find_element(
        By.CSS_SELECTOR, ".out").text
    (call,) = calls(d, f"/v1/webhooks/{hook}/replay", "POST")
    assert json.loads(call["body"]) == {"failed_since": iso(bound)} and call["status"] == 200

    # The failed event after the bound arrives at the real endpoint, answered 200; the one
    # before it is not called again.
    wait_for(lambda: any(c.headers["webhook-id"] == new_id for c in receiver.requests[before:]),
             timeout=15, what="the replayed call")
    again = [c for c in receiver.requests[before:] if c.headers["webhook-id"] == new_id]
    assert again[0].status == 200 and again[0].json()["data"]["email"] == "new@example.org"
    assert again[0].body == new.body, "the same event, replayed"
    # The page's list shows it (it refreshes itself every 5 s).
    wait(d, lambda: "HTTP 200" in d.find_element(By.CSS_SELECTOR, "table.deliveries").text,
         timeout=15, what="the replayed call in the page")
    log = ph.get(f"/v1/webhooks/{hook}/deliveries?limit=100", key=key).json()["data"]
    assert [x["status_code"] for x in log if x["event_id"] == old_id] == [500, 500], log
    assert [x["status_code"] for x in log if x["event_id"] == new_id] == [200, 500, 500], log
    assert not [c for c in receiver.requests[before:] if c.headers["webhook-id"] == old_id]
    assert_console_clean(d)


def test_canceling_a_scheduled_email_from_its_page(world, browser):
    d, ph, sink = browser, world.server, world.sink
    sender = "cancel.example.com"
    key = account(world, "cancel", sender)
    # Two emails for the same moment, soon enough to see it come: one is canceled in the
    # page, the other shows that the moment came and the recipient's server got its mail.
    at = iso(time.time() + 20)
    keep = send(ph, key, sender, "keep@accept.example.net", "Kept", scheduled_at=at)
    drop = send(ph, key, sender, "drop@accept.example.net", "Dropped", scheduled_at=at)
    assert keep["status"] == drop["status"] == "SCHEDULED", (keep, drop)

    sign_in(d, server_url(ph), key)
    wait_ready(d, "overview")
    main = goto(d, server_url(ph), f"#/emails/{drop['id']}", "email")
    facts = main.find_element(By.CSS_SELECTOR, ".facts").text
    assert "SCHEDULED" in facts and "Scheduled for" in facts
    record_fetch(d)
    main.find_element(By.XPATH, "//button[text()='Cancel sending']").click()
    wait(d, lambda: "CANCELED" in d.find_element(By.CSS_SELECTOR, "main .facts").text,
         what="CANCELED on the page")
    main = d.find_element(By.ID, "main")
    assert "Canceled: the recipients not yet attempted will not be." in main.text
    assert not main.find_elements(By.XPATH, "//button[text()='Cancel sending']")
    assert "CANCELED" in main.find_element(By.CSS_SELECTOR, "table.recipients").text
    (call,) = calls(d, f"/v1/emails/{drop['id']}/cancel", "POST")
    assert call["status"] == 200, call
    e = ph.get(f"/v1/emails/{drop['id']}", key=key).json()
    assert e["status"] == "CANCELED", e
    assert [(r["status"], r["attempts"]) for r in e["recipients"]] == [("CANCELED", 0)], e
    # The page stays right after its own refresh (every 3 s while the email was open).
    d.refresh()
    main = wait_ready(d, "email")
    assert "CANCELED" in main.find_element(By.CSS_SELECTOR, ".facts").text
    assert "SCHEDULED" not in main.find_element(By.CSS_SELECTOR, ".facts").text

    # The scheduled moment comes: the other email arrives, the canceled one never does.
    wait_for(lambda: any("keep@accept.example.net" in m.rcpt_tos for m in sink.messages),
             timeout=60, what="the other scheduled email delivered")
    assert "drop@accept.example.net" not in sink.rcpt_attempts
    assert not any("drop@accept.example.net" in m.rcpt_tos for m in sink.messages)
    assert ph.get(f"/v1/emails/{drop['id']}", key=key).json()["status"] == "CANCELED"
    assert_console_clean(d)


def signin_alert(d, key) -> tuple[str, float]:
    """Submits the sign-in form with `key`: the refusal the page shows, and how long the
    server took to answer."""
    form = wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "form#signin"), what="the form")[0]
    field = form.find_element(By.NAME, "key")
    field.clear()
    field.send_keys(key)
    n = len(d.execute_script("return window.__calls"))
    start = time.monotonic()
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(d, lambda: d.execute_script(
        "const c = window.__calls; return c.length > arguments[0] && "
        "c[c.length - 1].status !== null", n), what="the answer")
    took = time.monotonic() - start
    alert = wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#signin [role=alert]"),
                 what="the refusal")[0]
    return alert.text, took


def test_the_sign_in_form_is_throttled_after_repeated_wrong_keys(posthorn_factory, browser):
    # smtp.auth_max_failures and smtp.auth_lockout_s govern the sign-in as they do SMTP AUTH
    # (docs/dashboard.md): two failures answered at once, then 0.5 s more each, then locked.
    lockout = 10
    ph = posthorn_factory(env={"POSTHORN_SMTP_AUTH_MAX_FAILURES": "4",
                               "POSTHORN_SMTP_AUTH_LOCKOUT_S": str(lockout)}).start()
    key = ph.account_with_key("acme")
    wrong = "ph_" + "0" * 32
    d = browser
    d.get(server_url(ph))
    wait_ready(d, "signin")
    record_fetch(d)

    took = []
    for _ in range(4):
        text, t = signin_alert(d, wrong)
        assert "That key was not accepted: invalid API key" in text, text
        took.append(t)
    statuses = [c["status"] for c in calls(d, "/dashboard/session", "POST")]
    assert statuses == [401] * 4, statuses
    assert took[2] >= 0.45 and took[3] >= 0.95, f"the third and fourth are slowed: {took}"

    # Locked out: a wrong key and then the right one are refused, in words, with the wait.
    for k in (wrong, key):
        text, _ = signin_alert(d, k)
        m = re.search(r"too many failed sign-ins .*retry after (\d+) s", text)
        assert m and "Could not sign in" in text, text
        assert 1 <= int(m.group(1)) <= lockout, text
        last = calls(d, "/dashboard/session", "POST")[-1]
        assert last["status"] == 429 and last["retryAfter"] == m.group(1), last
        assert not d.find_elements(By.CSS_SELECTOR, "nav#menu")
    start = time.monotonic()
    r = ph.request("POST", "/dashboard/session", body={"key": key})
    assert time.monotonic() - start < 0.45, "a locked-out client is answered at once"
    assert r.status == 429 and r.json()["code"] == "RATE_LIMITED", r
    wait_s = int(r.headers["retry-after"])
    assert 1 <= wait_s <= lockout, r.headers
    assert f"retry after {wait_s} s" in r.json()["message"], r.json()
    assert "set-cookie" not in r.headers

    # Once the Retry-After has passed, the right key signs in.
    time.sleep(wait_s)
    d.find_element(By.NAME, "key").clear()
    d.find_element(By.NAME, "key").send_keys(key)
    d.find_element(By.CSS_SELECTOR, "form#signin button[type=submit]").click()
    wait_ready(d, "overview")
    assert d.find_element(By.CSS_SELECTOR, "nav#menu")
    assert calls(d, "/dashboard/session", "POST")[-1]["status"] == 200
    # The wrong keys' refusals (the four POSTs' 401s above) and the lockout's 429s.
    assert_console_clean(d, [("/dashboard/session", 401), ("/dashboard/session", 429)])
