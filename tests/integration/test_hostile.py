"""Hostile clients (issue 27): refusals before the body is read, per-route body limits,
bounds on the work a JSON body may cost, and other clients served while an attack runs."""
import socket
import threading
import time

from test_http_frame import error_of


def rss_peak_kb(ph) -> int:
    for line in open(f"/proc/{ph.proc.pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def healthz_time(ph) -> float:
    t = time.monotonic()
    assert ph.get("/healthz").status == 200
    return time.monotonic() - t


def test_a_request_without_a_key_is_refused_before_its_body(server):
    # Headers promising a body, no key, and no body byte sent: 401 at once, then the
    # connection ends (the body is never read).
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=5) as s:
        s.sendall(b"POST /v1/emails HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n")
        reply = s.recv(65536)
        assert reply.startswith(b"HTTP/1.1 401"), reply
        assert b"UNAUTHORIZED" in reply and b"Connection: close" in reply
    # With Expect: 100-continue the client is told no before it sends anything.
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=5) as s:
        s.sendall(b"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ph_nope\r\n"
                  b"Content-Length: 50\r\nExpect: 100-continue\r\n\r\n")
        reply = s.recv(65536)
        assert reply.startswith(b"HTTP/1.1 401"), reply
        assert b"100 Continue" not in reply
    # Without a body due, the connection stays open for the next request.
    c = server.connection()
    error_of(server.request("GET", "/v1/logs", conn=c), 401, "UNAUTHORIZED")
    key = server.account_with_key("acme")
    assert server.request("GET", "/v1/logs", key=key, conn=c).status == 200
    c.close()


def test_slow_bodies_without_a_key_do_not_hold_the_server(server):
    # Many connections that send a head with Content-Length and then a byte now and then:
    # each is answered 401 at once and closed, and a newcomer is served meanwhile.
    socks = []
    try:
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5)
            s.sendall(b"POST /v1/emails HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
            socks.append(s)
        for s in socks:
            assert s.recv(4096).startswith(b"HTTP/1.1 401")
        assert healthz_time(server) < 1.0
        key = server.account_with_key("acme")
        assert server.get("/v1/logs", key=key).status == 200
    finally:
        for s in socks:
            s.close()


def test_every_route_but_the_send_has_a_small_body_limit(server):
    key = server.account_with_key("acme")
    big = '{"url":"https://example.com/x","description":"' + "a" * 70_000 + '"}'
    body = error_of(server.request("POST", "/v1/webhooks", key=key, body=big,
                                   headers={"Content-Type": "application/json"}),
                    413, "PAYLOAD_TOO_LARGE")
    assert "65536" in body["message"]
    body = error_of(server.request("PATCH", "/v1/domains/example.com", key=key, body=big,
                                   headers={"Content-Type": "application/json"}),
                    413, "PAYLOAD_TOO_LARGE")
    # The send takes it (and answers on its content).
    r = server.request("POST", "/v1/emails", key=key, body={
        "from": "a@example.com", "to": "b@example.net", "subject": "s", "text": "a" * 70_000})
    assert r.status != 413, r


def test_a_huge_json_array_is_refused_cheaply(server):
    key = server.account_with_key("acme")
    before = rss_peak_kb(server)
    bomb = b"[" + b"1," * (15 * 1024 * 1024) + b"1]"  # 30 MB, 15 million values
    results = []

    def attack():
        results.append(server.request("POST", "/v1/emails", key=key, body=bomb,
                                      headers={"Content-Type": "application/json"}))

    threads = [threading.Thread(target=attack) for _ in range(3)]
    for t in threads:
        t.start()
    # Another client is served while the three bodies are sent and refused.
    worst = 0.0
    while any(t.is_alive() for t in threads):
        worst = max(worst, healthz_time(server))
        time.sleep(0.02)
    for t in threads:
        t.join()
    assert worst < 1.0, worst
    for r in results:
        body = error_of(r, 400, "VALIDATION_ERROR")
        assert "more than 110000 JSON values" in body["message"], body
    # Three bodies of 30 MB each in memory, at most, and nothing built from them.
    grown_mb = (rss_peak_kb(server) - before) / 1024
    assert grown_mb < 3 * 30 + 60, grown_mb


def test_an_object_with_millions_of_keys_is_refused_cheaply(server):
    key = server.account_with_key("acme")
    keys = b",".join(b'"k%d":1' % i for i in range(2_000_000))
    for path in ("/v1/emails", "/v1/webhooks"):
        r = server.request("POST", path, key=key, body=b"{" + keys + b"}",
                           headers={"Content-Type": "application/json"})
        if path == "/v1/webhooks":
            error_of(r, 413, "PAYLOAD_TOO_LARGE")  # over the route's body limit
        else:
            body = error_of(r, 400, "VALIDATION_ERROR")
            assert "more than 1000 keys" in body["message"], body
    # Nesting deeper than Boost.JSON's bound is refused the same way.
    deep = b"[" * 40 + b"]" * 40
    body = error_of(server.request("POST", "/v1/emails", key=key, body=deep,
                                   headers={"Content-Type": "application/json"}),
                    400, "VALIDATION_ERROR")
    assert "32 deep" in body["message"]
    assert healthz_time(server) < 1.0
