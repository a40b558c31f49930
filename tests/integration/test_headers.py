"""What posthorn puts on the messages it accepts (issue 30, points 4 and 5), read at a real
SMTP sink (aiosmtpd): every text part labelled and encoded UTF-8, whatever the door (the
API, smtplib and nodemailer over submission), with and without tracking, for Latin-1 and
non-Latin text; one Received field (the client's address and name, ESMTPSA or HTTPS, the
email's id, never the key) and a Feedback-ID, both under a DKIM signature python3-dkim
verifies; an inbound copy's Received field; and SpamAssassin's local tests find nothing
wrong with the header block of a plain message."""
import email
import email.message
import email.policy
import json
import re
import shutil
import smtplib
import subprocess
import time

import dkim
import pytest

from support.dnsmasq import Dnsmasq
from support.domains import dns_env, verified_domain, zone_records
from support.posthorn import free_port
from support.smtp_sink import SmtpSink

from smtp_client import submit

SENDER = "mail.example.com"
NODE_CLIENT = __import__("pathlib").Path(__file__).resolve().parents[1] / "node" / "submit.js"
TEXTS = {"latin1": "café crème brûlée", "cyrillic": "Привет, мир", "japanese": "日本語のテキスト"}


@pytest.fixture
def world(tmp_path, posthorn_factory):
    dns = Dnsmasq(tmp_path / "dns")
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    dns.start()
    sink = SmtpSink("127.0.0.2", port).start()
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_DELIVERY_MX_PORT": str(port),
                               "POSTHORN_SMTP_HOSTNAME": "posthorn.test",
                               "POSTHORN_SERVER_PUBLIC_URL": "https://posthorn.test"}).start()
    account = ph.create_account("acme")
    key = ph.create_key("acme")[1]
    domain = verified_domain(ph, dns, key, SENDER)
    assert ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                      body={"config": {"inbound": True}}).status == 200
    yield ph, key, account, sink
    sink.stop()
    dns.stop()


def html_of(text):
    return ('<html><head><meta charset="utf-8"></head><body>'
            f'<p>{text}</p><p><a href="https://shop.example/item">item</a></p></body></html>')


def by_subject(sink, n, timeout=30.0):
    """The sink's messages (parsed, with their raw bytes) by subject, once it has n."""
    got = {}
    for m in sink.wait_messages(n, timeout=timeout):
        parsed = email.message_from_bytes(m.data, policy=email.policy.default)
        got[str(parsed["Subject"])] = (parsed, m.data)
    return got


def dkim_ok(ph, raw: bytes) -> bool:
    zone = zone_records(ph)

    def dnsfunc(name, timeout=5):
        selector = name.decode().split(".")[0]
        for owner, txt in zone.items():
            if owner.startswith(selector + "."):
                return txt.encode()
        return None
    return dkim.verify(raw, dnsfunc=dnsfunc)


def test_every_text_part_goes_out_as_utf8(world):
    """Issue 30: a UTF-8 HTML part of Latin-1 letters, sent with nodemailer and rewritten
    for tracking, went out labelled iso-8859-1 while its <meta charset=utf-8> stayed."""
    ph, key, _, sink = world
    node = shutil.which("node") and (NODE_CLIENT.parent / "node_modules" / "nodemailer").exists()
    sent = []
    for name, text in TEXTS.items():
        for tracked in (False, True):
            flags = {"X-Track-Opens": "true", "X-Track-Clicks": "true"} if tracked else {
                "X-Track-Opens": "false", "X-Track-Clicks": "false"}
            subject = f"api {name} {tracked}"
            r = ph.request("POST", "/v1/emails", key=key,
                           body={"from": f"a@{SENDER}", "to": "u@sink.example.net",
                                 "subject": subject, "text": text, "html": html_of(text),
                                 "tracking": {"open": tracked, "click": tracked}})
            assert r.status == 200, r
            sent.append((subject, text, tracked))

            subject = f"smtplib {name} {tracked}"
            m = email.message.EmailMessage()
            m["From"], m["To"], m["Subject"] = f"a@{SENDER}", "u@sink.example.net", subject
            for k, v in flags.items():
                m[k] = v
            m.set_content(text)
            m.add_alternative(html_of(text), subtype="html")
            submit(ph, key, m)
            sent.append((subject, text, tracked))

            if node:
                subject = f"nodemailer {name} {tracked}"
                content = {"text": text, "html": html_of(text), "headers": flags}
                r = subprocess.run(["node", str(NODE_CLIENT), str(ph.submission_port), key,
                                    f"a@{SENDER}", "u@sink.example.net", subject,
                                    json.dumps(content)],
                                   capture_output=True, text=True, timeout=60)
                out = json.loads(r.stdout.strip().splitlines()[-1])
                assert out["ok"], out
                sent.append((subject, text, tracked))
    # A client's own iso-8859-1 parts, tracked: decoded with their charset, sent as UTF-8,
    # the HTML's <meta charset> made to agree.
    latin1 = TEXTS["latin1"]
    m = email.message.EmailMessage()
    m["From"], m["To"], m["Subject"] = f"a@{SENDER}", "u@sink.example.net", "smtplib iso-8859-1"
    m["X-Track-Opens"] = m["X-Track-Clicks"] = "true"
    m.set_content(latin1, charset="iso-8859-1", cte="quoted-printable")
    m.add_alternative(html_of(latin1).replace("utf-8", "iso-8859-1"), subtype="html",
                      charset="iso-8859-1", cte="quoted-printable")
    assert b"charset=\"iso-8859-1\"" in m.as_bytes()
    submit(ph, key, m)
    sent.append(("smtplib iso-8859-1", latin1, True))
    got = by_subject(sink, len(sent))
    for subject, text, tracked in sent:
        msg, raw = got[subject]
        parts = [p for p in msg.walk() if p.get_content_maintype() == "text"]
        assert len(parts) == 2, (subject, raw)
        for p in parts:
            assert p.get_param("charset") == "utf-8", (subject, p["Content-Type"], raw)
            decoded = p.get_payload(decode=True).decode("utf-8")  # strict: UTF-8 it must be
            assert text in decoded, (subject, decoded)
        html = parts[1].get_payload(decode=True).decode("utf-8")
        assert '<meta charset="utf-8">' in html
        assert ("https://posthorn.test/t/o/" in html) == tracked, (subject, html)
        assert ("https://posthorn.test/t/c/" in html) == tracked, (subject, html)
        assert dkim_ok(ph, raw), subject
    if not node:
        pytest.skip("nodemailer is not installed (scripts/install-deps.sh installs it); "
                    "the API and smtplib were checked")


# SpamAssassin's rules that fire on a missing or malformed header block (its 20_head_tests,
# 20_date_tests and 20_ratware rules, by their names in the report). Before issue 30 every
# message scored NO_RECEIVED (and NO_RELAYS).
HEADER_RULES = {"NO_RECEIVED", "NO_RELAYS", "MISSING_MID", "MISSING_DATE", "MISSING_HEADERS",
                "MISSING_FROM", "MISSING_SUBJECT", "MISSING_MIME_HB_SEP", "INVALID_DATE",
                "INVALID_MSGID", "MSGID_FROM_MTA_HEADER", "RCVD_ILLEGAL_IP", "DATE_IN_FUTURE_03_06",
                "DATE_IN_FUTURE_06_12", "DATE_IN_FUTURE_12_24", "DATE_IN_FUTURE_24_48",
                "DATE_IN_PAST_03_06", "DATE_IN_PAST_06_12", "DATE_IN_PAST_12_24",
                "DATE_IN_PAST_24_48", "DATE_IN_PAST_96_XX", "HEADER_SPAM", "FORGED_MUA_OUTLOOK",
                "MIME_HTML_ONLY", "MIME_QP_LONG_LINE", "RDNS_NONE", "RDNS_DYNAMIC", "HELO_NO_DOMAIN",
                "NO_DNS_FOR_FROM", "UNPARSEABLE_RELAY", "MIME_BAD_ISO_CHARSET", "CHARSET_FARAWAY_HEADER"}


def spamassassin(raw: bytes) -> subprocess.Popen:
    """SpamAssassin's report of a message, local tests only: no DNS, no network, no Bayes,
    no auto-whitelist, no user preferences written (-x)."""
    return subprocess.Popen(["spamassassin", "-L", "-t", "-x", "--cf=use_bayes 0",
                             "--cf=use_auto_whitelist 0", "--cf=skip_rbl_checks 1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def rules_hit(report: bytes) -> set[str]:
    head = email.message_from_bytes(report, policy=email.policy.compat32)
    status = re.sub(r"\s+", " ", head["X-Spam-Status"])
    m = re.search(r"tests=(\S+)", status)
    return set() if not m or m.group(1) == "none" else set(m.group(1).split(","))


def test_received_feedback_id_and_spamassassin(world):
    ph, key, account, sink = world
    sa = shutil.which("spamassassin")
    api = ph.request("POST", "/v1/emails", key=key,
                     body={"from": f"Acme <hello@{SENDER}>", "to": "Ann <ann@sink.example.net>",
                           "subject": "Your order has shipped", "tags": [
                               {"name": "category", "value": "shipping"}],
                           "text": "Hello Ann,\n\nyour order 1042 is on its way.\n\nAcme\n"}).json()["id"]
    m = email.message.EmailMessage()
    m["From"], m["To"] = f"Acme <hello@{SENDER}>", "Bob <bob@sink.example.net>"
    m["Subject"] = "Your invoice"
    m["Feedback-ID"] = "forged:other.example:acc_x:spoofer"  # the client's: dropped
    m.set_content("Hello Bob,\n\nyour invoice is attached to your account.\n\nAcme\n")
    submit(ph, key, m)
    got = by_subject(sink, 2)
    (api_msg, api_raw), (smtp_msg, smtp_raw) = got["Your order has shipped"], got["Your invoice"]
    db = ph.db()
    (smtp_id,) = db.execute("SELECT id FROM emails WHERE subject = 'Your invoice'").fetchone()
    db.close()

    checks = [(api_msg, api_raw, api, "[127.0.0.1]", "HTTPS", "category=shipping"),
              (smtp_msg, smtp_raw, smtp_id, "client.test", "ESMTPSA", "")]
    for msg, raw, em, helo, proto, tag in checks:
        (received,) = msg.get_all("Received")
        received = re.sub(r"\s+", " ", str(received))
        assert re.fullmatch(
            rf"from {re.escape(helo)} \(unknown \[127\.0\.0\.1\]\) by posthorn\.test \(posthorn\) "
            rf"with {proto} id {em}; \w{{3}}, \d{{1,2}} \w{{3}} \d{{4}} \d\d:\d\d:\d\d \+0000",
            received), received
        # The trace field is the first of the message as posthorn wrote it (under the
        # DKIM-Signature delivery prepends).
        assert raw.split(b"\r\n")[0].startswith(b"DKIM-Signature:")
        assert re.search(rb"\r\nReceived: from ", raw).start() < raw.index(b"\r\nFrom: ")
        (fid,) = msg.get_all("Feedback-ID")
        assert str(fid) == f"{tag}:{SENDER}:{account}:posthorn", fid
        assert key.encode() not in raw and key[:11].encode() not in raw, "never the key"
        assert dkim_ok(ph, raw)
        sig = re.sub(r"\s+", "", str(msg["DKIM-Signature"]))
        assert "feedback-id:feedback-id" in sig.split("h=")[1].split(";")[0], sig

    # An inbound copy gets its Received field too, naming the one address it is for.
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=10) as s:
        s.ehlo("sender.example.org")
        s.sendmail("x@sender.example.org", [f"support@{SENDER}"],
                   "From: x@sender.example.org\r\nTo: support@mail.example.com\r\n"
                   "Subject: a question\r\n\r\nHello\r\n")
    deadline = time.monotonic() + 10
    while not (items := ph.get("/v1/emails/inbound", key=key).json()["data"]):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    inbound = ph.get(f"/v1/emails/inbound/{items[0]['id']}", key=key).json()
    first = inbound["headers"][0]
    assert first["name"] == "Received", inbound["headers"]
    assert re.fullmatch(
        rf"from sender\.example\.org \(unknown \[127\.0\.0\.1\]\)\s+by posthorn\.test \(posthorn\) "
        rf"with ESMTP id {items[0]['id']}\s+for <support@mail\.example\.com>;\s+.+ \+0000",
        first["value"]), first

    if not sa:
        pytest.skip("spamassassin is not installed (scripts/install-deps.sh installs it)")
    runs = [spamassassin(raw) for raw in (api_raw, smtp_raw)]
    for run, raw, what in zip(runs, (api_raw, smtp_raw), ("api", "smtp")):
        report, err = run.communicate(raw, timeout=60)
        assert run.returncode == 0, err.decode()
        hit = rules_hit(report)
        print(what, sorted(hit))
        assert not hit & HEADER_RULES, (what, sorted(hit), report.decode(errors="replace"))
