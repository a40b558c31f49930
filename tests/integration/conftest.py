import pathlib
import shutil
import sys
import tempfile
import urllib.parse

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from support import store  # noqa: E402
from support.dnsmasq import Dnsmasq  # noqa: E402
from support.posthorn import Posthorn  # noqa: E402
from support.webhook_receiver import WebhookReceiver  # noqa: E402


def _posthorn_factory(base: pathlib.Path):
    made = []

    def make(env=None, config=None, name="ph"):
        p = Posthorn(base / f"{name}{len(made)}" / "data", env=env, config=config)
        p.data_dir.parent.mkdir(parents=True, exist_ok=True)
        made.append(p)
        return p

    yield make
    for p in made:
        if p.proc is not None:
            # Every server must also shut down cleanly: SIGTERM → exit 0.
            assert p.stop() == 0, p.output()


@pytest.fixture
def posthorn_factory(tmp_path):
    """Makes (not starts) posthorn instances, each with its own data dir; stops them all."""
    yield from _posthorn_factory(tmp_path)


@pytest.fixture(scope="module")
def module_posthorn_factory(tmp_path_factory):
    """posthorn_factory for a module's tests to share (tests that change nothing, such as
    the refusals of bad input, on one server instead of one each)."""
    yield from _posthorn_factory(tmp_path_factory.mktemp("module"))


@pytest.fixture
def server(posthorn_factory):
    """A running posthorn on free ports with a fresh data dir."""
    return posthorn_factory().start()


@pytest.fixture
def dns(tmp_path):
    """A real DNS server (dnsmasq) on a free loopback port; tests add records and restart."""
    d = Dnsmasq(tmp_path / "dns")
    d.start()
    yield d
    d.stop()


def _webhook_receivers():
    made = []

    def make(statuses=(200,), listen=True, path="/hook"):
        r = WebhookReceiver(statuses, path=path)
        made.append(r)
        return r.start() if listen else r

    yield make
    for r in made:
        r.stop()


@pytest.fixture
def webhook_receiver():
    """Makes HTTP webhook receivers on free loopback ports (support/webhook_receiver.py):
    webhook_receiver([500, 200]) answers 500, then 200 for ever; listen=False binds the port
    but refuses connections until .start(). Stops them all."""
    yield from _webhook_receivers()


@pytest.fixture(scope="module")
def module_webhook_receiver():
    """webhook_receiver for a module's tests to share."""
    yield from _webhook_receivers()


@pytest.fixture
def own_pg_server():
    """A PostgreSQL server of the test's own, to stop (pg.stop_pid) and start again
    (pg.serve(base, port)): {"pid", "base", "port", "url"}, with "pid" None while it is
    stopped; stopped at the end. Not under pytest's tmp_path: its folders are root's alone,
    and the server runs as another user when the tests run as root."""
    pg = store.pg_test_server()
    base = pathlib.Path(tempfile.mkdtemp(prefix="ph_pg_own_"))
    url, pid = pg.start(base)
    state = {"pid": pid, "base": base, "port": urllib.parse.urlsplit(url).port, "url": url}
    yield state
    if state["pid"]:
        pg.stop_pid(state["pid"])
    shutil.rmtree(base, ignore_errors=True)
