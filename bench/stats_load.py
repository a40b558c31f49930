#!/usr/bin/env python3
"""bench/stats.sh's client: times GET /v1/stats over one keep-alive connection, and the same
question answered by a GROUP BY scan of the emails table (the peer), on the same SQLite file,
N times each; checks that both give the same totals. Prints one JSON line per variant."""
import argparse
import http.client
import json
import sqlite3
import statistics
import time
import urllib.parse

KINDS = ("accepted", "delivered", "bounced", "complained", "failed", "blocked", "opened",
         "clicked")

# The peer: the same counts from the emails' rows, each event in its bucket (the same rules as
# migration 028's backfill); `{where}` narrows to a domain or joins a tag.
PEER = """
SELECT b, kind, COUNT(*) FROM (
  SELECT (created_at - :from) / :width AS b, 'accepted' AS kind FROM {src}
   WHERE {acc} AND created_at >= :from AND created_at < :to
  UNION ALL SELECT (delivered_at - :from) / :width, 'delivered' FROM {src}
   WHERE {acc} AND delivered_at >= :from AND delivered_at < :to
  UNION ALL SELECT (failed_at - :from) / :width, lower(status) FROM {src}
   WHERE {acc} AND status IN ('BOUNCED', 'FAILED', 'BLOCKED') AND failed_at >= :from
     AND failed_at < :to
  UNION ALL SELECT (updated_at - :from) / :width, 'complained' FROM {src}
   WHERE {acc} AND status = 'COMPLAINED' AND updated_at >= :from AND updated_at < :to
  UNION ALL SELECT (opened_at - :from) / :width, 'opened' FROM {src}
   WHERE {acc} AND opened_at >= :from AND opened_at < :to
  UNION ALL SELECT (clicked_at - :from) / :width, 'clicked' FROM {src}
   WHERE {acc} AND clicked_at >= :from AND clicked_at < :to)
GROUP BY b, kind
"""


def iso_ms(text):
    from datetime import datetime
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--account", required=True)
    ap.add_argument("--domain", required=True)      # its name
    ap.add_argument("--domain-id", required=True)
    ap.add_argument("--tag", default="campaign:spring")
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()

    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=60)
    headers = {"Authorization": f"Bearer {a.key}"}
    db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    db.execute("PRAGMA busy_timeout = 10000")
    variants = [("day", ""), ("hour", ""), ("day", "domain"), ("hour", "domain"),
                ("day", "tag"), ("hour", "tag")]
    for interval, filt in variants:
        q = {"interval": interval}
        if filt == "domain":
            q["domain"] = a.domain
        if filt == "tag":
            q["tag"] = a.tag
        path = "/v1/stats?" + urllib.parse.urlencode(q)
        http_ms, answer = [], None
        for i in range(a.runs + 2):
            t0 = time.perf_counter()
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            body = r.read()
            dt = (time.perf_counter() - t0) * 1000
            if r.status != 200:
                raise SystemExit(f"GET {path}: {r.status} {body[:300]!r}")
            if i >= 2:  # two warm-ups
                http_ms.append(dt)
            answer = json.loads(body)
        frm, to = iso_ms(answer["from"]), iso_ms(answer["to"])
        width = 3_600_000 if interval == "hour" else 86_400_000
        acc = "account_id = :account"
        src = "emails"
        if filt == "domain":
            acc += " AND domain_id = :domain_id"
        if filt == "tag":
            src = "(SELECT e.* FROM email_tags t JOIN emails e ON e.id = t.email_id " \
                  "WHERE t.account_id = :account AND t.name = :tname AND t.value = :tvalue)"
        sql = PEER.format(src=src, acc=acc)
        params = {"account": a.account, "from": frm, "to": to, "width": width,
                  "domain_id": a.domain_id}
        if filt == "tag":
            params["tname"], params["tvalue"] = a.tag.split(":", 1)
        peer_ms, rows = [], []
        for i in range(max(3, a.runs // 4) + 1):
            t0 = time.perf_counter()
            rows = db.execute(sql, params).fetchall()
            dt = (time.perf_counter() - t0) * 1000
            if i >= 1:
                peer_ms.append(dt)
        totals = {k: 0 for k in KINDS}
        for _, kind, n in rows:
            totals[kind] += n
        got = {k: answer["totals"][k] for k in KINDS}
        print(json.dumps({
            "interval": interval, "filter": filt or "none", "buckets": len(answer["buckets"]),
            "http_p50_ms": round(statistics.median(http_ms), 3),
            "http_p90_ms": round(sorted(http_ms)[int(len(http_ms) * 0.9) - 1], 3),
            "peer_p50_ms": round(statistics.median(peer_ms), 3),
            "peer_runs": len(peer_ms), "http_runs": len(http_ms),
            "same_totals": got == totals, "totals": got, "peer_totals": totals}), flush=True)


if __name__ == "__main__":
    main()
