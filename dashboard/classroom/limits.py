"""The class store's rate limits, counted in the database so that they hold across workers and
replicas: joins per class, pairing requests and lookups of unknown codes store-wide, each over
the last WINDOW seconds (why these numbers: docs/classroom.md, "Security choices"). Plain
Python: nothing here imports Streamlit.
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from dashboard.classroom.schema import devices, misses, students

WINDOW = 60.0  # seconds the limits count over
JOINS_PER_MINUTE = 120  # per class: a class of 60 joining at once, twice over
MISSES_PER_MINUTE = 60  # store-wide lookups of unknown codes before code-only calls are refused
PAIRS_PER_MINUTE = 60  # store-wide requests for a pairing code
WRONG_CODES = "Too many wrong class codes: try again in a minute."


class RateLimited(PermissionError):
    """Too many joins to one class, or too many unknown codes store-wide, in the last minute:
    try again after `retry_after` seconds."""

    retry_after = WINDOW

    def __init__(self, message: str, unknown_code: bool = False) -> None:
        super().__init__(message)
        self.unknown_code = unknown_code


def record_miss(conn: Connection, now: float) -> None:
    """One lookup of a code that names no class, now (and the misses older than the window
    forgotten)."""
    forget_misses(conn, now)
    conn.execute(insert(misses).values(at=now))


def forget_misses(conn: Connection, now: float) -> None:
    """The misses the window no longer counts, gone."""
    conn.execute(delete(misses).where(misses.c.at < now - WINDOW))


def too_many_misses(conn: Connection, now: float, limit: int = MISSES_PER_MINUTE) -> bool:
    """Whether unknown codes have been tried `limit` times in the window."""
    recent = select(func.count()).select_from(misses).where(misses.c.at >= now - WINDOW)
    return conn.execute(recent).scalar_one() >= limit


def check_joins(conn: Connection, code: str, now: float, limit: int = JOINS_PER_MINUTE) -> None:
    """RateLimited when `limit` students have joined the class in the window."""
    recent = (
        select(func.count())
        .select_from(students)
        .where(students.c.class_code == code, students.c.joined_at >= now - WINDOW)
    )
    if conn.execute(recent).scalar_one() >= limit:
        raise RateLimited("Too many joins to this class: try again in a minute.")


def check_pairs(conn: Connection, now: float) -> None:
    """RateLimited when PAIRS_PER_MINUTE screens wait for a pairing code asked in the window."""
    recent = (
        select(func.count())
        .select_from(devices)
        .where(devices.c.class_code.is_(None), devices.c.requested_at >= now - WINDOW)
    )
    if conn.execute(recent).scalar_one() >= PAIRS_PER_MINUTE:
        raise RateLimited("Too many screens are asking to be added: try in a minute.")
