"""The store the integration tests run posthorn on: SQLite (the default) or PostgreSQL.

POSTHORN_TEST_STORE=pg runs every posthorn of the suite on PostgreSQL: tools/pg_test_server.py
starts a throw-away server and hands its URL over in PH_TEST_PG_DSN; each posthorn instance
gets a database of its own on it, made here (`fresh_pg_database`). Tests that read the store
behind posthorn's back (to check what is stored, never to decide what the API answers) do it
through `connect(ph)`, which speaks either back end with SQLite's `?` placeholders."""
from __future__ import annotations

import os
import secrets
import sqlite3
import urllib.parse

KIND = os.environ.get("POSTHORN_TEST_STORE", "sqlite")
if KIND not in ("sqlite", "pg"):
    raise RuntimeError(f"POSTHORN_TEST_STORE must be sqlite or pg, not {KIND!r}")


def on_pg() -> bool:
    return KIND == "pg"


def _server_dsn() -> str:
    dsn = os.environ.get("PH_TEST_PG_DSN")
    if not dsn:
        raise RuntimeError("POSTHORN_TEST_STORE=pg needs PH_TEST_PG_DSN "
                           "(run the tests under tools/pg_test_server.py run)")
    return dsn


def fresh_pg_database() -> str:
    """Creates an empty database on the test server; answers its postgresql:// URL."""
    import psycopg2
    name = "ph_" + secrets.token_hex(6)
    admin = psycopg2.connect(_server_dsn())
    try:
        admin.autocommit = True
        with admin.cursor() as c:
            c.execute(f'CREATE DATABASE "{name}"')
    finally:
        admin.close()
    url = urllib.parse.urlsplit(_server_dsn())
    return urllib.parse.urlunsplit(url._replace(path="/" + name))


class _PgConnection:
    """The few calls of sqlite3.Connection that the tests make, on psycopg2."""

    def __init__(self, url: str):
        import psycopg2
        self._db = psycopg2.connect(url)
        self._db.autocommit = True

    def execute(self, sql: str, params=()):
        c = self._db.cursor()
        c.execute(sql.replace("%", "%%").replace("?", "%s"), tuple(params))
        return _PgCursor(c)

    def commit(self):
        pass

    def close(self):
        self._db.close()


class _PgCursor:
    def __init__(self, cursor):
        self._c = cursor

    def fetchone(self):
        row = self._c.fetchone()
        return None if row is None else tuple(_plain(v) for v in row)

    def fetchall(self):
        return [tuple(_plain(v) for v in row) for row in self._c.fetchall()]

    def __iter__(self):
        return iter(self.fetchall())


def _plain(v):
    return bytes(v) if isinstance(v, memoryview) else v


def connect(ph):
    """A connection to posthorn `ph`'s store, SQLite or PostgreSQL."""
    if ph.database_url.startswith("sqlite://"):
        return sqlite3.connect(ph.database_url[len("sqlite://"):])
    return _PgConnection(ph.database_url)


def pg_test_server():
    """tools/pg_test_server.py as a module: start(base), serve(base, port), stop_pid(pid) of a
    PostgreSQL server of one's own (a test that stops and starts its server)."""
    global _pg_tools
    if _pg_tools is None:
        import importlib.util
        import pathlib
        spec = importlib.util.spec_from_file_location(
            "pg_test_server",
            pathlib.Path(__file__).resolve().parents[2] / "tools" / "pg_test_server.py")
        _pg_tools = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_pg_tools)
    return _pg_tools


_pg_tools = None
