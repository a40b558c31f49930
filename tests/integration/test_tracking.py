"""Open and click tracking (DESIGN §8): the pixel and the rewritten links in the message
as stored (API and SMTP submissions), the public endpoints, signed tokens (a forged one is 404, never a redirect)."""
import email
import email.message
import email.policy
import re
import smtplib
import urllib.parse

from support.domains import dns_env, verified_domain

SENDER = "mail.example.com"
HTML = ('<html><body><p>Hi <a href="https://shop.example/item?id=7&amp;ref=mail">item</a> '
        '<a href="mailto:help@example.com">mail us</a> <a href="#top">top</a> '
        '<a href="tel:+123">call</a></p></body></html>')


def setup_sender(posthorn_factory, dns, **env):
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SERVER_PUBLIC_URL": "http://127.0.0.1:1",
                               **env}).start()
    key = ph.account_with_key("acme")
    domain = verified_domain(ph, dns, key, SENDER)
    return ph, key, domain


def stored_parts(ph, em):
    raw = ph.stored_message(em)
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    plain, html = msg.get_body(("plain",)), msg.get_body(("html",))
    return (plain.get_content() if plain else "", html.get_content())


def path_of(url):
    return urllib.parse.urlsplit(url).path


def test_pixel_links_and_the_public_endpoints(posthorn_factory, dns):
    ph, key, _ = setup_sender(posthorn_factory, dns)
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "tracked",
                         "html": HTML, "text": "Plain https://shop.example/item stays.",
                         "tracking": {"open": True, "click": True}})
    em = r.json()["id"]
    text, html = stored_parts(ph, em)
    assert "https://shop.example/item stays." in text, "the text part is left alone"
    pixels = re.findall(r'<img src="(http://127\.0\.0\.1:1/t/o/[^"]+)"', html)
    assert len(pixels) == 1 and html.index(pixels[0]) < html.index("</body>")
    links = re.findall(r'href="(http://127\.0\.0\.1:1/t/c/[^"]+)"', html)
    assert len(links) == 1
    for kept in ('href="mailto:help@example.com"', 'href="#top"', 'href="tel:+123"'):
        assert kept in html

    assert ph.get(f"/v1/emails/{em}", key=key).json()["opened_at"] is None
    o = ph.get(path_of(pixels[0]), headers={"User-Agent": "MailApp/1"})
    assert o.status == 200 and o.headers["content-type"] == "image/gif"
    assert o.body.startswith(b"GIF89a") and len(o.body) == 43
    first_open = ph.get(f"/v1/emails/{em}", key=key).json()["opened_at"]
    assert first_open
    c = ph.get(path_of(links[0]))
    assert c.status == 302 and c.headers["location"] == "https://shop.example/item?id=7&ref=mail"
    ph.get(path_of(pixels[0]))
    e = ph.get(f"/v1/emails/{em}", key=key).json()
    assert e["clicked_at"] and e["opened_at"] == first_open, "the first open counts"
    db = ph.db()
    types = [t for (t,) in db.execute("SELECT type FROM events WHERE email_id = ? AND type LIKE "
                                      "'email.%ed' AND type IN ('email.opened', 'email.clicked') "
                                      "ORDER BY id", (em,))]
    assert types == ["email.opened", "email.clicked", "email.opened"], "every one is an event"
    (data,) = db.execute("SELECT data FROM events WHERE type = 'email.opened' ORDER BY id LIMIT 1").fetchone()
    assert '"user_agent":"MailApp/1"' in data and '"ip":"127.0.0.1"' in data


def test_forged_tokens_are_404_and_never_redirect(posthorn_factory, dns):
    ph, key, _ = setup_sender(posthorn_factory, dns)
    em = ph.request("POST", "/v1/emails", key=key,
                    body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "t",
                          "html": HTML, "tracking": {"click": True}}).json()["id"]
    _, html = stored_parts(ph, em)
    (link,) = re.findall(r'href="(http://127\.0\.0\.1:1/t/c/[^"]+)"', html)
    token = path_of(link)[len("/t/c/"):]
    payload, sig = token.split(".")
    altered_sig = sig[:-2] + ("AA" if sig[-2:] != "AA" else "BB")
    import base64
    evil = base64.urlsafe_b64encode(f"c\n{em}\nhttps://evil.example".encode()).decode().rstrip("=")
    for bad in (f"{payload}.{altered_sig}", f"{evil}.{sig}", "garbage", f"{payload}", ".", ""):
        r = ph.get(f"/t/c/{bad}")
        assert r.status == 404 and "location" not in r.headers, bad
    assert ph.get(f"/t/o/{token}").status == 404, "a click token is no open token"
    assert ph.get(f"/v1/emails/{em}", key=key).json()["clicked_at"] is None


def test_domain_tracking_is_the_default(posthorn_factory, dns):
    ph, key, domain = setup_sender(posthorn_factory, dns)
    ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
               body={"tracking": {"open_tracking": True}})
    em = ph.request("POST", "/v1/emails", key=key,
                    body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "t",
                          "html": HTML}).json()["id"]
    _, html = stored_parts(ph, em)
    assert "/t/o/" in html and "/t/c/" not in html
    off = ph.request("POST", "/v1/emails", key=key,
                     body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "t",
                           "html": HTML, "tracking": {"open": False}}).json()["id"]
    assert "/t/o/" not in stored_parts(ph, off)[1], "the request's setting wins"


def test_smtp_submitted_html_is_tracked_when_its_headers_ask(posthorn_factory, dns):
    ph, key, _ = setup_sender(posthorn_factory, dns,
                              POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS="true")
    ids = []
    for track in ("true", None):
        m = email.message.EmailMessage()
        m["From"], m["To"], m["Subject"] = f"a@{SENDER}", "u@example.net", f"smtp {track}"
        if track:
            m["X-Track-Opens"], m["X-Track-Clicks"] = track, track
        m.set_content("Plain https://shop.example/item stays.\n")
        m.add_alternative(HTML, subtype="html", charset="utf-8")
        with smtplib.SMTP("127.0.0.1", ph.submission_port, timeout=10) as s:
            s.login(key, key)
            s.send_message(m)
        listed = ph.get(f"/v1/email?search=smtp%20{track}", key=key).json()["data"]
        assert len(listed) == 1
        ids.append(listed[0]["id"])

    text, html = stored_parts(ph, ids[0])
    assert "https://shop.example/item stays." in text, "the text part is left alone"
    assert len(re.findall(r'<img src="http://127\.0\.0\.1:1/t/o/[^"]+"', html)) == 1
    links = re.findall(r'href="(http://127\.0\.0\.1:1/t/c/[^"]+)"', html)
    assert len(links) == 1 and 'href="mailto:help@example.com"' in html
    c = ph.get(path_of(links[0]))
    assert c.status == 302 and c.headers["location"] == "https://shop.example/item?id=7&ref=mail"
    raw = ph.stored_message(ids[0])
    assert b"X-Track-" not in raw, "the tracking headers are removed"

    _, untracked = stored_parts(ph, ids[1])
    assert "/t/" not in untracked and 'href="https://shop.example/item?id=7&amp;ref=mail"' in untracked


def test_a_link_with_line_breaks_never_splits_the_redirect(posthorn_factory, dns):
    # An href may hold a line break (HTML allows it in attribute values); the Location of the
    # redirect must not: the server drops CR and LF from header values, as browsers drop them
    # from URLs, so no header can be injected through a link.
    ph, key, _ = setup_sender(posthorn_factory, dns)
    html = '<p><a href="https://shop.example/a&#13;&#10;Set-Cookie: evil=1">x</a></p>'
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "crlf",
                         "html": html, "tracking": {"click": True}})
    assert r.status == 200, r.body
    _, stored = stored_parts(ph, r.json()["id"])
    (link,) = re.findall(r'href="(http://127\.0\.0\.1:1/t/c/[^"]+)"', stored)
    c = ph.get(path_of(link))
    assert c.status == 302
    assert "set-cookie" not in {k.lower() for k in c.headers}
    assert "\r" not in c.headers["location"] and "\n" not in c.headers["location"]
    assert c.headers["location"].startswith("https://shop.example/a")


def test_a_link_is_read_by_every_node_that_shares_the_master_key(posthorn_factory, dns, tmp_path):
    """server.master_key_file: the first node makes the key (mode 0600) where it is told; the
    tracking links it hands out are signed with a key derived from it, so another node on
    the same store with the same key file follows them, and one with another key does not."""
    import os
    import stat
    shared = tmp_path / "shared" / "master.key"
    shared.parent.mkdir()
    a, key, _ = setup_sender(posthorn_factory, dns, POSTHORN_SERVER_MASTER_KEY_FILE=str(shared))
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o600 and len(shared.read_bytes()) == 32
    assert not (a.data_dir / "master.key").exists(), "not in the data dir when told elsewhere"
    assert not (a.data_dir / "tracking.key").exists(), "derived from the master key"
    em = a.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "tracked",
                         "html": HTML, "tracking": {"click": True}}).json()["id"]
    link = path_of(re.findall(r'href="(http://127\.0\.0\.1:1/t/c/[^"]+)"',
                              stored_parts(a, em)[1])[0])
    assert a.get(link).status == 302
    master = shared.read_bytes()
    assert a.stop() == 0, a.output()

    # Another node (its own data dir) on the same store, one after the other (a SQLite store
    # is one process's, so the nodes take turns here).
    store = {"POSTHORN_DATABASE_URL": a.database_url}
    b = posthorn_factory(env={**store, "POSTHORN_SERVER_MASTER_KEY_FILE": str(shared)},
                         name="b").start()
    r = b.get(link)
    assert r.status == 302 and r.headers["location"] == "https://shop.example/item?id=7&ref=mail"
    assert shared.read_bytes() == master, "an existing key is read, never replaced"
    assert b.stop() == 0, b.output()

    c = posthorn_factory(env=store, name="c").start()  # a master key of its own
    assert c.get(link).status == 404
    assert (c.data_dir / "master.key").read_bytes() != master
