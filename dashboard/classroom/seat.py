"""Who this browser is in a class: the teacher, a student, or nobody yet; and this process's one
class store and one progress store (a learner's, dashboard/progress.py).

A seat is a class code and a token. It lives in `st.session_state` for the session, and in a
cookie of the browser (set by a line of JavaScript, since Streamlit's `st.context.cookies` only
reads), so that a reload, a second tab or a reconnection to another worker of `deploy/serve`
finds the same seat: the browser sends its cookies with the websocket handshake, and a fresh
session reads them from `st.context.cookies`. Two cookies, `attention_teacher` and
`attention_student`, each `CODE.token`: a teacher who tries the join link in another tab stays
the teacher in the first. The tokens never go into a URL a student sees: the teacher's private
link carries theirs once, and the page takes it out of the address bar at once.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, replace

import streamlit as st

from dashboard import state
from dashboard.classroom import wake
from dashboard.classroom.database import default_url, store_outlives_the_app
from dashboard.classroom.learners import ProgressStore
from dashboard.classroom.store import (
    COURSE_SECONDS,
    EXPIRY_SECONDS,
    ClassStore,
    RateLimited,
    UnknownClass,
    normalise_code,
)

COOKIES = {"teacher": "attention_teacher", "student": "attention_student"}
JOIN_PARAM = "join"  # /class?join=CODE: the join link on the projector
TEACHER_PARAM = "teacher"  # /class?teacher=CODE.token: the teacher's private link
PENDING_JOIN = "class_join"  # session key: the code a join link brought
ENDED_KEY = "class_ended"  # session key: a joined student's class went; said once, where they are


@dataclass(frozen=True)
class Seat:
    """A browser's place in a class."""

    code: str
    token: str
    role: str  # "teacher" or "student"
    nickname: str | None = None
    lifetime: float = EXPIRY_SECONDS  # its class's, read by `remember`: a lecture's or a course's

    @property
    def cookie_value(self) -> str:
        return f"{self.code}.{self.token}"


@state.cached(keep=True)
def store_for(url: str) -> ClassStore:
    """One store (one engine, pooled connections) per database URL per process; what its
    writes change, the server's class watch reads at once (wake.soon)."""
    return ClassStore(url, on_news=wake.soon)


def store_lasts() -> bool:
    """Whether the class store keeps its classes when the app restarts: False for a SQLite file
    on a host whose disk is not kept (Streamlit Community Cloud: database.disk_is_kept)."""
    return store_outlives_the_app(default_url())


WHERE_DATA_LIVES = (
    "This app keeps its classes in a file on a disk its host does not keep (Streamlit "
    "Community Cloud wipes it when the app sleeps after 12 hours without visitors, or is "
    "updated): save the class to a file after each lecture and continue it from that file at "
    "the next, or give the app a PostgreSQL database in ATTENTION_CLASS_DB (docs/classroom.md)."
)


def store() -> ClassStore:
    """The class store: ATTENTION_CLASS_DB, or data/classroom.db."""
    return store_for(default_url())


@state.cached(keep=True)
def progress_store_for(url: str) -> ProgressStore:
    """One progress store per database URL per process (sharing the class store's engine)."""
    return ProgressStore(url)


def progress_store() -> ProgressStore:
    """The self-learners' progress, in the class store's database."""
    return progress_store_for(default_url())


def problem(error: Exception) -> str:
    """What a refusal of the store means, in words for the screen (never a traceback)."""
    if isinstance(error, RateLimited):
        return f"{error} (Wait {int(error.retry_after)} seconds, then try again.)"
    if isinstance(error, UnknownClass):
        return "No class has that code: it may have ended or expired. Check the code."
    if isinstance(error, LookupError):
        return str(error)
    if isinstance(error, PermissionError):
        return "This browser's place in the class is not valid any more. " + str(error)
    if isinstance(error, ValueError):
        return str(error)
    return "The class store cannot be reached right now; try again in a moment."


def lifetimes() -> str:
    """How long an idle class lives, both kinds, in words (a class that went is not asked)."""
    return (
        f"{EXPIRY_SECONDS // 3600} hours without activity for a lecture, "
        f"{COURSE_SECONDS // 86400} days for a course"
    )


def ended(code: str) -> str:
    """What a joined student is told when their class is no longer in the store."""
    return (
        f"Class {code} has ended (your teacher ended it, or it expired: {lifetimes()}). Join "
        "another with a new code."
    )


def gone(code: str, error: Exception) -> str:
    """What the projector says when its class went while it showed it: ended (from the
    teacher's other device) or expired, and where its report went; another refusal as it is."""
    if not isinstance(error, UnknownClass):
        return problem(error)
    return (
        f"Class {code} has ended: it was ended from another device, or it expired "
        f"({lifetimes()}), and everything in it is deleted. Its report survives only as a CSV "
        "downloaded before the end (Class report, on the teacher's screen)."
    )


def lost(student: Seat, error: Exception) -> None:
    """A joined student's class refused their seat: drop the seat and keep, to say once where
    the student is, that the class ended (or why else the seat went)."""
    if isinstance(error, UnknownClass):
        said = ended(student.code)
    else:
        said = f"{problem(error)} Join another with a new code."
    st.session_state[ENDED_KEY] = said
    forget("student")


def check_code(code: str) -> str | None:
    """A code a join link brought, checked as the link opens: None when a class has it (or
    there is no code), else what is wrong. A lookup without a token, which the store counts
    like a join: an unknown code is a miss, and past the limit every code is RateLimited."""
    if not normalise_code(code):
        return None
    try:
        store().role(code, "")
    except RateLimited as error:
        return problem(error)
    except PermissionError:  # a live class (the empty token is nobody's)
        return None
    except Exception as error:  # unknown or expired code, database down
        return problem(error)
    return None


def _key(role: str) -> str:
    return f"class_{role}_seat"


def parse(value: str | None) -> tuple[str, str] | None:
    """(code, token) from a cookie or a private link's `CODE.token` (text only: a test's
    stand-in for the browser's cookies is no cookie)."""
    code, dot, token = (value if isinstance(value, str) else "").partition(".")
    return (normalise_code(code), token) if dot and code and token else None


def seat(role: str) -> Seat | None:
    """This session's seat as `role`: from the session, else from the browser's cookie (checked
    with the store once per session), else None."""
    found = st.session_state.get(_key(role))
    if found is not None:
        return found
    from_cookie = parse(st.context.cookies.get(COOKIES[role]))
    if from_cookie is None or st.session_state.get(f"{_key(role)}_checked") == from_cookie:
        return None
    st.session_state[f"{_key(role)}_checked"] = from_cookie  # a stale cookie is asked once
    code, token = from_cookie
    nickname = None
    try:
        if store().role(code, token) != role:
            return None
        if role == "student":  # the cookie holds the seat, the store the name
            nickname = store().nickname(code, token)
    except UnknownClass:  # the class went while this browser was away
        if role == "student":
            st.session_state[ENDED_KEY] = ended(code)
        return None
    except (LookupError, PermissionError):
        return None
    except Exception:  # the database is down: no seat now, ask again next session
        return None
    remember(Seat(code, token, role, nickname))  # the cookie again, its life from now
    return st.session_state[_key(role)]  # as remembered: with its class's lifetime


def teacher() -> Seat | None:
    return seat("teacher")


def student() -> Seat | None:
    return seat("student")


def remember(found: Seat) -> None:
    """Keep the seat for the session and in the browser's cookie (written by `write_cookies`,
    so that a button's callback can call this too) for as long as its class lives idle: a
    lecture's 12 hours, a course's 30 days."""
    # the class went meanwhile, or the database is down: a lecture's lifetime, the default
    with contextlib.suppress(Exception):
        found = replace(found, lifetime=store().lifetime(found.code))
    st.session_state[_key(found.role)] = found
    queue_cookie(COOKIES[found.role], found.cookie_value, int(found.lifetime))


def forget(role: str) -> None:
    """Drop the seat: the class ended, expired or refused the token."""
    st.session_state.pop(_key(role), None)
    st.session_state[f"{_key(role)}_checked"] = parse(st.context.cookies.get(COOKIES[role]))
    queue_cookie(COOKIES[role], "", 0)


def queue_cookie(name: str, value: str, seconds: int) -> None:
    st.session_state.setdefault("class_cookies", {})[name] = (value, seconds)


def write_cookies() -> None:
    """Set (or, with 0 seconds, delete) the cookies queued this run, with one line of
    JavaScript each; names and values are ours (a code and a URL-safe token), quoted as JSON.
    The element is drawn in the sidebar, where it takes no room."""
    for name, (value, seconds) in st.session_state.pop("class_cookies", {}).items():
        assignment = json.dumps(f"{name}={value}; path=/; max-age={seconds}; samesite=strict")
        with st.sidebar:
            st.html(
                "<script>document.cookie = "
                f"{assignment} + (location.protocol === 'https:' ? '; secure' : '');</script>",
                unsafe_allow_javascript=True,
                width="content",
            )


def take_link() -> None:
    """Before the sidebar reads the link: move a join code into the session, and turn a private
    teacher link into the teacher's seat, taking its token out of the address bar at once."""
    params = st.query_params
    if JOIN_PARAM in params:
        st.session_state[PENDING_JOIN] = normalise_code(params.get(JOIN_PARAM))[:12]
        del params[JOIN_PARAM]
    if TEACHER_PARAM in params:
        raw = params.get(TEACHER_PARAM) or ""
        private = parse(raw)
        del params[TEACHER_PARAM]
        # a link cut before its secret part keeps its code: the page says it is incomplete
        cut = (normalise_code(raw.partition(".")[0]), "")
        st.session_state["class_private_link"] = private or cut


NOT_THE_TEACHER = (
    "This teacher link is not valid for that class: its secret part is not the teacher's "
    "(mistyped, cut short, or from another class). Open the private link this page showed when "
    "you started the class, or start a new one."
)


INCOMPLETE = (
    "This teacher link is incomplete: it ends before its secret part (the characters after the "
    "class code and a dot). Copy the whole private link again from the screen that started the "
    "class."
)


LINK_TOKEN = "class_link_token"  # session key: (code, token) of a private link to no class


def tokens_for(code: str) -> list[str]:
    """The teacher tokens this browser holds for class `code`: its teacher cookie's, and a
    private link's opened this session: what may continue that class from its file."""
    held = [parse(st.context.cookies.get(COOKIES["teacher"])), st.session_state.get(LINK_TOKEN)]
    return [token for found in held if found and found[0] == code for token in found[1:]]


def open_private_link() -> str | None:
    """The private link brought earlier this run, checked: None when it made the teacher's seat,
    else what was wrong with it (a link cut short of its token, to a live class: incomplete)."""
    private = st.session_state.pop("class_private_link", None)
    if private is None:
        return None
    code, token = private
    if not token:  # no secret part: a live class's link was cut short, else no class
        refused = check_code(code) if code else problem(UnknownClass())
        return INCOMPLETE if refused is None else refused
    try:
        if store().role(code, token) != "teacher":
            return NOT_THE_TEACHER
    except RateLimited as error:
        return problem(error)
    except PermissionError:  # the code is a live class, the token not its teacher's
        return NOT_THE_TEACHER
    except UnknownClass:  # gone, or lost with the app's disk: its file may bring it back
        st.session_state[LINK_TOKEN] = private
        return (
            f"No class {code} is here now: it ended, expired, or went with the app's disk. If "
            "you saved it to a file, continue it from that file below (this link lets you)."
        )
    except Exception as error:  # database down
        return problem(error)
    remember(Seat(code, token, "teacher"))
    return None
