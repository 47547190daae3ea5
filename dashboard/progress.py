"""A self-learner's progress, kept across reloads and visits without an account (issue 30,
item 6): which check-yourself questions each lesson has had answered right, and the best score
on each drill set.

The browser holds a private token in a cookie, `attention_learner` (set by a line of
JavaScript, as the class's seats are: dashboard/classroom/seat.py); the progress store
(dashboard/classroom/learners.py) keeps it under the token's digest, in the class store's
database: SQLite by default, PostgreSQL when ATTENTION_CLASS_DB names one. Nothing is
written until a first right answer, so a visitor who answers nothing leaves nothing. The
session reads the store once and keeps its copy; "Forget me" (the home page) deletes both and
the cookie. A store that cannot be reached costs the learner the memory, never the lesson: the
error is logged and the page goes on.
"""

from __future__ import annotations

import logging

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.classroom import seat

COOKIE = "attention_learner"
COOKIE_SECONDS = 180 * 24 * 3600  # as long as the store keeps the progress (LEARNER_SECONDS)
TOKEN_KEY, PROGRESS_KEY = "learner_token", "learner_progress"  # session keys

log = logging.getLogger(__name__)


def token(create: bool = False) -> str | None:
    """This browser's learner token: the session's, else the cookie's; a new one (its cookie
    written now) when `create` and there is none."""
    state = st.session_state
    if TOKEN_KEY not in state:
        cookie = st.context.cookies.get(COOKIE)  # text only: a test's stand-in is no cookie
        state[TOKEN_KEY] = cookie if isinstance(cookie, str) and cookie else None
    if state[TOKEN_KEY] is None and create:
        state[TOKEN_KEY] = seat.progress_store().new_learner()
        seat.queue_cookie(COOKIE, state[TOKEN_KEY], COOKIE_SECONDS)
        seat.write_cookies()
    return state[TOKEN_KEY]


def progress() -> dict[str, str]:
    """Everything this learner has kept ({} before a first right answer), read once a session."""
    state = st.session_state
    if PROGRESS_KEY not in state:
        mine = token()
        state[PROGRESS_KEY] = {}
        if mine is not None:
            try:
                state[PROGRESS_KEY] = seat.progress_store().progress_of(mine)
            except (SQLAlchemyError, ValueError) as error:  # a stale or foreign cookie
                log.warning("learner progress not read: %s", error)
    return state[PROGRESS_KEY]


def keep(item: str, value: str) -> None:
    """Keep one item (unchanged ones cost nothing: no write)."""
    kept = progress()
    if kept.get(item) == value:
        return
    kept[item] = value
    try:
        seat.progress_store().record(token(create=True), item, value)
    except (SQLAlchemyError, ValueError) as error:
        log.warning("learner progress not kept: %s", error)


def answered_right(lesson: str, number: int, count: int) -> None:
    """Question `number` of a lesson's `count` answered right."""
    keep(f"count:{lesson}", str(count))
    keep(f"right:{lesson}:{number}", "1")


def drill_score(exercise_set: int, right: int, answered: int) -> None:
    """A drill set's score, kept when it is the best so far (most right, then fewest tried)."""
    if right == 0:
        return
    item = f"drills:{exercise_set}"
    best = progress().get(item)
    if best is not None:
        old_right, old_answered = (int(n) for n in best.split("/"))
        if (old_right, -old_answered) >= (right, -answered):
            return
    keep(item, f"{right}/{answered}")


def lesson_state(lesson: str) -> tuple[int, int]:
    """(questions answered right, questions) of a lesson's Check yourself; (0, 0) unseen."""
    kept = progress()
    count = int(kept.get(f"count:{lesson}", 0))
    right = sum(1 for item in kept if item.startswith(f"right:{lesson}:"))
    return min(right, count), count


def forget() -> None:
    """Delete this learner's progress, in the store, the session and the cookie."""
    mine = token()
    if mine is not None:
        try:
            seat.progress_store().forget_learner(mine)
        except (SQLAlchemyError, ValueError) as error:
            log.warning("learner progress not forgotten: %s", error)
    st.session_state[TOKEN_KEY] = None
    st.session_state[PROGRESS_KEY] = {}
    seat.queue_cookie(COOKIE, "", 0)
