#!/usr/bin/env python3
"""A throw-away PostgreSQL server for the tests (docs/testing.md, "PostgreSQL").

usage: pg_test_server.py run [--] COMMAND [ARG...]
           starts a server, runs COMMAND with PH_TEST_PG_DSN set to its URL, stops the
           server (also when COMMAND fails or this script is interrupted) and exits with
           COMMAND's status
       pg_test_server.py start STATE_DIR
           starts a server and leaves it running: STATE_DIR/url holds its URL, STATE_DIR/pid
           the PID of its postmaster (for a ctest fixture: FIXTURES_SETUP)
       pg_test_server.py stop STATE_DIR
           stops the server that `start STATE_DIR` started and removes its files
           (FIXTURES_CLEANUP)

The server: initdb in a new temporary directory (trust authentication, user postgres,
UTF-8, ICU collation en-US so that a query that forgets COLLATE "C" sorts differently from
the contract), listening on 127.0.0.1 on a free port and on a Unix socket in its directory
only, without fsync (a test server: durability is not what is tested; PH_PG_DURABLE=1 keeps
PostgreSQL's durable defaults, for benchmarks). initdb and postgres
refuse to run as root, so as root they run as the user `nobody` (PH_PG_USER to choose
another). It is stopped by the PID of its postmaster: SIGINT (fast shutdown), then SIGKILL
after 30 s.

The binaries: PH_PG_BINDIR, else the newest /usr/lib/postgresql/*/bin (Debian's
postgresql-15). Without them this fails, loudly: a test that was to run against PostgreSQL
must not pass by not running.
"""
import glob
import os
import pathlib
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def fail(message: str) -> None:
    print(f"pg_test_server: {message}", file=sys.stderr)
    sys.exit(2)


def bindir() -> pathlib.Path:
    candidates = []
    if os.environ.get("PH_PG_BINDIR"):
        candidates.append(pathlib.Path(os.environ["PH_PG_BINDIR"]))
    found = glob.glob("/usr/lib/postgresql/*/bin")
    found.sort(key=lambda p: int(pathlib.Path(p).parent.name) if pathlib.Path(p).parent.name.isdigit() else 0,
               reverse=True)
    candidates += [pathlib.Path(p) for p in found]
    for d in candidates:
        if (d / "initdb").is_file() and (d / "postgres").is_file():
            return d
    fail("no PostgreSQL server binaries (initdb, postgres) in PH_PG_BINDIR or "
         "/usr/lib/postgresql/*/bin: install postgresql-15 (scripts/install-deps.sh)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_user() -> dict:
    """Popen arguments that drop root for initdb and postgres."""
    if os.geteuid() != 0:
        return {}
    name = os.environ.get("PH_PG_USER", "nobody")
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        fail(f"running as root, and there is no user {name!r} to run PostgreSQL as "
             "(PH_PG_USER names another)")
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def chown_to(path: pathlib.Path, drop: dict) -> None:
    if drop:
        os.chown(path, drop["user"], drop["group"])


def start(base: pathlib.Path) -> tuple[str, int]:
    """Makes a cluster under `base` and starts it; answers its URL and its postmaster's PID."""
    bins = bindir()
    drop = as_user()
    data = base / "data"
    chown_to(base, drop)
    env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    initdb = [str(bins / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
              "--locale=C.UTF-8", "--no-sync"]
    icu = initdb + ["--locale-provider=icu", "--icu-locale=en-US"]
    r = subprocess.run(icu, cwd=base, env=env, capture_output=True, text=True, **drop)
    if r.returncode != 0:  # a build without ICU: the libc locale
        shutil.rmtree(data, ignore_errors=True)
        r = subprocess.run(initdb, cwd=base, env=env, capture_output=True, text=True, **drop)
    if r.returncode != 0:
        fail(f"initdb failed:\n{r.stdout}{r.stderr}")
    port = free_port()
    return f"postgresql://postgres@127.0.0.1:{port}/postgres", serve(base, port)


def serve(base: pathlib.Path, port: int) -> int:
    """Starts the cluster that start() made under `base` on `port` (again, after stop_pid: a
    test of a server that goes away and comes back); answers its postmaster's PID once it
    accepts connections."""
    bins = bindir()
    drop = as_user()
    env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    log = open(base / "postgres.log", "ab")
    settings = ["listen_addresses=127.0.0.1", "max_connections=200", "log_min_messages=warning"]
    if not os.environ.get("PH_PG_DURABLE"):
        settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
    # More settings for a profiling run, e.g. PH_PG_SETTINGS="shared_preload_libraries=pg_stat_statements".
    settings += os.environ.get("PH_PG_SETTINGS", "").split()
    proc = subprocess.Popen(
        [str(bins / "postgres"), "-D", str(base / "data"), "-p", str(port), "-k", str(base)] +
        [arg for setting in settings for arg in ("-c", setting)],
        cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **drop)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            fail(f"postgres exited with {proc.returncode}:\n" + (base / "postgres.log").read_text(errors="replace"))
        ready = subprocess.run([str(bins / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)])
        if ready.returncode == 0:
            break
        if time.monotonic() > deadline:
            stop_pid(proc.pid)
            fail("postgres did not accept connections within 60 s:\n" +
                 (base / "postgres.log").read_text(errors="replace"))
        time.sleep(0.1)
    return proc.pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # our own child that exited: a zombie until reaped
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def stop_pid(pid: int) -> None:
    """Fast shutdown of the postmaster `pid`; SIGKILL if it is still there after 30 s."""
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)  # the postmaster leads its session: its children too
        except ProcessLookupError:
            pass


def on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run(command: list[str]) -> int:
    if not command:
        fail("run: no command")
    base = pathlib.Path(tempfile.mkdtemp(prefix="ph_pg_"))
    pid = None
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        url, pid = start(base)
        env = dict(os.environ, PH_TEST_PG_DSN=url)
        return subprocess.run(command, env=env).returncode
    except KeyboardInterrupt as e:
        print(f"pg_test_server: interrupted ({e}): stopping the server", file=sys.stderr)
        return 130
    finally:
        if pid is not None:
            stop_pid(pid)
        shutil.rmtree(base, ignore_errors=True)


def start_detached(state: pathlib.Path) -> int:
    state.mkdir(parents=True, exist_ok=True)
    base = pathlib.Path(tempfile.mkdtemp(prefix="ph_pg_"))
    url, pid = start(base)
    (state / "url").write_text(url + "\n")
    (state / "pid").write_text(f"{pid}\n")
    (state / "dir").write_text(f"{base}\n")
    print(url)
    return 0


def stop_detached(state: pathlib.Path) -> int:
    pid_file = state / "pid"
    if not pid_file.exists():
        fail(f"stop: no server was started in {state}")
    stop_pid(int(pid_file.read_text().strip()))
    base = pathlib.Path((state / "dir").read_text().strip())
    shutil.rmtree(base, ignore_errors=True)
    for name in ("url", "pid", "dir"):
        (state / name).unlink(missing_ok=True)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] == "run":
        rest = argv[2:]
        if rest and rest[0] == "--":
            rest = rest[1:]
        return run(rest)
    if len(argv) == 3 and argv[1] == "start":
        return start_detached(pathlib.Path(argv[2]))
    if len(argv) == 3 and argv[1] == "stop":
        return stop_detached(pathlib.Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
