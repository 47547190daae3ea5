"""Pairing the teacher's other screens with a class (a laptop beside the projector, issue 42
item 7): a screen asks for a pairing code and keeps its own token, the teacher types the code
where the class runs, and the screen's token is a teacher's from then on. No token travels
between the screens, and the store keeps only its digest. Plain Python: nothing here imports
Streamlit.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from dashboard.classroom.schema import PAIR_LENGTH, devices, fresh_code

PAIR_SECONDS = 600  # a device waits this long for the teacher to type its code


def unused(now: float):
    """Screens whose pairing code expired before the teacher typed it."""
    return devices.c.class_code.is_(None) & (devices.c.requested_at < now - PAIR_SECONDS)


def forget_unused(conn: Connection, now: float) -> None:
    """The screens whose code expired unused, gone."""
    conn.execute(delete(devices).where(unused(now)))


def request(conn: Connection, token_hash: str, now: float) -> str:
    """A waiting screen with this token's digest: its fresh pairing code."""
    pair = fresh_code(conn, devices.c.pair_code, PAIR_LENGTH)
    conn.execute(insert(devices).values(pair_code=pair, token_hash=token_hash, requested_at=now))
    return pair


def add(conn: Connection, class_code: str, pair: str, typed: str, now: float) -> None:
    """The screen waiting with code `pair` joins the class as a teacher's; LookupError (naming
    the code as `typed`) when no screen waits with it."""
    waiting = (
        (devices.c.pair_code == pair)
        & devices.c.class_code.is_(None)
        & (devices.c.requested_at >= now - PAIR_SECONDS)
    )
    added = conn.execute(
        update(devices).where(waiting).values(class_code=class_code, pair_code=None)
    ).rowcount
    if not added:
        raise LookupError(
            f"No screen is waiting with the code {pair or typed!r}: check it, or "
            "press *Show a code for this screen* again on that screen (a code works "
            "once, for 10 minutes)."
        )


def class_of(conn: Connection, token_hash: str, now: float) -> str | None:
    """The class the screen with this token's digest was added to, or None while it waits;
    LookupError when its code expired unused or its class went."""
    row = conn.execute(select(devices).where(devices.c.token_hash == token_hash)).first()
    if row is None or (row.class_code is None and row.requested_at < now - PAIR_SECONDS):
        raise LookupError("This screen's code expired: ask for a new one.")
    return row.class_code


def is_screen_of(conn: Connection, class_code: str, token_hash: str) -> bool:
    """Whether the screen with this token's digest was added to the class."""
    added = select(devices.c.id).where(
        devices.c.token_hash == token_hash, devices.c.class_code == class_code
    )
    return conn.execute(added).first() is not None


def screens_of(conn: Connection, class_code: str) -> list[str]:
    """The token digests of the screens added to the class, sorted."""
    found = select(devices.c.token_hash).where(devices.c.class_code == class_code)
    return sorted(conn.execute(found).scalars())


def seat_screens(conn: Connection, class_code: str, hashes: list[str], now: float) -> None:
    """The screens of a class continued from a file, added to it again (a screen's waiting
    request, if any, gives way to its place in the class)."""
    conn.execute(delete(devices).where(devices.c.token_hash.in_(hashes)))
    for screen in hashes:
        conn.execute(
            insert(devices).values(token_hash=screen, class_code=class_code, requested_at=now)
        )
