"""POST /v1/emails/batch (docs/sending.md, "Batches"): a hundred emails with attachments
delivered to a real SMTP sink (python3-aiosmtpd) and each DKIM-valid (python3-dkim); refused
items answered in their places while the others are stored; ?atomic=true storing nothing
when one item is refused; a retried batch with its Idempotency-Key storing nothing new; the
bounds of a batch; the send rate counting each email; and another account seeing none of it."""
import base64
import time

from support.posthorn import api_error
from test_delivery import SENDER, dkim_ok, wait_status, world  # noqa: F401 (world: a fixture)

FROM = f"Acme <hello@{SENDER}>"


def item(i, **fields):
    body = {"from": FROM, "to": f"user{i}@accept.example.net", "subject": f"Batch item {i}",
            "text": f"Hello number {i}."}
    body.update(fields)
    return body


def batch(ph, key, items, query="", headers=None):
    return ph.request("POST", "/v1/emails/batch" + query, key=key, body=items, headers=headers)


def total_emails(ph, key):
    return ph.get("/v1/email?limit=1", key=key).json()["total"]


def test_a_hundred_with_attachments_are_delivered_and_dkim_signed(world):
    sink = world.sink("accept")
    ph, key = world.server()
    items = [item(i, html=f"<p>Hello <b>{i}</b></p>",
                  attachments=[{"filename": f"invoice-{i}.txt",
                                "content": base64.b64encode(f"invoice {i}\n".encode()).decode(),
                                "content_type": "text/plain"}])
             for i in range(100)]
    r = batch(ph, key, items)
    assert r.status == 200, r
    data = r.json()["data"]
    assert [d["index"] for d in data] == list(range(100))
    assert all(d["id"].startswith("em_") and d["status"] == "QUEUED" for d in data), data[:3]
    assert [d["subject"] for d in data] == [f"Batch item {i}" for i in range(100)]
    assert len({d["id"] for d in data}) == 100
    messages = sink.wait_messages(100, timeout=30)
    by_rcpt = {m.rcpt_tos[0]: m for m in messages}
    assert sorted(by_rcpt) == sorted(f"user{i}@accept.example.net" for i in range(100))
    for i in (0, 42, 99):  # each message is its own: its subject, body and attachment
        data_i = by_rcpt[f"user{i}@accept.example.net"].data
        assert f"Subject: Batch item {i}".encode() in data_i
        assert f'filename="invoice-{i}.txt"'.encode() in data_i or \
            f"filename=invoice-{i}.txt".encode() in data_i
    assert all(dkim_ok(ph, m.data) for m in messages)
    assert wait_status(ph, key, data[7]["id"])["status"] == "DELIVERED"
    # One request in the log.
    logs = ph.get("/v1/logs?method=post", key=key).json()["data"]
    assert [entry["url"] for entry in logs if "batch" in entry["url"]] == ["/v1/emails/batch"]


def test_refused_items_are_answered_in_place_and_the_others_stored(world):
    world.sink("accept")
    ph, key = world.server()
    items = [item(i) for i in range(5)]
    items[1]["to"] = "not an address"
    items[3]["from"] = "someone@unverified.example"
    r = batch(ph, key, items)
    assert r.status == 200, r
    data = r.json()["data"]
    assert [d["index"] for d in data] == list(range(5))
    assert data[1]["error"]["code"] == "INVALID_EMAIL" and data[1]["error"]["status"] == 400
    assert data[3]["error"]["code"] == "DOMAIN_NOT_VERIFIED"
    assert data[3]["error"]["status"] == 403 and "unverified.example" in data[3]["error"]["message"]
    stored = [data[i]["id"] for i in (0, 2, 4)]
    assert all("error" not in data[i] for i in (0, 2, 4))
    for i, em in zip((0, 2, 4), stored):
        e = ph.get(f"/v1/emails/{em}", key=key).json()
        assert e["subject"] == f"Batch item {i}"
    assert total_emails(ph, key) == 3

    # atomic=true: the same batch stores nothing and names the refused items.
    r = batch(ph, key, items, "?atomic=true")
    assert api_error(r, 422, "BATCH_REJECTED")
    errors = r.json()["errors"]
    assert [(e["index"], e["code"]) for e in errors] == [(1, "INVALID_EMAIL"),
                                                         (3, "DOMAIN_NOT_VERIFIED")]
    assert total_emails(ph, key) == 3
    # Without the bad items, atomic stores all of them.
    good = [items[0], items[2], items[4]]
    r = batch(ph, key, good, "?atomic=true")
    assert r.status == 200, r
    assert all(d["status"] == "QUEUED" for d in r.json()["data"])
    assert total_emails(ph, key) == 6
    api_error(batch(ph, key, good, "?atomic=yes"))

    # Another account sees none of them, and cannot read them.
    other = ph.account_with_key("other")
    assert total_emails(ph, other) == 0
    for em in stored:
        assert ph.get(f"/v1/emails/{em}", key=other).status == 404


def test_a_retried_batch_with_its_key_stores_nothing_new(world):
    world.sink("accept")
    ph, key = world.server()
    items = [item(i) for i in range(4)]
    items[2]["subject"] = ""  # refused: refused again when retried, never stored
    items[3]["idempotencyKey"] = "own-key"  # its own key wins over the header's
    h = {"Idempotency-Key": "batch-2026-11-27"}
    first = batch(ph, key, items, headers=h)
    assert first.status == 200, first
    again = batch(ph, key, items, headers=h)
    assert again.status == 200, again
    assert again.json() == first.json()
    assert first.json()["data"][2]["error"]["code"] == "VALIDATION_ERROR"
    assert total_emails(ph, key) == 3
    # Each item's key is the header's with its index: a single send with it replays.
    r = ph.request("POST", "/v1/emails", key=key, body=item(9),
                   headers={"Idempotency-Key": "batch-2026-11-27/1"})
    assert r.status == 200 and r.json()["id"] == first.json()["data"][1]["id"], r
    r = ph.request("POST", "/v1/emails", key=key, body=item(9, idempotencyKey="own-key"))
    assert r.json()["id"] == first.json()["data"][3]["id"], r
    # atomic, retried: the same ids again.
    atomic = batch(ph, key, [item(0), item(1)], "?atomic=true", headers={"Idempotency-Key": "a"})
    retried = batch(ph, key, [item(0), item(1)], "?atomic=true", headers={"Idempotency-Key": "a"})
    assert [d["id"] for d in retried.json()["data"]] == [d["id"] for d in atomic.json()["data"]]
    assert total_emails(ph, key) == 5
    # On a single send the header and the body's key must agree.
    api_error(ph.request("POST", "/v1/emails", key=key, body=item(9, idempotencyKey="x"),
                         headers={"Idempotency-Key": "y"}))
    api_error(batch(ph, key, [item(0)], headers={"Idempotency-Key": "k" * 257}))


def test_the_bounds_of_a_batch(world):
    ph, key = world.server()
    assert "1 to 100" in api_error(batch(ph, key, []))
    assert "not 101" in api_error(batch(ph, key, [item(i) for i in range(101)]))
    api_error(batch(ph, key, item(0)))  # an object, not an array
    api_error(batch(ph, key, [item(0)], "?other=1"))
    # A hundred emails of fifty recipients each are within the JSON bounds.
    many = [item(i, to=[f"r{i}.{j}@accept.example.net" for j in range(50)]) for i in range(100)]
    r = batch(ph, key, many, "?atomic=true")
    assert r.status == 200, r
    assert total_emails(ph, key) == 100
    # Any other method takes "batch" for an email id, which does not exist.
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    assert ph.request("PATCH", "/v1/emails/batch", key=key,
                      body={"scheduled_at": later}).status == 404


def test_the_send_rate_counts_each_email(world):
    ph, key = world.server(POSTHORN_LIMITS_SEND_RATE_PER_MINUTE="5")
    r = batch(ph, key, [item(i) for i in range(7)], "?atomic=true")
    api_error(r, 429, "RATE_LIMITED")
    assert int(r.headers["retry-after"]) >= 1
    assert total_emails(ph, key) == 0
    r = batch(ph, key, [item(i) for i in range(7)])
    assert r.status == 200, r
    data = r.json()["data"]
    assert all("id" in d for d in data[:5])
    assert [d["error"]["code"] for d in data[5:]] == ["RATE_LIMITED", "RATE_LIMITED"]
    assert total_emails(ph, key) == 5
