"""A self-learner's progress, kept across reloads and visits without an account (issue 30,
item 6; issue 51, item 1): which check-yourself questions each lesson has had answered right,
the best score on each drill set, and the concept check's answers (dashboard/self_check.py).

The browser keeps it: the whole copy in one cookie, `attention_progress` (its format, versions
and bound: dashboard/classroom/progress_copy.py), written again at each change and kept
COOKIE_SECONDS from then. Cookies are set by a line of JavaScript (`seat.write_cookies`, as the
class's seats are): queued during the script run, written by the frame (streamlit_app.py) once
the page has run, or at the start of the next run after a button's callback (Forget me).

The server keeps a second copy, a cache: the progress store (dashboard/classroom/learners.py)
under the digest of a private token, which the browser holds in the cookie `attention_learner`,
in the class store's database (SQLite by default, PostgreSQL when ATTENTION_CLASS_DB names one).
On Community Cloud the server's disk goes when the app sleeps, its copy with it; the browser's
survives. Once a session, `progress()` reads both and merges them (the union; a drill set's
better score; otherwise the browser's value), and writes the cookie again where the merge
differs from it: a learner from before the browser kept a copy, a cookie that lost items. A
cookie that does not read is logged and ignored, as is a store that cannot be reached: they
cost the learner that copy, never the lesson.

Nothing is written before a first item is kept (a right answer, a concept-check answer), so a
visitor who answers nothing leaves nothing.
"Forget me" (the home page) deletes the store's rows, the session's copy and both cookies.
"""

from __future__ import annotations

import logging

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.classroom import progress_copy, seat

COOKIE = "attention_learner"  # the token of the store's copy
COPY_COOKIE = "attention_progress"  # the browser's copy: the progress itself
COOKIE_SECONDS = 180 * 24 * 3600  # as long as the store keeps the progress (LEARNER_SECONDS)
TOKEN_KEY, PROGRESS_KEY = "learner_token", "learner_progress"  # session keys

log = logging.getLogger(__name__)


def token(create: bool = False) -> str | None:
    """This browser's learner token: the session's, else the cookie's; a new one (its cookie
    queued now) when `create` and there is none."""
    state = st.session_state
    if TOKEN_KEY not in state:
        cookie = st.context.cookies.get(COOKIE)  # text only: a test's stand-in is no cookie
        state[TOKEN_KEY] = cookie if isinstance(cookie, str) and cookie else None
    if state[TOKEN_KEY] is None and create:
        state[TOKEN_KEY] = seat.progress_store().new_learner()
        seat.queue_cookie(COOKIE, state[TOKEN_KEY], COOKIE_SECONDS)
    return state[TOKEN_KEY]


def browser_copy() -> dict[str, str]:
    """The progress in this browser's cookie ({} without one, or with one that does not read)."""
    value = st.context.cookies.get(COPY_COOKIE)
    if not isinstance(value, str) or not value:
        return {}
    try:
        return progress_copy.decode(value)
    except ValueError as error:  # a cookie from elsewhere, cut short or written by hand
        log.warning("learner progress cookie ignored: %s", error)
        return {}


def stored_copy() -> dict[str, str]:
    """The store's copy under this browser's token ({} without one, or when it cannot be
    read); an item the browser's copy could not hold is left out."""
    mine = token()
    if mine is None:
        return {}
    try:
        stored = seat.progress_store().progress_of(mine)
    except (SQLAlchemyError, ValueError) as error:  # a stale or foreign cookie, no database
        log.warning("learner progress not read: %s", error)
        return {}
    return {item: value for item, value in stored.items() if not progress_copy.problem(item, value)}


def progress() -> dict[str, str]:
    """Everything this learner has kept ({} before a first right answer), read once a session:
    the browser's copy and the store's, merged; the cookie written again if the merge adds."""
    state = st.session_state
    if PROGRESS_KEY not in state:
        browser = browser_copy()
        state[PROGRESS_KEY] = progress_copy.merge(browser, stored_copy())
        if state[PROGRESS_KEY] != browser:
            save(state[PROGRESS_KEY])
    return state[PROGRESS_KEY]


def save(kept: dict[str, str]) -> None:
    """Queue the browser's copy, whole, for COOKIE_SECONDS from now; a copy the cookie could
    not hold is not written (logged), never cut."""
    try:
        value = progress_copy.encode(kept)
    except ValueError as error:
        log.warning("learner progress cookie not written: %s", error)
        return
    seat.queue_cookie(COPY_COOKIE, value, COOKIE_SECONDS)


def keep(item: str, value: str) -> None:
    """Keep one item, in the browser's copy and the store's (unchanged ones cost nothing)."""
    kept = progress()
    if kept.get(item) == value:
        return
    kept[item] = value
    save(kept)
    try:
        seat.progress_store().record(token(create=True), item, value)
    except (SQLAlchemyError, ValueError) as error:
        log.warning("learner progress not kept in the store: %s", error)


def answered_right(lesson: str, number: int, count: int) -> None:
    """Question `number` of a lesson's `count` answered right."""
    keep(f"count:{lesson}", str(count))
    keep(f"right:{lesson}:{number}", "1")


def drill_score(exercise_set: int, right: int, answered: int) -> None:
    """A drill set's score, kept when it is the best so far (most right, then fewest tried)."""
    if right == 0:
        return
    item = f"drills:{exercise_set}"
    best, score = progress().get(item), f"{right}/{answered}"
    if best is None or progress_copy.score_rank(score) > progress_copy.score_rank(best):
        keep(item, score)


def lesson_state(lesson: str) -> tuple[int, int]:
    """(questions answered right, questions) of a lesson's Check yourself; (0, 0) unseen."""
    kept = progress()
    count = int(kept.get(f"count:{lesson}", 0))
    right = sum(1 for item in kept if item.startswith(f"right:{lesson}:"))
    return min(right, count), count


def forget() -> None:
    """Delete this learner's progress: the store's rows, the session's copy, both cookies."""
    mine = token()
    if mine is not None:
        try:
            seat.progress_store().forget_learner(mine)
        except (SQLAlchemyError, ValueError) as error:
            log.warning("learner progress not forgotten: %s", error)
    st.session_state[TOKEN_KEY] = None
    st.session_state[PROGRESS_KEY] = {}
    seat.queue_cookie(COOKIE, "", 0)
    seat.queue_cookie(COPY_COOKIE, "", 0)
