"""The CLI on a data dir (or database) with no install in it (issue 28, point 8): every
command that reads or changes an install says where it looked and exits 1, and creates
nothing — no data dir, no database file, no schema. `account create`, the first command of
a new install (`make run`), still creates it. On SQLite and, in integration.pg.*, on an
empty PostgreSQL database."""
from __future__ import annotations

import os
import subprocess

import pytest

from support import store
from support.posthorn import BIN

# Every command that needs an existing install, with arguments that would otherwise work.
READERS = [
    ["dns", "zone"],
    ["key", "list", "--account", "dev"],
    ["key", "revoke", "key_01m8e26bw7z7q15304nq8b8fb5"],
    ["key", "create", "--account", "dev"],
]


def public_tables(ph) -> int:
    db = store.connect(ph)
    try:
        (n,) = db.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
    finally:
        db.close()
    return n


def expected_message(ph) -> str:
    if store.on_pg():
        return (f"posthorn: no posthorn schema in the database {ph.database_url}; "
                "is --config / database.url right?\n")
    return f"posthorn: no database at {ph.data_dir / 'posthorn.db'}; is --config / data_dir right?\n"


def test_commands_on_a_missing_install_fail_and_create_nothing(posthorn_factory):
    ph = posthorn_factory()
    assert not ph.data_dir.exists()
    for args in READERS:
        r = ph.cli(*args, check=False)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stderr == expected_message(ph), args
        assert r.stdout == ""
        assert not ph.data_dir.exists(), f"{args} made the data dir"
        if store.on_pg():
            assert public_tables(ph) == 0, f"{args} made tables"
    # account create makes the install; then the others work on it.
    account = ph.create_account("dev")
    assert account.startswith("acc_")
    assert (ph.data_dir / "posthorn.db").exists() or store.on_pg()
    key_id, _ = ph.create_key("dev")
    listed = ph.cli("key", "list", "--account", "dev")
    assert listed.stdout.startswith(key_id)
    assert ph.cli("dns", "zone").stdout.startswith("; posthorn DKIM keys")


def test_a_wrong_data_dir_in_the_config_file_is_named(tmp_path):
    if store.on_pg():
        pytest.skip("the config file's data_dir names the SQLite database only")
    wrong = tmp_path / "no-such-install"
    config = tmp_path / "posthorn.toml"
    config.write_text(f'[server]\ndata_dir = "{wrong}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("POSTHORN_")}
    r = subprocess.run([BIN, "--config", str(config), "dns", "zone"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr == f"posthorn: no database at {wrong}/posthorn.db; is --config / data_dir right?\n"
    assert not wrong.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["posthorn.toml"]
