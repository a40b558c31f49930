"""Stored templates (docs/templates.md): /v1/templates create, list, read, update, delete with
their validation errors and another account's template 404; a preview (render) that sends
nothing; a template with a section over a list and an inverted section sent by name and
delivered to a real SMTP sink (aiosmtpd) with the rendered bodies seen there; a missing
variable refused with TEMPLATE_VARIABLE_MISSING naming it and nothing stored; a default
used; hostile HTML in a variable escaped in {{var}} and kept in {{{var}}}."""
import email
import email.policy
import re

from support.domains import dns_env, verified_domain
from support.posthorn import api_error as error, free_port, wait_for
from support.smtp_sink import SmtpSink

SENDER = "mail.example.com"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FIELDS = {"id", "name", "subject", "html", "text", "variables", "created_at", "updated_at"}

ORDER = {
    "name": "order-shipped",
    "subject": "Order {{order.id}} shipped, {{name}}",
    "html": "<h1>Hi {{name}}</h1><ul>{{#items}}<li>{{title}} x{{qty}}</li>{{/items}}</ul>"
            "{{^items}}<p>No items.</p>{{/items}}{{{footer}}}",
    "text": "Hi {{name}}\n{{#items}}- {{title}} x{{qty}}\n{{/items}}{{^items}}No items.\n{{/items}}"
            "{{sign}}",
    "variables": {"sign": "The shop", "footer": "<p>footer</p>"},
}


def create(ph, key, body):
    return ph.request("POST", "/v1/templates", key=key, body=body)


def count_emails(ph, key) -> int:
    r = ph.get("/v1/email", key=key)
    assert r.status == 200, r
    return r.json()["total"]


def test_crud_validation_and_accounts(server):
    key = server.account_with_key("acme")
    other = server.account_with_key("other")
    assert error(server.get("/v1/templates"), 401, "UNAUTHORIZED")

    r = create(server, key, ORDER)
    assert r.status == 201, r
    t = r.json()
    assert set(t) == FIELDS, t
    assert t["id"].startswith("tpl_") and t["name"] == "order-shipped"
    assert t["html"] == ORDER["html"] and t["text"] == ORDER["text"], "kept as given"
    assert t["variables"] == ORDER["variables"]
    assert ISO.match(t["created_at"]) and t["created_at"] == t["updated_at"]

    # Read by id and by name; listed with the pagination of every list.
    assert server.get(f"/v1/templates/{t['id']}", key=key).json() == t
    assert server.get("/v1/templates/order-shipped", key=key).json() == t
    r = create(server, key, {"name": "plain", "subject": "s", "text": "t"})
    assert r.status == 201, r
    plain = r.json()
    assert plain["html"] is None and plain["variables"] == {}
    page = server.get("/v1/templates?limit=1", key=key).json()
    assert [x["id"] for x in page["data"]] == [plain["id"]], "newest first"
    assert page["pagination"] == {"page": 1, "limit": 1, "total": 2, "total_pages": 2,
                                  "has_more": True}
    page = server.get("/v1/templates?sort_order=asc", key=key).json()
    assert [x["id"] for x in page["data"]] == [t["id"], plain["id"]]
    assert "limit" in error(server.get("/v1/templates?limit=0", key=key))

    # Validation: each refused, nothing stored.
    for body, words in [
        ({"subject": "s", "text": "t"}, "name is required"),
        ({"name": "x", "text": "t"}, "subject is required"),
        ({"name": "x", "subject": "s"}, "html or text is required"),
        ({"name": "x", "subject": "s", "html": "", "text": None}, "html or text is required"),
        ({"name": "tpl_x", "subject": "s", "text": "t"}, "tpl_"),
        ({"name": "", "subject": "s", "text": "t"}, "name"),
        ({"name": "a/b", "subject": "s", "text": "t"}, "'/'"),
        ({"name": "x", "subject": "a\nb", "text": "t"}, "line breaks"),
        ({"name": "x", "subject": "s", "text": 5}, "text must be"),
        ({"name": "x", "subject": "s", "text": "t", "variables": [1]}, "variables must be"),
        ({"name": "x", "subject": "s", "text": "t", "colour": 1}, "unknown field 'colour'"),
        ({"name": "x", "subject": "s", "html": "{{#open}}never closed"}, "html: "),
        ({"name": "x", "subject": "{{oops}", "text": "t"}, "subject: "),
        ({"name": "x", "subject": "s", "text": "{{> partial}}"}, "partials"),
        ({"name": "x", "subject": "s", "text": "x" * (512 * 1024 + 1)}, "larger than"),
    ]:
        assert words in error(create(server, key, body)), body
    assert error(create(server, key, {**ORDER}), 409, "CONFLICT"), "a name is unique"
    assert server.get("/v1/templates", key=key).json()["pagination"]["total"] == 2

    # PATCH: fields given replace, a part set to null goes; the result must still hold.
    r = server.request("PATCH", f"/v1/templates/{plain['id']}", key=key,
                       body={"html": "<b>{{x}}</b>", "text": None, "variables": {"x": "1"}})
    assert r.status == 200, r
    patched = r.json()
    assert patched["html"] == "<b>{{x}}</b>" and patched["text"] is None
    assert patched["variables"] == {"x": "1"} and patched["subject"] == "s"
    assert patched["created_at"] == plain["created_at"]
    assert "html or text is required" in error(server.request(
        "PATCH", f"/v1/templates/{plain['id']}", key=key, body={"html": None}))
    assert "html: " in error(server.request(
        "PATCH", "/v1/templates/plain", key=key, body={"html": "{{/x}}"}))
    error(server.request("PATCH", "/v1/templates/plain", key=key,
                         body={"name": "order-shipped"}), 409, "CONFLICT")
    assert server.get("/v1/templates/plain", key=key).json() == patched, "unchanged"

    # Another account sees none of them; the same name is free there.
    for path in (f"/v1/templates/{t['id']}", "/v1/templates/order-shipped"):
        error(server.get(path, key=other), 404, "NOT_FOUND")
        error(server.request("PATCH", path, key=other, body={"subject": "x"}), 404, "NOT_FOUND")
        error(server.request("DELETE", path, key=other), 404, "NOT_FOUND")
        error(server.request("POST", path + "/render", key=other, body={}), 404, "NOT_FOUND")
    assert server.get("/v1/templates", key=other).json()["pagination"]["total"] == 0
    assert create(server, other, ORDER).status == 201

    # A sending key sends with templates but does not manage them.
    r = server.request("POST", "/v1/api-keys", key=key,
                       body={"name": "sender", "permission": "sending"})
    assert r.status == 201, r
    sending = r.json()["key"]
    assert "manage templates" in error(server.get("/v1/templates", key=sending), 403,
                                       "FORBIDDEN")

    r = server.request("DELETE", f"/v1/templates/{plain['id']}", key=key)
    assert r.status == 200 and r.json() == {"id": plain["id"], "deleted": True}, r
    error(server.get(f"/v1/templates/{plain['id']}", key=key), 404, "NOT_FOUND")
    error(server.request("DELETE", f"/v1/templates/{plain['id']}", key=key), 404, "NOT_FOUND")
    assert server.get(f"/v1/templates/{t['id']}", key=other).status == 404


def test_render_preview_escapes_and_names_missing_variables(server):
    key = server.account_with_key("acme")
    t = create(server, key, ORDER).json()
    hostile = "<script>alert('x')</script>"
    r = server.request("POST", f"/v1/templates/{t['id']}/render", key=key, body={"variables": {
        "name": hostile, "order": {"id": 7},
        "items": [{"title": "Tea & Jam", "qty": 2}, {"title": "Чай 東京", "qty": 1}],
        "footer": "<hr>raw"}})
    assert r.status == 200, r
    out = r.json()
    assert out["subject"] == f"Order 7 shipped, {hostile}", "a subject is not HTML"
    assert out["html"] == ("<h1>Hi &lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;</h1>"
                           "<ul><li>Tea &amp; Jam x2</li><li>Чай 東京 x1</li></ul><hr>raw")
    assert out["text"] == f"Hi {hostile}\n- Tea & Jam x2\n- Чай 東京 x1\nThe shop", "a default"

    r = server.request("POST", "/v1/templates/order-shipped/render", key=key,
                       body={"variables": {"name": "Ana", "order": {"id": 1}, "items": []}})
    assert r.status == 200, r
    assert "<p>No items.</p>" in r.json()["html"] and "No items.\n" in r.json()["text"]

    msg = error(server.request("POST", "/v1/templates/order-shipped/render", key=key,
                               body={"variables": {"name": "Ana", "items": []}}),
                400, "TEMPLATE_VARIABLE_MISSING")
    assert "'order.id'" in msg and "order-shipped" in msg, msg
    assert "unknown field" in error(server.request(
        "POST", "/v1/templates/order-shipped/render", key=key, body={"vars": {}}))
    assert count_emails(server, key) == 0, "a preview sends nothing"


def test_send_with_a_template_is_delivered_rendered(posthorn_factory, dns):
    port = free_port()
    dns.mx("sink.example.net", "mx.sink.example.net", 10)
    dns.host("mx.sink.example.net", "127.0.0.2")
    sink = SmtpSink("127.0.0.2", port).start()
    try:
        ph = posthorn_factory(env={**dns_env(dns),
                                   "POSTHORN_DELIVERY_MX_PORT": str(port)}).start()
        key = ph.account_with_key("acme")
        verified_domain(ph, dns, key, SENDER)
        assert create(ph, key, ORDER).status == 201
        send = {"from": f"shop@{SENDER}", "to": "ana@sink.example.net",
                "template": "order-shipped"}

        # Refused first: each stores nothing.
        msg = error(ph.request("POST", "/v1/emails", key=key, body={
            **send, "variables": {"order": {"id": 9}, "items": []}}),
            400, "TEMPLATE_VARIABLE_MISSING")
        assert "'name'" in msg, msg
        assert "cannot both be given" in error(ph.request("POST", "/v1/emails", key=key, body={
            **send, "subject": "x", "variables": {}}))
        assert "variables must be an object" in error(ph.request(
            "POST", "/v1/emails", key=key, body={**send, "variables": "x"}))
        assert "only with a template" in error(ph.request("POST", "/v1/emails", key=key, body={
            "from": f"shop@{SENDER}", "to": "ana@sink.example.net", "subject": "s",
            "text": "t", "variables": {}}))
        error(ph.request("POST", "/v1/emails", key=key, body={**send, "template": "nope"}),
              404, "NOT_FOUND")
        assert "the rendered subject" in error(ph.request("POST", "/v1/emails", key=key, body={
            **send, "variables": {"name": "a\r\nBcc: x@evil.example", "order": {"id": 1},
                                  "items": []}}))
        assert count_emails(ph, key) == 0

        hostile = "<img src=x onerror=alert(1)>"
        r = ph.request("POST", "/v1/emails", key=key, body={**send, "variables": {
            "name": hostile, "order": {"id": 42},
            "items": [{"title": "Tea", "qty": 2}, {"title": "Jam", "qty": 1}]}})
        assert r.status == 200, r
        em = r.json()["id"]
        (got,) = sink.wait_messages(1)
        assert got.rcpt_tos == ["ana@sink.example.net"]
        m = email.message_from_bytes(got.data, policy=email.policy.default)
        assert m["Subject"] == f"Order 42 shipped, {hostile}"
        html = m.get_body(("html",)).get_content()
        text = m.get_body(("plain",)).get_content()
        assert "<h1>Hi &lt;img src=x onerror=alert(1)&gt;</h1>" in html, html
        assert "<ul><li>Tea x2</li><li>Jam x1</li></ul>" in html and "No items" not in html
        assert "<p>footer</p>" in html, "a default, raw in {{{ }}}"
        assert "- Tea x2\n- Jam x1\nThe shop" in text.replace("\r\n", "\n"), text
        wait_for(lambda: ph.get(f"/v1/emails/{em}", key=key).json()["status"] == "DELIVERED",
                 timeout=20, what="DELIVERED")
        assert ph.get(f"/v1/emails/{em}", key=key).json()["subject"] == m["Subject"]
    finally:
        sink.stop()
