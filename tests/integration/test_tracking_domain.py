"""A tracking domain of one's own (issue 29, point 4; docs/tracking.md): each domain has a
`tracking` record, a CNAME <label>.<domain> → tracking.cname_target, verified through dnsmasq
with the other records but not counted in the domain's status. Once it is VERIFIED, tracked
mail from that domain has its pixel and links under http://<label>.<domain>; requests with
that Host, sent to the server's real socket, are served the tracking paths and nothing else.
An unverified one keeps public_url."""
import email
import email.policy
import re
import urllib.parse

from support.domains import dns_env, publish, verified_domain
from support.posthorn import api_error as error

SENDER = "mail.example.com"
OTHER = "other.example.com"
TARGET = "track.posthorn.test"
PUBLIC = "http://127.0.0.1:1"
HTML = '<html><body><p><a href="https://shop.example/item?id=7">item</a></p></body></html>'


def html_of(ph, em) -> str:
    msg = email.message_from_bytes(ph.stored_message(em), policy=email.policy.default)
    return msg.get_body(("html",)).get_content()


def send(ph, key, sender):
    r = ph.request("POST", "/v1/emails", key=key,
                   body={"from": f"a@{sender}", "to": "u@example.net", "subject": "tracked",
                         "html": HTML, "tracking": {"open": True, "click": True}})
    assert r.status == 200, r
    return r.json()["id"]


def urls(html, base):
    pixels = re.findall(r'<img src="(' + re.escape(base) + r'/t/o/[^"]+)"', html)
    links = re.findall(r'href="(' + re.escape(base) + r'/t/c/[^"]+)"', html)
    return pixels, links


def path_of(url):
    return urllib.parse.urlsplit(url).path


def test_a_verified_tracking_host_carries_the_links(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SERVER_PUBLIC_URL": PUBLIC,
                               "POSTHORN_TRACKING_CNAME_TARGET": TARGET}).start()
    key = ph.account_with_key("acme")
    other_key = ph.account_with_key("other")

    # The record, with the default label; the tracking CNAME published in dnsmasq.
    r = ph.request("POST", "/v1/domains", key=key, body={"domain": SENDER})
    assert r.status == 201, r
    domain = r.json()
    assert domain["tracking"]["label"] == "links"
    assert domain["records"]["tracking"] == {"type": "CNAME", "host": f"links.{SENDER}",
                                             "value": TARGET}, domain["records"]
    publish(dns, ph, domain, restart=False)
    dns.cname(f"links.{SENDER}", TARGET)
    dns.host(TARGET, "127.0.0.12")  # a dnsmasq cname target must be a name it knows
    dns.restart()
    v = ph.request("POST", f"/v1/domains/{domain['id']}/verify", key=key).json()
    assert v["status"] == "VERIFIED", v
    assert v["records"]["tracking"]["status"] == "VERIFIED", v["records"]["tracking"]
    assert v["records"]["tracking"]["found"] == [TARGET]
    # Another domain without the CNAME: VERIFIED all the same, its tracking record not.
    other = verified_domain(ph, dns, key, OTHER)
    assert other["records"]["tracking"]["status"] == "NOT_FOUND", other["records"]

    # Mail from the domain: the pixel and the link under its own host.
    em = send(ph, key, SENDER)
    pixels, links = urls(html_of(ph, em), f"http://links.{SENDER}")
    assert len(pixels) == 1 and len(links) == 1, html_of(ph, em)
    host = {"Host": f"links.{SENDER}"}
    o = ph.get(path_of(pixels[0]), headers={**host, "User-Agent": "MailApp/1"})
    assert o.status == 200 and o.headers["content-type"] == "image/gif", o
    assert o.body.startswith(b"GIF89a")
    c = ph.get(path_of(links[0]), headers=host)
    assert c.status == 302 and c.headers["location"] == "https://shop.example/item?id=7", c
    e = ph.get(f"/v1/emails/{em}", key=key).json()
    assert e["opened_at"] and e["clicked_at"], e

    # The API is not served on the tracking host, whatever the key; on other hosts it is.
    for method, path in (("GET", "/v1/domains"), ("POST", "/v1/emails"), ("GET", "/nope")):
        msg = error(ph.request(method, path, key=key, headers=host,
                               body={} if method == "POST" else None), 404, "NOT_FOUND")
        assert msg == f"no route for {path}", msg
    error(ph.request("GET", "/v1/domains", headers=host), 404, "NOT_FOUND")
    assert ph.request("GET", "/v1/domains", key=key,
                      headers={"Host": f"links.{OTHER}"}).status == 200, "not verified"
    assert ph.request("GET", "/v1/domains", key=key).status == 200
    assert ph.get(path_of(pixels[0])).status == 200, "the tracking paths on any host"

    # Mail from the domain whose tracking host is not verified keeps public_url.
    em2 = send(ph, key, OTHER)
    pixels2, links2 = urls(html_of(ph, em2), PUBLIC)
    assert len(pixels2) == 1 and len(links2) == 1, html_of(ph, em2)
    assert f"links.{OTHER}" not in html_of(ph, em2)

    # A new label: a new record to verify again; until then public_url, and the old host
    # is a host like any other.
    error(ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                     body={"tracking": {"label": "a_b"}}), 400, "VALIDATION_ERROR")
    error(ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                     body={"tracking": {"label": 7}}), 400, "VALIDATION_ERROR")
    error(ph.request("PATCH", f"/v1/domains/{domain['id']}", key=other_key,
                     body={"tracking": {"label": "go"}}), 404, "NOT_FOUND")
    got = ph.get(f"/v1/domains/{domain['id']}", key=key).json()
    assert got["tracking"]["label"] == "links", "the refused ones changed nothing"
    assert got["records"]["tracking"]["status"] == "VERIFIED"
    r = ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                   body={"tracking": {"label": "Go"}})
    assert r.status == 200, r
    got = ph.get(f"/v1/domains/{domain['id']}", key=key).json()
    assert got["tracking"]["label"] == "go"
    assert got["records"]["tracking"] == {"type": "CNAME", "host": f"go.{SENDER}",
                                          "value": TARGET}, got["records"]["tracking"]
    assert got["status"] == "VERIFIED"
    em3 = send(ph, key, SENDER)
    assert len(urls(html_of(ph, em3), PUBLIC)[0]) == 1, html_of(ph, em3)
    assert ph.request("GET", "/v1/domains", key=key, headers=host).status == 200
    dns.cname(f"go.{SENDER}", TARGET)
    dns.restart()
    v = ph.request("POST", f"/v1/domains/{domain['id']}/verify", key=key).json()
    assert v["records"]["tracking"]["status"] == "VERIFIED", v["records"]["tracking"]
    em4 = send(ph, key, SENDER)
    assert len(urls(html_of(ph, em4), f"http://go.{SENDER}")[1]) == 1, html_of(ph, em4)
    error(ph.request("GET", "/v1/domains", key=key, headers={"Host": f"go.{SENDER}"}), 404,
          "NOT_FOUND")


def test_a_tracking_label_is_chosen_at_creation(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns), "POSTHORN_SERVER_PUBLIC_URL": PUBLIC}).start()
    key = ph.account_with_key("acme")
    r = ph.request("POST", "/v1/domains", key=key,
                   body={"domain": SENDER, "tracking": {"label": "Click-1"}})
    assert r.status == 201, r
    d = r.json()
    assert d["tracking"]["label"] == "click-1"
    # tracking.cname_target unset: the host of public_url.
    assert d["records"]["tracking"] == {"type": "CNAME", "host": f"click-1.{SENDER}",
                                        "value": "127.0.0.1"}, d["records"]["tracking"]
    for body, why in (({"tracking": {"label": "a.b"}}, "letters, digits and hyphens"),
                      ({"tracking": {"label": ""}}, "1 to 63"),
                      ({"tracking": {"label": "x" * 64}}, "1 to 63"),
                      ({"tracking": {"label": "-x"}}, "hyphen"),
                      ({"tracking": {"labels": "x"}}, "unknown field 'tracking.labels'"),
                      ({"tracking": "x"}, "tracking must be an object")):
        msg = error(ph.request("POST", "/v1/domains", key=key,
                               body={"domain": OTHER, **body}), 400, "VALIDATION_ERROR")
        assert why in msg, (body, msg)
    msg = error(ph.request("POST", "/v1/domains", key=key,
                           body={"domain": ("a" * 60 + ".") * 4 + "example",
                                 "tracking": {"label": "links"}}), 400, "VALIDATION_ERROR")
    assert "253" in msg, msg
    names = [x["domain"] for x in ph.get("/v1/domains", key=key).json()["data"]]
    assert names == [SENDER], "the refused ones made nothing"
