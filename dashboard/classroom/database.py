"""The database under the stores (the class store, store.py; a learner's progress, learners.py):
SQLite by default, PostgreSQL by URL (ATTENTION_CLASS_DB), one engine per URL per process, each
store's tables created by the store on first use, SQLite's "database is locked" retried, one
transaction per unit of work. Plain Python: nothing here imports Streamlit.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine, MetaData, Table, create_engine, event, make_url, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

PROJECT = Path(__file__).resolve().parents[2]
ENV_URL = "ATTENTION_CLASS_DB"
DEFAULT_URL = f"sqlite:///{PROJECT / 'data' / 'classroom.db'}"
TOKEN_BYTES = 32  # 256 random bits per token
LOCKED_RETRIES = 6  # SQLite "database is locked": 6 tries, backoff 0.05 s doubling (about 3 s)
BUSY_TIMEOUT_MS = 5000  # SQLite waits this long for a lock before it says "locked"

metadata = MetaData()  # every store's tables, each created by its store (`Database.TABLES`)

_ENGINES: dict[tuple[str, int], Engine] = {}  # one engine per URL per process (pid: forks)
_CREATED: set[tuple[str, int, tuple[str, ...]]] = set()  # (URL, pid, tables) made this process

T = TypeVar("T")


def default_url() -> str:
    """ATTENTION_CLASS_DB, or the SQLite file data/classroom.db in the project."""
    return os.environ.get(ENV_URL) or DEFAULT_URL


DISK_ENV = "ATTENTION_DISK_KEPT"  # "1" or "0": say whether this host keeps the app's disk


def disk_is_kept(environ: Mapping[str, str] = os.environ, project: Path = PROJECT) -> bool:
    """Whether the app's own disk outlives a restart. Not on Streamlit Community Cloud, whose
    container is made afresh when the app wakes from sleep or is updated: detected from what
    that host sets, the repository cloned under /mount/src and the host named "streamlit".
    ATTENTION_DISK_KEPT ("1" or "0") overrides it, for a host that does something else."""
    said = environ.get(DISK_ENV, "").strip()
    if said in ("0", "1"):
        return said == "1"
    community_cloud = project.parts[:3] == ("/", "mount", "src")
    return not (community_cloud or environ.get("HOSTNAME") == "streamlit")


def store_outlives_the_app(url: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a store at `url` keeps its classes when the app restarts: a database server
    does; a SQLite file does where the disk is kept."""
    return not url.startswith("sqlite") or disk_is_kept(environ)


def engine_for(url: str) -> Engine:
    """This process's engine for `url`, created on first use."""
    key = (url, os.getpid())
    if key not in _ENGINES:
        _ENGINES[key] = _create(url)
    return _ENGINES[key]


def dispose_engine(url: str) -> None:
    """Close this process's connections to `url` (tests, shutdown)."""
    engine = _ENGINES.pop((url, os.getpid()), None)
    if engine is not None:
        engine.dispose()
    for made in [made for made in _CREATED if made[:2] == (url, os.getpid())]:
        _CREATED.discard(made)


def create_tables(
    url: str, tables: Sequence[Table], upgrade: Callable[[Connection], None] | None = None
) -> None:
    """Create `tables` where missing (and `upgrade` the columns of older ones), once per process.
    On PostgreSQL under a lock, so that replicas starting together create them once."""
    made = (url, os.getpid(), tuple(sorted(table.name for table in tables)))
    if made in _CREATED:
        return
    engine = engine_for(url)

    def work() -> None:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(1919)"))
            metadata.create_all(conn, tables=list(tables))
            if upgrade is not None:
                upgrade(conn)

    retry(work)
    _CREATED.add(made)


def _create(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection, _record) -> None:
    """WAL (readers never wait for the writer), a busy timeout, foreign keys; and transactions
    begun by us (`_sqlite_begin`), not by the driver."""
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed write survives a
    cursor.close()  # killed process (not a power cut), at a fraction of FULL's fsyncs


def _sqlite_begin(conn: Connection) -> None:
    # A unit that writes begins IMMEDIATE, taking the write lock up front so the busy timeout
    # applies: a deferred transaction that reads, then writes, fails at once with "database is
    # locked" (readers stay deferred: in WAL they never wait).
    immediate = conn.get_execution_options().get("begin_immediate", True)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _is_locked(error: OperationalError) -> bool:
    message = str(error.orig).lower()
    return "database is locked" in message or "database is busy" in message


def retry(work: Callable[[], T]) -> T:
    """Run `work`, again after a short, growing, jittered sleep while SQLite says locked."""
    for attempt in range(LOCKED_RETRIES):
        try:
            return work()
        except OperationalError as error:
            if not _is_locked(error) or attempt == LOCKED_RETRIES - 1:
                raise
            time.sleep(0.05 * 2**attempt * (0.5 + random.random()))
    raise AssertionError("unreachable")


def digest(token: str) -> str:
    """What a store keeps of a secret token: its SHA-256 (the token itself is never stored)."""
    return hashlib.sha256(str(token).encode()).hexdigest()


def plain(typed: object, limit: int) -> str:
    """Typed text kept as text: NFC, control and format characters dropped, whitespace runs
    as one space, at most `limit` characters. Never parsed as markup here or anywhere."""
    cleaned = "".join(
        " " if ch.isspace() else ch
        for ch in unicodedata.normalize("NFC", str(typed))
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    return re.sub(r" +", " ", cleaned).strip()[:limit]


def upsert(conn: Connection):
    """The dialect's INSERT, which has ON CONFLICT DO UPDATE on both databases."""
    return postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert


class Database:
    """A store on one database: its tables (created on first use), its clock, and units of
    work, each one transaction, committed when the work returns and rolled back when it raises."""

    TABLES: tuple[Table, ...] = ()

    def __init__(self, url: str | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self.url = url or default_url()
        self.engine = engine_for(self.url)
        self.clock = clock
        create_tables(self.url, self.TABLES, self.upgrade)

    @staticmethod
    def upgrade(conn: Connection) -> None:
        """Columns a store made by an older version lacks (create_all adds tables, never
        columns)."""

    def _unit(self, work: Callable[[Connection, float], T], *, write: bool = True) -> T:
        def once() -> T:
            with self.engine.connect() as conn:
                conn.execution_options(begin_immediate=write)
                with conn.begin():
                    return work(conn, self.clock())

        return retry(once)

    def dispose(self) -> None:
        """Close this process's connections to the store's database."""
        dispose_engine(self.url)
