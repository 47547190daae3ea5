"""A self-learner's progress, kept without an account (docs/classroom.md): the items a learner's
private token has kept (a question answered right, a drill set's best score), in the same
database as the class store but apart from it (dashboard/progress.py is its page side). Plain
Python: nothing here imports Streamlit.
"""

from __future__ import annotations

import re
import secrets

from sqlalchemy import Column, Float, String, Table, delete, func, select
from sqlalchemy.engine import Connection

from dashboard.classroom.database import TOKEN_BYTES, Database, digest, metadata, plain, upsert

ITEM_CHARS, VALUE_CHARS, MAX_ITEMS = 120, 200, 500  # a learner's progress: bounded rows
LEARNER_SECONDS = 180 * 24 * 3600  # a learner's progress goes 180 days after its last change
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{20,100}")  # secrets.token_urlsafe's alphabet

progress = Table(
    "progress",
    metadata,
    Column("learner_hash", String(64), primary_key=True),  # SHA-256 of the learner's token
    Column("item", String(ITEM_CHARS), primary_key=True),  # "right:masking:2", "drills:3", …
    Column("value", String(VALUE_CHARS), nullable=False),
    Column("updated_at", Float, nullable=False, index=True),
)


class ProgressStore(Database):
    """Learners' progress in a database: `ProgressStore(url)` as `ClassStore(url)`."""

    TABLES = (progress,)

    def new_learner(self) -> str:
        """A learner's private token (256 random bits); nothing is stored until a record. The
        progress unchanged for LEARNER_SECONDS is deleted first (as a new class purges the
        expired ones)."""
        self.purge_expired()
        return secrets.token_urlsafe(TOKEN_BYTES)

    def record(self, token: str, item: str, value: str) -> None:
        """Keep one item of a learner's progress (a later value replaces the earlier).
        ValueError for a malformed token, item or value, or a learner past MAX_ITEMS items."""
        learner = _learner(token)
        item, value = plain(item, ITEM_CHARS), plain(value, VALUE_CHARS)
        if not item:
            raise ValueError("A progress item needs a name.")

        def work(conn: Connection, now: float) -> None:
            mine = progress.c.learner_hash == learner
            known = conn.execute(select(progress.c.item).where(mine, progress.c.item == item))
            if known.first() is None:
                count = conn.execute(select(func.count()).select_from(progress).where(mine))
                if count.scalar_one() >= MAX_ITEMS:
                    raise ValueError(f"A learner keeps at most {MAX_ITEMS} items of progress.")
            row = upsert(conn)(progress).values(
                learner_hash=learner, item=item, value=value, updated_at=now
            )
            conn.execute(
                row.on_conflict_do_update(
                    index_elements=[progress.c.learner_hash, progress.c.item],
                    set_={"value": value, "updated_at": now},
                )
            )

        self._unit(work)

    def progress_of(self, token: str) -> dict[str, str]:
        """Every item a learner's token has kept ({} for a token that kept none); an item
        unchanged for LEARNER_SECONDS is gone, whether or not a purge has deleted it yet."""
        learner = _learner(token)

        def work(conn: Connection, now: float) -> dict[str, str]:
            fresh = progress.c.updated_at >= now - LEARNER_SECONDS
            rows = conn.execute(
                select(progress.c.item, progress.c.value).where(
                    progress.c.learner_hash == learner, fresh
                )
            )
            return {row.item: row.value for row in rows}

        return self._unit(work, write=False)

    def forget_learner(self, token: str) -> int:
        """Delete everything a learner's token kept; how many items went."""
        learner = _learner(token)

        def work(conn: Connection, now: float) -> int:
            return conn.execute(delete(progress).where(progress.c.learner_hash == learner)).rowcount

        return self._unit(work)

    def purge_expired(self, now: float | None = None) -> int:
        """Delete the progress unchanged for LEARNER_SECONDS; how many items went."""

        def work(conn: Connection, clock_now: float) -> int:
            at = clock_now if now is None else now
            old = progress.c.updated_at < at - LEARNER_SECONDS
            return conn.execute(delete(progress).where(old)).rowcount

        return self._unit(work)


def _learner(token: object) -> str:
    """The stored name of a learner's token: its digest (the token itself is never stored)."""
    if not isinstance(token, str) or not TOKEN_PATTERN.fullmatch(token):
        raise ValueError("This learner token is not one the store gave out.")
    return digest(token)
