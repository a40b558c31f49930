"""Free loopback ports for servers the tests start later (posthorn, dnsmasq, SMTP sinks).

A port picked with bind(0) comes from the kernel's ephemeral range, where any outgoing
connection of a parallel test (or posthorn's own DNS queries) may take it before the
server binds it. So ports are picked below that range, and each is reserved for the life
of the test process with an flock on a file, so that two pytest processes run side by side
by ctest never hand out the same port."""
from __future__ import annotations

import fcntl
import os
import random
import socket

LOW, HIGH = 20000, 32000  # below Linux's ephemeral range (32768–60999)
LOCK_DIR = "/tmp/posthorn-test-ports"

_held: list[int] = []  # open lock files, kept for the life of the process
_next = random.Random(os.getpid()).randrange(LOW, HIGH)


def _bindable(port: int, kind: int) -> bool:
    with socket.socket(socket.AF_INET, kind) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def reserve_port(udp: bool = False) -> int:
    """A TCP port (and, with udp, the same UDP port) that is free now and that no other
    test process will be given."""
    global _next
    os.makedirs(LOCK_DIR, exist_ok=True)
    for _ in range(HIGH - LOW):
        port = _next
        _next = LOW + (_next - LOW + 1) % (HIGH - LOW)
        fd = os.open(f"{LOCK_DIR}/{port}", os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        if _bindable(port, socket.SOCK_STREAM) and (not udp or _bindable(port, socket.SOCK_DGRAM)):
            _held.append(fd)
            return port
        os.close(fd)
    raise RuntimeError("no free loopback port")
