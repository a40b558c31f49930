#!/usr/bin/env python3
"""HTTP load of a known size for bench/batch.sh: REQUESTS POSTs of one body (a file) to a URL
path, over CONNECTIONS keep-alive connections at once (a thread each, on blocking sockets,
split over PROCS processes so that one GIL is not the limit), each connection sending its
share one request after the other; wrk has no way to stop after a number of requests.

An answer's emails: 1 for a 200 of a single send; for a batch, the results in its body that
carry an id ('"id":"em_'). It prints one JSON object on stdout:
  requests, non_200, emails (emails of the answers), elapsed_s (first request to last
  answer), emails_per_s, p50_ms, p99_ms (per request), client_cpu_s (this client's CPU).
Exit status 0 when every answer was 200, 1 otherwise, 2 bad usage.

With --client h2load the same load is made by h2load (nghttp2-client, `--h1`: HTTP/1.1 over
keep-alive connections, written in C) instead of these threads, so that the client is not
the limit; it cannot read the answers' bodies, so a batch's emails are its 2xx answers times
the items of the body (bench/batch.sh checks the rows stored), and the latencies are its
mean per request (p50_ms and p99_ms then both carry the mean; h2load gives no percentiles).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time


def one_connection(host, port, request, count, out):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""
    for _ in range(count):
        t0 = time.monotonic()
        s.sendall(request)
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            buf += chunk
        head, _, buf = buf.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(buf) < length:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            buf += chunk
        body, buf = buf[:length], buf[length:]
        ok = head.startswith(b"HTTP/1.1 200")
        out.append((time.monotonic() - t0, ok, body.count(b'"id":"em_') if ok else 0))
    s.close()


def process(host, port, request, counts, start, results):
    start.wait()
    t0 = time.monotonic()
    outs = [[] for _ in counts]
    threads = [threading.Thread(target=one_connection, args=(host, port, request, n, o))
               for n, o in zip(counts, outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    results.put((t0, time.monotonic(), [r for o in outs for r in o], ru.ru_utime + ru.ru_stime))


def ms(text):
    """h2load's '1.23ms' / '45us' / '1.2s' in milliseconds."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]


def with_h2load(a, body_path, items):
    h2load = shutil.which("h2load")
    if not h2load:
        print("h2load is missing: install nghttp2-client (scripts/install-deps.sh --bench)",
              file=sys.stderr)
        return 2
    cmd = [h2load, "--h1", "-n", str(a.requests), "-c", str(min(a.connections, a.requests)),
           "-t", str(min(a.procs, a.connections, a.requests)), "-d", body_path,
           "-H", f"Authorization: Bearer {a.key}", "-H", "Content-Type: application/json",
           f"http://127.0.0.1:{a.port}{a.path}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = done.stdout
    finished = re.search(r"finished in ([0-9.]+)(us|ms|s),", out)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    reqs = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                     r"(\d+) failed, (\d+) errored", out)
    per_request = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", out)
    if done.returncode != 0 or not (finished and codes and reqs and per_request):
        print(out + done.stderr, file=sys.stderr)
        return 1
    elapsed = ms(finished.group(1) + finished.group(2)) / 1000
    ok = int(codes.group(1))
    answered = sum(int(codes.group(i)) for i in range(1, 5))
    emails = ok * items
    mean = round(ms(per_request.group(3)), 3)
    print(json.dumps({
        "requests": answered, "non_200": answered - ok + int(reqs.group(5)) + int(reqs.group(6)),
        "emails": emails, "elapsed_s": round(elapsed, 4),
        "emails_per_s": round(emails / elapsed, 1), "p50_ms": mean, "p99_ms": mean,
        "client_cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                              3)}))
    return 0 if ok == a.requests else 1


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--body", required=True, help="a file: the JSON body of every request")
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--procs", type=int, default=4)
    p.add_argument("--client", choices=("python", "h2load"), default="python")
    a = p.parse_args(argv)
    if a.requests < 1 or a.connections < 1 or a.procs < 1:
        p.error("--requests, --connections and --procs must be positive")
    body = open(a.body, "rb").read()
    if a.client == "h2load":
        parsed = json.loads(body)
        return with_h2load(a, a.body, len(parsed) if isinstance(parsed, list) else 1)
    request = (f"POST {a.path} HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\n"
               f"Authorization: Bearer {a.key}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    conns = min(a.connections, a.requests)
    counts = [a.requests // conns + (1 if i < a.requests % conns else 0) for i in range(conns)]
    procs = min(a.procs, conns)
    start = mp.Event()
    results = mp.Queue()
    workers = [mp.Process(target=process,
                          args=("127.0.0.1", a.port, request, counts[i::procs], start, results))
               for i in range(procs)]
    for w in workers:
        w.start()
    time.sleep(0.2)  # every process ready before the first request
    start.set()
    got = [results.get() for _ in workers]
    for w in workers:
        w.join()
    first = min(g[0] for g in got)
    last = max(g[1] for g in got)
    rows = sorted(r for g in got for r in g[2])
    lat = sorted(r[0] for r in rows)
    non_200 = sum(1 for r in rows if not r[1])
    emails = sum(r[2] if b"batch" in a.path.encode() else (1 if r[1] else 0) for r in rows)
    elapsed = last - first
    print(json.dumps({
        "requests": len(rows), "non_200": non_200, "emails": emails,
        "elapsed_s": round(elapsed, 4), "emails_per_s": round(emails / elapsed, 1),
        "p50_ms": round(1000 * lat[len(lat) // 2], 3),
        "p99_ms": round(1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 3),
        "client_cpu_s": round(sum(g[3] for g in got), 3)}))
    return 0 if non_200 == 0 and len(rows) == a.requests else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
