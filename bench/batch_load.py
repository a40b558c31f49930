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
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import socket
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


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--body", required=True, help="a file: the JSON body of every request")
    p.add_argument("--requests", type=int, required=True)
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--procs", type=int, default=4)
    a = p.parse_args(argv)
    if a.requests < 1 or a.connections < 1 or a.procs < 1:
        p.error("--requests, --connections and --procs must be positive")
    body = open(a.body, "rb").read()
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
