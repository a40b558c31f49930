"""Start, graceful shutdown and durability: SIGTERM/SIGINT stop accepting, finish what is
in flight, flush the store, exit 0; the CLI works on the data dir while the server runs."""
import pathlib
import resource
import signal
import socket
import time

import pytest

from support.posthorn import wait_for


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_finishes_the_request_in_flight_then_exits_0(server, sig):
    key = server.account_with_key("acme")
    idle = server.connection()
    assert server.request("GET", "/healthz", conn=idle).status == 200  # now an idle keep-alive

    body = b'{"in": "flight"}'
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    s.sendall((f"POST /v1/logs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
              + body[:5])
    time.sleep(0.3)  # the server is now reading this request's body
    server.proc.send_signal(sig)
    time.sleep(0.3)
    # No new connections are taken once stopping...
    with pytest.raises(OSError):
        c = socket.create_connection(("127.0.0.1", server.http_port), timeout=2)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        if not c.recv(100):
            raise ConnectionResetError("closed without answer")
    # ...but the request in flight is finished and answered, with Connection: close.
    s.sendall(body[5:])
    reply = b""
    while chunk := s.recv(4096):
        reply += chunk
    s.close()
    assert reply.startswith(b"HTTP/1.1 405"), reply[:300]
    assert b"Connection: close" in reply
    assert server.proc.wait(timeout=30) == 0
    rc = server.stop()
    assert rc == 0

    # The store was flushed: that request's log entry is there after a restart.
    server.start()
    wait_for(lambda: any(e["method"] == "POST" for e in
                         server.get("/v1/logs?limit=100", key=key).json()["data"]),
             what="the in-flight request's log entry")


def test_cli_works_while_the_server_runs(server):
    key = server.account_with_key("first")
    assert server.get("/v1/logs", key=key).status == 200
    # Concurrent CLI writes next to server writes on the same SQLite file.
    keys = [server.account_with_key(f"acct{i}") for i in range(5)]
    for k in keys:
        for _ in range(3):
            assert server.get("/v1/logs?limit=1", key=k).status == 200
    assert len(server.cli("key", "list", "--account", "acct4").stdout.splitlines()) == 1


def test_restart_keeps_accounts_keys_and_logs(server):
    key = server.account_with_key("acme")
    for i in range(10):
        server.get(f"/v1/logs?n={i}", key=key)
    assert server.stop() == 0
    server.start()
    r = server.get("/v1/logs?limit=100", key=key)
    assert r.status == 200
    urls = {e["url"] for e in r.json()["data"]}
    assert {f"/v1/logs?n={i}" for i in range(10)} <= urls, "every acknowledged request survived"


def test_serve_raises_its_open_files_limit_to_the_hard_limit(posthorn_factory):
    # Every connection is a descriptor (the SMTP listeners alone take 1000 sessions each);
    # started under a soft limit of 256, the server runs with the hard one.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 256:
        pytest.skip(f"the hard limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        ph = posthorn_factory().start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    limits = pathlib.Path(f"/proc/{ph.proc.pid}/limits").read_text()
    line = next(l for l in limits.splitlines() if l.startswith("Max open files"))
    assert line.split()[3:5] == [str(hard), str(hard)], line
