"""Real databases for the class store, as fixtures: a SQLite file in tmp_path, and a throwaway
PostgreSQL cluster (Debian's initdb/pg_ctl, run as the postgres user when we are root) started
once per session with a fresh database per test. tests/conftest.py loads this module as a
plugin: a conftest.py here would be imported as `conftest` and shadow tests/conftest.py.
Skipped without PostgreSQL, except under CI=true."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import text

from dashboard.classroom.database import create_tables, dispose_engine, engine_for, metadata
from dashboard.classroom.learners import ProgressStore
from dashboard.classroom.store import ClassStore


def _pg_bin() -> Path:
    """PG_BIN, or Debian's PostgreSQL 15, or the newest PostgreSQL Debian installed."""
    if "PG_BIN" in os.environ:
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    preferred = Path("/usr/lib/postgresql/15/bin")
    return preferred if (preferred / "initdb").exists() or not found else found[-1].parent


PG_BIN = _pg_bin()


@dataclass(frozen=True)
class Cluster:
    socket_dir: Path
    port: int

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            host=str(self.socket_dir), port=self.port, user="postgres", dbname="postgres",
            autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute(sql)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_postgres(*command: object) -> list[str]:
    """The server refuses to run as root: run its tools as the postgres user then."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return prefix + [str(word) for word in command]


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    if not (PG_BIN / "initdb").exists():
        message = f"PostgreSQL is not installed ({PG_BIN}/initdb missing)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + ": CI must run the PostgreSQL tests")
        pytest.skip(message + ": apt-get install postgresql")
    root = Path(tempfile.mkdtemp(prefix="classroom-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    cluster = Cluster(socket_dir=root, port=_free_port())
    run = {"check": True, "capture_output": True, "timeout": 60}
    subprocess.run(
        _as_postgres(PG_BIN / "initdb", "-D", data, "-A", "trust", "-U", "postgres",
                     "-E", "UTF8", "--no-sync"),
        **run,
    )  # fmt: skip
    options = (
        f"-p {cluster.port} -k {root} -c listen_addresses='' -c max_connections=200"
        " -c fsync=off -c full_page_writes=off"  # a throwaway cluster: speed over durability
    )
    subprocess.run(
        _as_postgres(PG_BIN / "pg_ctl", "-D", data, "-l", root / "server.log", "-o", options,
                     "-w", "-t", "60", "start"),
        **run,
    )  # fmt: skip
    try:
        yield cluster
    finally:
        subprocess.run(
            _as_postgres(PG_BIN / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop"), **run
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres) -> Iterator[str]:
    """One database for the session: creating one per test costs a second each here."""
    postgres.admin("CREATE DATABASE classroom")
    address = postgres.url("classroom")
    yield address
    dispose_engine(address)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> Iterator[str]:
    """An empty store's URL on each database."""
    if request.param == "sqlite":
        address = f"sqlite:///{tmp_path / 'classroom.db'}"
        yield address
        dispose_engine(address)
        return
    address = request.getfixturevalue("postgres_url")
    for made in (ClassStore, ProgressStore):  # every store's tables, to be emptied
        create_tables(address, made.TABLES, made.upgrade)
    with engine_for(address).begin() as conn:
        names = ", ".join(table.name for table in metadata.sorted_tables)
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    yield address


START = 1_800_000_000.0  # the injected clock's first reading


class Clock:
    """Time that moves only when a test says so."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()
