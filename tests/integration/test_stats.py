"""GET /v1/stats (issue 31; docs/api.md "GET /v1/stats"): real mail through an aiosmtpd sink
that accepts some recipients and refuses others, then the counts the stats answer: accepted,
delivered, bounced by class (a hard 5.1.1, a block), an email with three bounced recipients
counted once, blocked by a suppression, opened and clicked through the tracking URLs (the
first time only); per hour and per day, every bucket present and aligned, the domain and
tag filters; bad parameters refused (400), another account sees zeros and gets 404 for the
first one's domain, and a key tied to a domain reads that domain's stats only (403 for
another). The answer's shape against docs/openapi.yaml is checked in test_openapi.py."""
import datetime
import email
import email.policy
import re

from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import Script, SmtpSink

SENDER = "mail.example.com"
OTHER = "other.example.com"
HOUR = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:00:00Z$")
DAY = re.compile(r"^\d{4}-\d\d-\d\dT00:00:00Z$")
KINDS = ("accepted", "delivered", "bounced", "complained", "failed", "blocked", "opened",
         "clicked")
CLASSES = ("hard", "soft", "block", "undetermined")
HTML = '<html><body><p>Hi <a href="https://shop.example/item">item</a></p></body></html>'


def zeros():
    out = {k: 0 for k in KINDS}
    out["bounced_by_type"] = {c: 0 for c in CLASSES}
    return out


def stats(ph, key, query=""):
    r = ph.get("/v1/stats" + query, key=key)
    assert r.status == 200, r
    return r.json()


def parse(t):
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))


def check_buckets(answer, width):
    """Every bucket of [from, to), aligned, in order; the totals their sum."""
    pattern = HOUR if width == datetime.timedelta(hours=1) else DAY
    start, end = parse(answer["from"]), parse(answer["to"])
    assert pattern.match(answer["from"]) and pattern.match(answer["to"]), answer
    buckets = answer["buckets"]
    assert len(buckets) == (end - start) / width
    for i, b in enumerate(buckets):
        assert pattern.match(b["start"]) and parse(b["start"]) == start + i * width, b
        assert set(b) == {"start", *KINDS, "bounced_by_type"}, b
    summed = zeros()
    for b in buckets:
        for k in KINDS:
            summed[k] += b[k]
        for c in CLASSES:
            summed["bounced_by_type"][c] += b["bounced_by_type"][c]
        assert b["bounced"] == sum(b["bounced_by_type"].values()), b
    assert summed == answer["totals"], (summed, answer["totals"])


def start(posthorn_factory, dns, port):
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                               "POSTHORN_SERVER_PUBLIC_URL": "http://127.0.0.1:1"}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, SENDER)
    return ph, key


def send(ph, key, to, **extra):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": to, "subject": "hi", "text": "hello",
                         **extra})
    assert r.status == 200, r
    return r.json()["id"]


def status_of(ph, key, em):
    return ph.get(f"/v1/emails/{em}", key=key).json()["status"]


def test_counts_of_real_mail(posthorn_factory, dns):
    port = free_port()
    refused = {f"gone{i}@sink.example.net": "550 5.1.1 <x>: User unknown" for i in range(4)}
    refused["spam@sink.example.net"] = ("554 5.7.1 Service unavailable; Client host "
                                        "[127.0.0.1] blocked using zen.spamhaus.org")
    sink = SmtpSink("127.0.0.2", port, Script(rcpt=refused)).start()
    try:
        ph, key = start(posthorn_factory, dns, port)
        before = stats(ph, key, "?interval=hour")
        assert before["totals"] == zeros(), "nothing sent yet"

        assert ph.request("POST", "/v1/suppressions", key=key,
                          body={"email": "sup@sink.example.net"}).status == 200
        ok = send(ph, key, "ok@sink.example.net",
                  tags=[{"name": "campaign", "value": "spring"}])
        hard = send(ph, key, "gone0@sink.example.net")
        block = send(ph, key, "spam@sink.example.net")
        three = send(ph, key, ["gone1@sink.example.net", "gone2@sink.example.net",
                               "gone3@sink.example.net"])
        blocked = send(ph, key, "sup@sink.example.net")
        tracked = send(ph, key, "reader@sink.example.net", html=HTML,
                       tracking={"open": True, "click": True})
        want = {ok: "DELIVERED", hard: "BOUNCED", block: "BOUNCED", three: "BOUNCED",
                blocked: "BLOCKED", tracked: "DELIVERED"}
        wait_for(lambda: all(status_of(ph, key, em) == s for em, s in want.items()),
                 timeout=30, what="every email final")

        # Opened and clicked through the tracking URLs: twice each, counted once.
        msg = email.message_from_bytes(ph.stored_message(tracked), policy=email.policy.default)
        html = msg.get_body(("html",)).get_content()
        (pixel,) = re.findall(r'http://127\.0\.0\.1:1(/t/o/[^"]+)', html)
        (link,) = re.findall(r'http://127\.0\.0\.1:1(/t/c/[^"]+)', html)
        for _ in range(2):
            assert ph.get(pixel).status == 200
            assert ph.get(link).status == 302

        expected = zeros()
        expected.update(accepted=6, delivered=2, bounced=3, blocked=1, opened=1, clicked=1)
        expected["bounced_by_type"].update(hard=2, block=1)

        hourly = stats(ph, key, "?interval=hour")
        assert hourly["interval"] == "hour" and len(hourly["buckets"]) == 24
        check_buckets(hourly, datetime.timedelta(hours=1))
        assert hourly["totals"] == expected, hourly["totals"]
        now = datetime.datetime.now(datetime.timezone.utc)
        assert parse(hourly["to"]) - datetime.timedelta(hours=1) <= now < parse(hourly["to"])

        daily = stats(ph, key)
        assert daily["interval"] == "day" and len(daily["buckets"]) == 30
        check_buckets(daily, datetime.timedelta(days=1))
        assert daily["totals"] == expected

        # An explicit window, with offsets, rounded out to whole buckets.
        frm = (now - datetime.timedelta(hours=2)).astimezone(
            datetime.timezone(datetime.timedelta(hours=2))).isoformat()
        to = (now + datetime.timedelta(minutes=1)).isoformat()
        q = f"?interval=hour&from={frm.replace('+', '%2B')}&to={to.replace('+', '%2B')}"
        window = stats(ph, key, q)
        check_buckets(window, datetime.timedelta(hours=1))
        assert len(window["buckets"]) in (3, 4) and window["totals"] == expected
        # A window before it all: zeros, every bucket there.
        old = stats(ph, key, "?interval=day&from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z")
        assert len(old["buckets"]) == 31 and old["totals"] == zeros()
        assert old["from"] == "2020-01-01T00:00:00Z" and old["to"] == "2020-02-01T00:00:00Z"

        # The filters: the domain (every email here is from it), a tag.
        assert stats(ph, key, f"?domain={SENDER}")["totals"] == expected
        assert stats(ph, key, f"?domain={SENDER.upper()}")["totals"] == expected
        tagged = zeros()
        tagged.update(accepted=1, delivered=1)
        assert stats(ph, key, "?tag=campaign:spring")["totals"] == tagged
        assert stats(ph, key, "?tag=campaign:autumn")["totals"] == zeros()
    finally:
        sink.stop()


def test_bad_parameters_are_refused(server):
    key = server.account_with_key("acme")
    assert error(server.get("/v1/stats"), 401, "UNAUTHORIZED")
    cases = {
        "?interval=week": "interval",
        "?interval=": "interval",
        "?from=yesterday": "from",
        "?to=2026-13-01T00:00:00Z": "to",
        "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "from",
        "?from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z": "from",
        "?interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z": "to",
        "?interval=day&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z": "to",
        "?tag=nocolon": "tag",
        "?tag=a:b%20c": "tag",
        "?domain=-bad-": "domain",
        "?domain=a.example&tag=a:b": "tag",
        "?interval=day&interval=hour": "interval",
        "?days=3": "days",
    }
    for q, field in cases.items():
        msg = error(server.get("/v1/stats" + q, key=key), 400, "VALIDATION_ERROR")
        assert field in msg, (q, msg)
    # 1,000 buckets are answered; 1,001 are not.
    ok = server.get("/v1/stats?interval=hour&from=2026-01-01T00:00:00Z"
                    "&to=2026-02-11T16:00:00Z", key=key)
    assert ok.status == 200 and len(ok.json()["buckets"]) == 1000, ok
    assert error(server.get("/v1/stats?interval=hour&from=2026-01-01T00:00:00Z"
                            "&to=2026-02-11T17:00:00Z", key=key))
    # A domain the account does not have: 404, as every domain look-up.
    assert error(server.get("/v1/stats?domain=nowhere.example", key=key), 404, "NOT_FOUND")


def test_accounts_and_domain_keys_see_their_own(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns)}).start()
    key = ph.account_with_key("acme")
    verified_domain(ph, dns, key, SENDER)
    verified_domain(ph, dns, key, OTHER)
    # Sent to nowhere that answers: accepted is what counts here.
    for sender in (SENDER, SENDER, OTHER):
        r = ph.request("POST", "/v1/emails", key=key,
                       body={"from": f"a@{sender}", "to": "u@nowhere.invalid", "subject": "s",
                             "text": "t"})
        assert r.status == 200, r
    assert stats(ph, key)["totals"]["accepted"] == 3
    assert stats(ph, key, f"?domain={SENDER}")["totals"]["accepted"] == 2
    assert stats(ph, key, f"?domain={OTHER}")["totals"]["accepted"] == 1

    # Another account: zeros, and the first one's domain is not found.
    theirs = ph.account_with_key("globex")
    answer = stats(ph, theirs)
    assert answer["totals"] == zeros() and len(answer["buckets"]) == 30
    assert error(ph.get(f"/v1/stats?domain={SENDER}", key=theirs), 404, "NOT_FOUND")

    # A sending key reads the stats; tied to a domain, that domain's only.
    r = ph.request("POST", "/v1/api-keys", key=key,
                   body={"name": "shop", "permission": "sending", "domain": SENDER})
    assert r.status == 201, r
    shop = r.json()["key"]
    assert stats(ph, shop)["totals"]["accepted"] == 2, "its domain's, unasked"
    assert stats(ph, shop, f"?domain={SENDER}")["totals"]["accepted"] == 2
    assert error(ph.get(f"/v1/stats?domain={OTHER}", key=shop), 403, "FORBIDDEN")
    assert error(ph.get("/v1/stats?tag=a:b", key=shop), 400, "VALIDATION_ERROR")
    r = ph.request("POST", "/v1/api-keys", key=key,
                   body={"name": "any", "permission": "sending"})
    anyk = r.json()["key"]
    assert stats(ph, anyk)["totals"]["accepted"] == 3


def test_test_mode_mail_counts_nowhere(server):
    """A test key's mail (delivered@, bounced@ and complained@test.posthorn: its outcomes
    simulated) is in the list of emails but in none of the counts, whichever key reads
    them (the counting of live mail is test_counts_of_real_mail's)."""
    key = server.account_with_key("acme")
    r = server.request("POST", "/v1/api-keys", key=key,
                       body={"name": "test", "permission": "full", "test": True})
    assert r.status == 201, r
    test_key = r.json()["key"]
    ids = []
    for to in ("delivered@test.posthorn", "bounced@test.posthorn", "complained@test.posthorn"):
        r = server.request("POST", "/v1/emails", key=test_key,
                           body={"from": "sandbox@test.posthorn", "to": to, "subject": "t",
                                 "text": "t"})
        assert r.status == 200, r
        ids.append(r.json()["id"])
    assert [status_of(server, key, i) for i in ids] == ["DELIVERED", "BOUNCED", "COMPLAINED"]
    assert server.get("/v1/email", key=key).json()["total"] == 3
    for interval in ("hour", "day"):
        assert stats(server, key, f"?interval={interval}")["totals"] == zeros()
        assert stats(server, test_key, f"?interval={interval}")["totals"] == zeros()
