"""The HTTP frame: routing, JSON errors for every failure, body limits, keep-alive, and
garbage on the socket."""
import socket
import time


def error_of(r, status, code):
    assert r.status == status, r
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert body["status"] == status and body["code"] == code and body["message"], body
    return body


def raw_exchange(port, data: bytes, timeout=5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                c = s.recv(65536)
            except ConnectionResetError:
                break
            if not c:
                break
            chunks.append(c)
        return b"".join(chunks)


def test_healthz_needs_no_key(server):
    r = server.get("/healthz")
    assert r.status == 200 and r.json() == {"status": "ok"}
    error_of(server.request("POST", "/healthz"), 405, "METHOD_NOT_ALLOWED")


def test_unknown_routes_are_404_json(server):
    key = server.account_with_key("acme")
    error_of(server.get("/v1/nothing", key=key), 404, "NOT_FOUND")
    error_of(server.get("/v1/logs/extra", key=key), 404, "NOT_FOUND")
    error_of(server.get("/v2/logs", key=key), 404, "NOT_FOUND")
    error_of(server.get("/nothing", key=key), 404, "NOT_FOUND")
    # `/` is the dashboard's (test_dashboard.py), and 404 once it is turned off there.


def test_wrong_method_is_405_with_allow(server):
    key = server.account_with_key("acme")
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        r = server.request(method, "/v1/logs", key=key)
        error_of(r, 405, "METHOD_NOT_ALLOWED")
        assert r.headers["allow"] == "GET"


def test_bodies_must_be_json(server):
    key = server.account_with_key("acme")
    body = error_of(server.request("POST", "/v1/logs", key=key, body="{not json",
                                   headers={"Content-Type": "application/json"}),
                    400, "INVALID_JSON")
    assert "JSON" in body["message"]
    error_of(server.request("POST", "/v1/logs", key=key, body='{"a": 1}',
                            headers={"Content-Type": "text/plain"}), 400, "INVALID_JSON")
    error_of(server.request("POST", "/v1/logs", key=key, body='{"a": 1}'), 400, "INVALID_JSON")
    error_of(server.request("POST", "/v1/logs", key=key, body='{"a": 1} trailing',
                            headers={"Content-Type": "application/json"}), 400, "INVALID_JSON")
    # A JSON body with charset is JSON; the route then answers (here: 405).
    error_of(server.request("POST", "/v1/logs", key=key, body='{"a": 1}',
                            headers={"Content-Type": "application/json; charset=utf-8"}),
             405, "METHOD_NOT_ALLOWED")


def test_oversized_bodies_are_413(posthorn_factory):
    # max_attachment_bytes 3 → the send limit is 4 bytes of base64 + 2 MiB.
    ph = posthorn_factory(env={"POSTHORN_LIMITS_MAX_ATTACHMENT_BYTES": "3"}).start()
    key = ph.account_with_key("acme")
    limit = 4 + 2 * 1024 * 1024
    big = b'{"x":"' + b"a" * limit + b'"}'
    body = error_of(ph.request("POST", "/v1/emails", key=key, body=big,
                               headers={"Content-Type": "application/json"}),
                    413, "PAYLOAD_TOO_LARGE")
    assert str(limit) in body["message"]
    # Chunked, so the size is only known while reading.
    head = (f"POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    chunk = b"a" * 65536
    chunks = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(40))
    reply = raw_exchange(ph.http_port, head + chunks + b"0\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"PAYLOAD_TOO_LARGE" in reply
    # Expect: 100-continue with a too-large Content-Length is refused before any body.
    with socket.create_connection(("127.0.0.1", ph.http_port), timeout=5) as s:
        s.sendall((f"POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {limit + 1}\r\n"
                   "Expect: 100-continue\r\n\r\n").encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 413")
    # A body just under the limit is read (and then refused by the route, not the frame).
    ok = ph.request("POST", "/v1/emails", key=key, body=b'"' + b"a" * (limit - 2) + b'"',
                    headers={"Content-Type": "application/json"})
    error_of(ok, 400, "VALIDATION_ERROR")
    assert ph.get("/healthz").status == 200


def test_chunked_and_continued_bodies_are_read_whole(server):
    key = server.account_with_key("acme")
    body = b'{"domain":"chunked.example.com"}'
    # Chunked, in three chunks (one with an extension), header names in any case.
    parts = (body[:5], body[5:20], body[20:])
    chunks = b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in parts[:2])
    chunks += b"%x;ext=1\r\n" % len(parts[2]) + parts[2] + b"\r\n0\r\n\r\n"
    reply = raw_exchange(server.http_port,
                         f"POST /v1/domains HTTP/1.1\r\nHost: x\r\naUtHoRiZaTiOn: Bearer {key}\r\n"
                         "CONTENT-TYPE: application/json\r\nTransfer-Encoding: chunked\r\n"
                         "Connection: close\r\n\r\n".encode() + chunks)
    assert reply.startswith(b"HTTP/1.1 201"), reply[:300]
    assert b'"domain":"chunked.example.com"' in reply, reply
    # Expect: 100-continue: the interim answer first, then the body, then the answer.
    body = b'{"domain":"continued.example.com"}'
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=5) as s:
        s.sendall((f"POST /v1/domains HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                   "Expect: 100-continue\r\nConnection: close\r\n\r\n").encode())
        interim = s.recv(4096)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        s.sendall(body)
        data = interim.split(b"\r\n\r\n", 1)[1]
        while chunk := s.recv(4096):
            data += chunk
    assert data.startswith(b"HTTP/1.1 201"), data[:300]
    assert b'"domain":"continued.example.com"' in data, data


def test_malformed_requests_get_a_json_400_and_the_server_lives(server):
    for garbage in (b"\x00\x01\x02garbage\r\n\r\n",
                    b"GET\r\n\r\n",
                    b"GET / HTTP/9.9\r\n\r\n",
                    b"GET /v1/logs HTTP/1.1\r\nHost x\r\n\r\n",
                    b"POST /v1/logs HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
                    b"GET /v1/logs HTTP/1.1\r\nHost: x\r\nBad\x01Header: y\r\n\r\n"):
        reply = raw_exchange(server.http_port, garbage)
        assert reply.startswith(b"HTTP/1.1 400"), (garbage, reply[:200])
        assert b'"code":"VALIDATION_ERROR"' in reply
    huge_header = b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n"
    assert raw_exchange(server.http_port, huge_header).startswith(b"HTTP/1.1 431")
    # A client that connects and says nothing, or closes at once, harms nobody.
    socket.create_connection(("127.0.0.1", server.http_port)).close()
    assert server.get("/healthz").status == 200


def test_bad_targets_are_400(server):
    key = server.account_with_key("acme")
    reply = raw_exchange(server.http_port,
                         f"GET /v1/logs?limit=%zz HTTP/1.1\r\nHost: x\r\n"
                         f"Authorization: Bearer {key}\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 400"), reply[:200]


def test_keep_alive_serves_many_requests_on_one_connection(server):
    key = server.account_with_key("acme")
    conn = server.connection()
    for _ in range(20):
        assert server.request("GET", "/v1/logs?limit=1", key=key, conn=conn).status == 200
    # An error answer does not cost the connection either.
    assert server.request("GET", "/v1/nope", key=key, conn=conn).status == 404
    assert server.request("GET", "/healthz", conn=conn).status == 200
    conn.close()


def test_http_1_0_and_connection_close_are_honoured(server):
    reply = raw_exchange(server.http_port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert reply.startswith(b"HTTP/1.0 200")
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        time.sleep(0.2)
        data = b""
        while chunk := s.recv(4096):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200")  # and the server closed: recv returned b""


def test_head_answers_the_head_of_a_get_and_no_body(server):
    # Two requests on one connection: were a body sent after the HEAD answer, it would be
    # read as the start of the second answer.
    raw = raw_exchange(server.http_port,
                       b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                       b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, rest = raw.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 ") and b"\r\nContent-Length: 15" in head, raw
    assert rest.startswith(b"HTTP/1.1 200 "), raw
    assert rest.endswith(b'\r\n\r\n{"status":"ok"}'), raw


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def exchange_on(s: socket.socket, request: bytes) -> bytes:
    """Sends one request on an open connection and reads its whole answer."""
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        chunk = s.recv(4096)
        assert chunk, f"the server closed the connection: {data!r}"
        data += chunk
    return data


def closed_by_server(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_full_listener_closes_its_longest_idle_connection_to_make_room(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_HTTP_MAX_CONNECTIONS": "4"}).start()
    port = ph.http_port
    # Four keep-alive connections, each idle since its answer, in this order.
    idle = []
    for _ in range(4):
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        assert exchange_on(idle[-1], HEALTHZ).startswith(b"HTTP/1.1 200")
        time.sleep(0.02)
    # A fifth is answered: the one idle the longest made room, the others are still open.
    with socket.create_connection(("127.0.0.1", port), timeout=5) as fifth:
        assert exchange_on(fifth, HEALTHZ).startswith(b"HTTP/1.1 200")
        assert closed_by_server(idle[0])
        for s in idle[1:]:
            assert exchange_on(s, HEALTHZ).startswith(b"HTTP/1.1 200")
    # A connection that has not finished its request's head is idle too (slowloris).
    for s in idle:
        s.close()
    time.sleep(0.2)  # for the server to see them go (its order is the order of acceptance)
    slow = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
    for s in slow:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # no blank line yet
        time.sleep(0.02)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as newcomer:
        assert exchange_on(newcomer, HEALTHZ).startswith(b"HTTP/1.1 200")
    assert closed_by_server(slow[0])
    for s in slow:
        s.close()
    assert "http.max_connections" in ph.output()


def test_a_listener_full_of_requests_in_progress_waits_for_one_to_end(posthorn_factory):
    ph = posthorn_factory(env={"POSTHORN_HTTP_MAX_CONNECTIONS": "4"}).start()
    port = ph.http_port
    # Four requests whose heads are in and whose bodies are still to come: none is idle.
    busy = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
    for s in busy:
        s.sendall(b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 4\r\n\r\n{}")
    time.sleep(0.3)
    # The newcomer is taken by the kernel's listen queue, not by the server: no answer yet.
    waiting = socket.create_connection(("127.0.0.1", port), timeout=5)
    waiting.sendall(HEALTHZ)
    waiting.settimeout(0.5)
    try:
        early = waiting.recv(4096)
    except socket.timeout:
        early = None
    assert early is None, early
    # Every request in progress still ends well.
    assert exchange_on(busy[0], b"  ").startswith(b"HTTP/1.1 401")
    # Its connection now idle, it makes room for the newcomer, which gets its answer.
    waiting.settimeout(5)
    data = b""
    while not data.endswith(b"}"):
        chunk = waiting.recv(4096)
        assert chunk, data
        data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data
    assert closed_by_server(busy[0])
    for s in busy[1:]:
        assert exchange_on(s, b"  ").startswith(b"HTTP/1.1 401")
    for s in busy + [waiting]:
        s.close()
    assert ph.get("/healthz").status == 200
