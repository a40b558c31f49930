"""docs/openapi.yaml against the server (README, docs/api.md): the document validates as
OpenAPI 3.1 with @apidevtools/swagger-parser; every route the server has
(src/api/v1.cpp) is in it with its method; and real answers of every /v1 endpoint —
successes and errors — match the schemas it gives for their status (Ajv, JSON Schema
2020-12), through tests/node/openapi_check.js."""
import json
import pathlib
import re
import shutil
import smtplib
import subprocess

import pytest

from support.domains import dns_env, verified_domain

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "openapi.yaml"
CHECK = ROOT / "tests" / "node" / "openapi_check.js"
SENDER = "mail.example.com"


def node_check(answers: list[dict]) -> dict:
    if not shutil.which("node"):
        pytest.fail("node is not installed (scripts/install-deps.sh installs it)")
    for pkg in ("@apidevtools/swagger-parser", "ajv", "ajv-formats"):
        if not (ROOT / "tests" / "node" / "node_modules" / pkg).is_dir():
            pytest.fail(f"the npm package {pkg} is not in tests/node/node_modules "
                        "(scripts/install-deps.sh installs it)")
    r = subprocess.run(["node", str(CHECK)], input=json.dumps({"spec": str(SPEC),
                                                                "answers": answers}),
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.strip().splitlines()
    assert lines, (r.returncode, r.stderr)
    return json.loads(lines[-1])


def server_routes() -> set[str]:
    """The routes src/api/v1.cpp adds: "METHOD /path"."""
    source = (ROOT / "src" / "api" / "v1.cpp").read_text()
    routes = set(re.findall(r'add\("([A-Z]+)", "(/v1[^"]*)"', source))
    assert len(routes) > 15, routes
    return {f"{m} {p}" for m, p in routes}


class Recorder:
    """Makes requests and keeps each answer for the check."""

    def __init__(self, ph):
        self.ph = ph
        self.answers = []

    def __call__(self, method, path, key=None, body=None, expect=None, **kw):
        r = self.ph.request(method, path, key=key, body=body, **kw)
        if expect is not None:
            assert r.status == expect, (method, path, r)
        parsed = None
        if r.headers.get("content-type", "").startswith("application/json"):
            parsed = r.json()
        self.answers.append({"method": method, "path": path, "status": r.status,
                             "body": parsed})
        return r


def test_the_document_validates_and_lists_every_route():
    out = node_check([])
    assert out["ok"], out["errors"]
    documented = set(out["operations"])
    missing = server_routes() - documented
    assert not missing, f"routes of the server missing from docs/openapi.yaml: {sorted(missing)}"
    # The check can fail: an answer the schema refuses, and a path the document lacks.
    bad = node_check([{"method": "GET", "path": "/v1/domains", "status": 200,
                       "body": {"data": "not a list"}},
                      {"method": "GET", "path": "/v1/nowhere", "status": 200, "body": {}}])
    assert not bad["ok"] and len(bad["errors"]) == 2, bad


def test_answers_match_the_document(posthorn_factory, dns):
    ph = posthorn_factory(env={**dns_env(dns),
                               "POSTHORN_WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true"}).start()
    key = ph.account_with_key("acme")
    other = ph.account_with_key("other")
    call = Recorder(ph)

    call("GET", "/healthz", expect=200)
    call("GET", "/v1/domains", expect=401)
    call("GET", "/v1/domains", key="ph_nope", expect=401)

    # Domains.
    domain = verified_domain(ph, dns, key, SENDER)
    d = call("POST", "/v1/domains", key=key, body={"domain": "second.example.com"},
             expect=201).json()
    call("POST", "/v1/domains", key=key, body={"domain": "second.example.com"}, expect=409)
    call("POST", "/v1/domains", key=key, body={"domain": "-bad-"}, expect=400)
    call("POST", "/v1/domains", key=key, body="{not json", expect=400,
         headers={"Content-Type": "application/json"})
    call("GET", "/v1/domains?limit=1", key=key, expect=200)
    call("GET", "/v1/domains?limit=0", key=key, expect=400)
    call("GET", f"/v1/domains/{d['id']}", key=key, expect=200)
    call("GET", f"/v1/domains/{d['id']}", key=other, expect=404)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"tracking": {"open_tracking": True}},
         expect=200)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"nope": 1}, expect=400)
    # The return path (a label given at creation, changed, refused when bad).
    call("POST", "/v1/domains", key=key,
         body={"domain": "third.example.com", "return_path": {"label": "rp"}}, expect=201)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"return_path": {"label": "mail-from"}},
         expect=200)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"return_path": {"label": "a_b"}},
         expect=400)
    call("POST", f"/v1/domains/{d['id']}/verify", key=key, expect=200)
    call("PUT", f"/v1/domains/{d['id']}", key=key, body={}, expect=405)
    call("POST", "/v1/domains", key=key,
         body={"domain": "fourth.example.com", "tracking": {"label": "go"}}, expect=201)
    call("POST", "/v1/domains", key=key,
         body={"domain": "fifth.example.com", "tracking": {"label": "a.b"}}, expect=400)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"tracking": {"label": "clicks"}},
         expect=200)
    call("PATCH", f"/v1/domains/{d['id']}", key=key, body={"tracking": {"label": "-x"}},
         expect=400)
    call("POST", f"/v1/domains/{d['id']}/dkim/rotate", key=key, expect=200)
    call("POST", f"/v1/domains/{d['id']}/dkim/rotate", key=key, expect=409)
    call("POST", f"/v1/domains/{d['id']}/dkim/rotate", key=other, expect=404)
    call("POST", f"/v1/domains/{d['id']}/dkim/rotate", key=key, body={"x": 1}, expect=400)

    # Sending and reading sent mail.
    sent = call("POST", "/v1/emails", key=key,
                body={"from": f"Acme <a@{SENDER}>", "to": ["u@example.net"], "subject": "Hi",
                      "text": "hello", "html": "<p>hello</p>"}, expect=200).json()
    call("POST", "/v1/emails", key=key,
         body={"from": "a@second.example.com", "to": "u@example.net", "subject": "x",
               "text": "x"}, expect=403)
    call("POST", "/v1/emails", key=key, body={"from": f"a@{SENDER}"}, expect=400)
    good = {"from": f"a@{SENDER}", "to": "u@example.net", "subject": "b", "text": "b"}
    call("POST", "/v1/emails/batch", key=key, body=[good, {"from": f"a@{SENDER}"}], expect=200)
    call("POST", "/v1/emails/batch?atomic=true", key=key, body=[good, {"to": "x"}], expect=422)
    call("POST", "/v1/emails/batch", key=key, body=[], expect=400)
    call("GET", f"/v1/emails/{sent['id']}", key=key, expect=200)
    call("GET", f"/v1/emails/{sent['id']}", key=other, expect=404)
    call("GET", "/v1/email?limit=5", key=key, expect=200)
    call("GET", "/v1/emails/envelope", key=key, expect=200)
    call("GET", "/v1/emails/inbound", key=key, expect=200)
    call("GET", "/v1/emails/inbound/in_00000000000000000000000000", key=key, expect=404)
    # An inbound email with its authentication results (SPF none: no record in dnsmasq).
    assert ph.request("PATCH", f"/v1/domains/{domain['id']}", key=key,
                      body={"config": {"inbound": True}}).status == 200
    with smtplib.SMTP("127.0.0.1", ph.inbound_port, timeout=30) as s:
        s.sendmail("ann@sender.example.org", [f"support@{SENDER}"],
                   b"From: ann@sender.example.org\r\nSubject: in\r\n\r\nhi\r\n")
    (inbound,) = call("GET", "/v1/emails/inbound", key=key, expect=200).json()["data"]
    assert inbound["authentication"]["spf"]["result"] == "none", inbound
    call("GET", f"/v1/emails/inbound/{inbound['id']}", key=key, expect=200)
    call("GET", "/v1/queue", key=key, expect=200)
    call("GET", "/v1/stats", key=key, expect=200)
    call("GET", f"/v1/stats?interval=hour&domain={SENDER}", key=key, expect=200)
    call("GET", "/v1/stats?interval=week", key=key, expect=400)
    call("GET", f"/v1/stats?domain={SENDER}", key=other, expect=404)
    call("GET", "/v1/logs?limit=3", key=key, expect=200)

    # Webhooks.
    wh = call("POST", "/v1/webhooks", key=key,
              body={"url": "http://127.0.0.1:9/hook", "events": ["domain.verified"]},
              expect=200).json()
    call("POST", "/v1/webhooks", key=key, body={"url": "ftp://x", "events": []}, expect=400)
    call("GET", "/v1/webhooks", key=key, expect=200)
    call("GET", f"/v1/webhooks/{wh['id']}", key=key, expect=200)
    call("PATCH", f"/v1/webhooks/{wh['id']}", key=key, body={"status": False}, expect=200)
    call("GET", f"/v1/webhooks/{wh['id']}/deliveries", key=key, expect=200)
    call("POST", f"/v1/webhooks/{wh['id']}/rotate-secret", key=key, expect=200)
    call("POST", f"/v1/webhooks/{wh['id']}/replay", key=key,
         body={"failed_since": "2026-01-01T00:00:00Z"}, expect=200)
    call("POST", f"/v1/webhooks/{wh['id']}/replay", key=key, body={}, expect=400)
    call("POST", f"/v1/webhooks/{wh['id']}/replay", key=key, body={"event_id": "evt_x"},
         expect=404)
    call("GET", f"/v1/webhooks/{wh['id']}", key=other, expect=404)
    call("DELETE", f"/v1/webhooks/{wh['id']}", key=key, expect=200)

    # API keys, and what a sending key is refused.
    made = call("POST", "/v1/api-keys", key=key,
                body={"name": "shop", "permission": "sending", "domain": SENDER},
                expect=201).json()
    call("POST", "/v1/api-keys", key=key, body={"name": "x", "permission": "all"}, expect=400)
    call("GET", "/v1/api-keys", key=key, expect=200)
    call("GET", "/v1/domains", key=made["key"], expect=403)
    call("POST", "/v1/emails", key=made["key"],
         body={"from": "a@second.example.com", "to": "u@example.net", "subject": "x",
               "text": "x"}, expect=403)
    call("DELETE", f"/v1/api-keys/{made['id']}", key=key, expect=200)
    call("DELETE", "/v1/api-keys/key_00000000000000000000000000", key=key, expect=404)

    # Test mode: a test key (its `test` in the key's schema), a send from the sandbox sender,
    # the email and the list with their `test`, and a live key refused the sandbox.
    tk = call("POST", "/v1/api-keys", key=key,
              body={"name": "try", "permission": "full", "test": True}, expect=201).json()
    assert tk["test"] is True
    call("POST", "/v1/api-keys", key=key, body={"name": "x", "permission": "full", "test": "y"},
         expect=400)
    trial = call("POST", "/v1/emails", key=tk["key"],
                 body={"from": "sandbox@test.posthorn", "to": "bounced@test.posthorn",
                       "subject": "Hi", "text": "x"}, expect=200).json()
    assert call("GET", f"/v1/emails/{trial['id']}", key=tk["key"], expect=200).json()["test"]
    call("GET", "/v1/email?status=BOUNCED", key=key, expect=200)
    call("POST", "/v1/emails", key=key,
         body={"from": "sandbox@test.posthorn", "to": "delivered@test.posthorn",
               "subject": "Hi", "text": "x"}, expect=403)

    # Suppressions.
    call("POST", "/v1/suppressions", key=key, body={"email": "gone@example.net"}, expect=200)
    call("POST", "/v1/suppressions", key=key, body={"email": "gone@example.net"}, expect=409)
    call("POST", "/v1/suppressions", key=key, body={"email": "nope"}, expect=400)
    call("GET", "/v1/suppressions?reason=manual", key=key, expect=200)
    call("GET", "/v1/suppressions?reason=bogus", key=key, expect=400)
    call("GET", "/v1/suppressions/gone@example.net", key=key, expect=200)
    call("DELETE", "/v1/suppressions/gone@example.net", key=key, expect=200)
    call("GET", "/v1/suppressions/gone@example.net", key=key, expect=404)

    # Templates, and a send with one.
    t = call("POST", "/v1/templates", key=key,
             body={"name": "welcome", "subject": "Hi {{name}}",
                   "html": "<p>{{#items}}{{.}} {{/items}}</p>", "variables": {"items": []}},
             expect=201).json()
    call("POST", "/v1/templates", key=key, body={"name": "welcome", "subject": "s", "text": "t"},
         expect=409)
    call("POST", "/v1/templates", key=key, body={"name": "x", "subject": "s", "html": "{{#a}}"},
         expect=400)
    call("GET", "/v1/templates?limit=5", key=key, expect=200)
    call("GET", f"/v1/templates/{t['id']}", key=key, expect=200)
    call("PATCH", "/v1/templates/welcome", key=key, body={"text": "Hi {{name}}"}, expect=200)
    call("POST", "/v1/templates/welcome/render", key=key,
         body={"variables": {"name": "Ana", "items": ["a", "b"]}}, expect=200)
    call("POST", "/v1/templates/welcome/render", key=key, body={}, expect=400)
    call("POST", "/v1/emails", key=key,
         body={"from": f"a@{SENDER}", "to": "u@example.net", "template": "welcome",
               "variables": {"name": "Ana"}}, expect=200)
    call("POST", "/v1/emails", key=key,
         body={"from": f"a@{SENDER}", "to": "u@example.net", "template": "welcome"},
         expect=400)
    call("POST", "/v1/emails", key=key,
         body={"from": f"a@{SENDER}", "to": "u@example.net", "template": "nope"}, expect=404)
    call("DELETE", f"/v1/templates/{t['id']}", key=key, expect=200)
    call("GET", f"/v1/templates/{t['id']}", key=key, expect=404)

    # Tags and the email list's filters; a domain deleted.
    call("POST", "/v1/emails", key=key,
         body={"from": f"a@{SENDER}", "to": "u@example.net", "subject": "tagged", "text": "x",
               "tags": [{"name": "kind", "value": "welcome"}], "metadata": {"user": 7}},
         expect=200)
    call("GET", "/v1/email?status=QUEUED,SENT&tag=kind:welcome", key=key, expect=200)
    call("GET", "/v1/email?status=LOST", key=key, expect=400)
    call("DELETE", f"/v1/domains/{d['id']}", key=key, expect=200)
    call("DELETE", f"/v1/domains/{d['id']}", key=key, expect=404)

    assert domain["status"] == "VERIFIED"
    out = node_check(call.answers)
    assert out["ok"], "\n".join(out["errors"])
