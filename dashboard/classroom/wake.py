"""Followers woken when their class changes, not at their next poll (issue 53, item 2).

A student's screen learns what the teacher did from its follow panel (`bar.follow_panel`, a
fragment): the view sent, a question asked, closed or revealed. Polled by every browser, that
cost the server a run per student every 2 s while nothing happened, and a class still waited up
to a poll for what the teacher did. Instead, one watch per server process reads the store's
`news` for every class that has a follower in this process, every WATCH_S, and when a class's
news change it reruns the follow panel of each of its followers here, as the browser's timer
did (a fragment run, widget states untouched), IN_FLIGHT at a time. The followers of a class on
other workers (`deploy/serve`) are woken by their own process's watch: they all read one store.

A follower whose screen is running (a page switch, a slider moved) is woken once that run is
over (`AppSession.is_settled`): a fragment rerun asked in the middle of a page switch is folded
into it by Streamlit with the old page's link, and the follower lands on the right page with the
wrong settings (seen with the browser's own poll beside the watch: one follower in sixty, in
two moments of five). For the same reason the browser no longer polls where a watch runs.

`listen(code)`, called by the follow panel as it runs, puts this screen on its class's list
(the session, the fragment, the browser's context); `again(code)` has its panel run once more
when this run is over; `soon(code)`, called by the app's class store when one of its writes
changed a class's news (the teacher's click, in this process), has the watch read them at once
rather than at its next tick; `watch`, started by the served app's lifespan
(`server.warm_start`), is the loop. Without a watch (a test of the script alone, AppTest),
`poll_s` keeps the browser's poll instead. Measured: docs/performance.md, "2026-11-29, day".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    ThreadState,
    get_script_run_ctx,
)

log = logging.getLogger(__name__)

WATCH_S = 0.25  # how often a server reads the news of the classes it has followers of
EVERY_ENV = "ATTENTION_WATCH_S"  # another period, in seconds (a test: only told reads, `soon`)
SHORTEST_S = 0.05  # the shortest period it takes (less would read the store without a rest)
POLL_S = 2.0  # a follower's own poll where no watch runs
BACK_OFF_S = 2.0  # after a failed read of the store, the watch's or a follow panel's: read again
PRUNE_EVERY = 20  # reads of the news between two looks for closed tabs
IN_FLIGHT = 4  # followers woken at a time (the next as soon as one's run is over)
TURN_S = 0.01  # how often the watch looks, while wakes are owed, for one whose run is over
HELD_S = 3.0  # the longest a woken screen's run keeps its turn from the next follower


@dataclass
class Listener:
    """One follower's screen in this process: its session, its follow panel's fragment, and the
    browser's context (theme, address, time zone) as its last run had it."""

    session_id: str
    fragment_id: str
    context: ContextInfo | None


class Watch:
    """The listeners of this process by class code, the news last seen for each class, and the
    wakes owed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listeners: dict[str, dict[str, Listener]] = {}
        self.seen: dict[str, tuple | None] = {}
        self.owed: dict[str, tuple[str, float]] = {}  # session id -> (its class, not before)
        self.in_flight: dict[str, float] = {}  # sessions woken whose runs are not over: when
        self.running = False
        self.wakes = 0  # follow panels rerun by the watch, since the server started
        self.loop: asyncio.AbstractEventLoop | None = None  # the watch's, while it runs
        self.told: asyncio.Event | None = None  # set by `soon`: read the news now

    def listen(self, code: str) -> None:
        """This run's follow panel listens for class `code` (called inside the fragment)."""
        ctx = get_script_run_ctx(suppress_warning=True)
        if not self.running or ctx is None:  # no watch here, or not a script's run
            return
        fragment_id = ThreadState.get().fragment_id
        if not fragment_id:
            return
        with self.lock:
            for other, listeners in self.listeners.items():  # a screen follows one class
                if other != code:
                    listeners.pop(ctx.session_id, None)
            listening = self.listeners.setdefault(code, {})
            known = listening.get(ctx.session_id)
            context = ctx.context_info or (known.context if known else None)
            listening[ctx.session_id] = Listener(ctx.session_id, fragment_id, context)

    def again(self, code: str, after_s: float = 0.0) -> None:
        """Rerun this screen's follow panel once its run is over (and `after_s` has passed): its
        own read failed, or what it waited for (an answer sent) is done."""
        ctx = get_script_run_ctx(suppress_warning=True)
        if self.running and ctx is not None:
            with self.lock:
                self.owed[ctx.session_id] = (code, time.monotonic() + after_s)

    def soon(self, code: str) -> None:
        """Class `code`'s news changed by a write in this process (any thread): if this process
        has followers of it, the watch reads the news now instead of at its next tick."""
        with self.lock:
            followed = bool(self.listeners.get(code))
        loop, told = self.loop, self.told
        if not (self.running and followed and loop is not None and told is not None):
            return
        with contextlib.suppress(RuntimeError):  # the loop closing: the server is stopping
            loop.call_soon_threadsafe(told.set)

    async def rest(self, seconds: float) -> bool:
        """Sleep `seconds`, or less when told (`soon`); whether it was told."""
        if self.told is None:  # not the watch's loop: nothing can tell
            await asyncio.sleep(seconds)
            return False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.told.wait()
        told = self.told.is_set()
        self.told.clear()  # a write told while the news are read is read at the next tick
        return told

    def codes(self) -> list[str]:
        with self.lock:
            return [code for code, listeners in self.listeners.items() if listeners]

    def changed(self, news: dict[str, tuple | None]) -> list[str]:
        """The classes whose news differ from what the last read saw, and those read for the
        first time (the teacher may have acted between a follower's own read and this one: a
        wake too many is a fragment run, a wake too few a follower left behind)."""
        moved = [c for c, n in news.items() if c not in self.seen or self.seen[c] != n]
        self.seen = dict(news)
        return moved

    def wake(self, code: str) -> None:
        """Owe a wake to each follower of class `code` in this process (paid by `pay`)."""
        with self.lock:
            for session_id in self.listeners.get(code, {}):
                self.owed[session_id] = (code, 0.0)

    def pay(self, runtime: Runtime) -> int:
        """Rerun the follow panel of followers owed a wake, in the order owed, IN_FLIGHT at a
        time (on the server's event loop, where a session takes its reruns): sixty woken
        together share one core's GIL and each takes as long as all of them, and the switching
        costs CPU besides (`server.run_page`). A screen already running waits for a later turn;
        the gone ones are forgotten."""
        now = time.monotonic()
        self.in_flight = {  # a run that takes long (a retraining) holds no turn past HELD_S
            sid: at
            for sid, at in self.in_flight.items()
            if now - at < HELD_S and running(runtime, sid)
        }
        with self.lock:
            due = [(sid, code) for sid, (code, after) in self.owed.items() if after <= now]
        woken = 0
        for sid, code in due:
            if len(self.in_flight) >= IN_FLIGHT:
                break
            with self.lock:
                del self.owed[sid]
                listener = self.listeners.get(code, {}).get(sid)
            if listener is None:  # gone, or now following another class
                continue
            try:
                if self.pay_one(runtime, code, listener):
                    self.in_flight[sid] = now
                    woken += 1
            except Exception:  # one screen's trouble is not the class's: the others are woken
                log.exception("the class watch could not wake session %s", sid)
        self.wakes += woken
        return woken

    def pay_one(self, runtime: Runtime, code: str, listener: Listener) -> bool:
        session = runtime.get_app_session(listener.session_id)
        if session is None:
            self.forget(code, listener)
            return False
        session.track_settling()  # from now on it says whether a run is under way
        if not session.is_settled:  # its fragments are being drawn again: at a later turn
            with self.lock:
                self.owed.setdefault(listener.session_id, (code, 0.0))
            return False
        if not session.has_fragment(listener.fragment_id):  # its page has no panel now
            self.forget(code, listener)
            return False
        session.request_rerun(rerun_of(session, listener))
        return True

    def forget(self, code: str, listener: Listener) -> None:
        with self.lock:
            listening = self.listeners.get(code, {})
            if listening.get(listener.session_id) is listener:
                del listening[listener.session_id]
            if not listening:
                self.listeners.pop(code, None)

    def prune(self, runtime: Runtime) -> None:
        """Forget the screens whose session has ended (closed tabs)."""
        with self.lock:
            gone = [(code, listener) for code, listeners in self.listeners.items()
                    for listener in listeners.values()
                    if runtime.get_app_session(listener.session_id) is None]  # fmt: skip
        for code, listener in gone:
            self.forget(code, listener)


def running(runtime: Runtime, session_id: str) -> bool:
    """Whether the session's run chain is under way (it was told to rerun: `track_settling`)."""
    session = runtime.get_app_session(session_id)
    return session is not None and not session.is_settled


def rerun_of(session: AppSession, listener: Listener) -> ClientState:
    """The follow panel's rerun as the browser's timer sent it: the page and the link the
    session's last run left (Streamlit's own record of them), the browser's context, no widget
    states (the session keeps its own: a stale value would undo a slider just moved)."""
    rerun = ClientState()
    last = getattr(session, "_client_state", None)  # what Streamlit reruns a session with
    if isinstance(last, ClientState):
        rerun.query_string = last.query_string
        if last.HasField("context_info"):
            rerun.context_info.CopyFrom(last.context_info)
    rerun.page_script_hash = session.page_script_hash
    if not rerun.HasField("context_info") and listener.context is not None:
        rerun.context_info.CopyFrom(listener.context)
    rerun.fragment_id = listener.fragment_id
    rerun.is_auto_rerun = True
    return rerun


WATCH = Watch()


def listen(code: str) -> None:
    """The follow panel of this run listens for what class `code`'s teacher does."""
    WATCH.listen(code)


def again(code: str, after_s: float = 0.0) -> None:
    """This screen's follow panel runs again once this run is over (`Watch.again`)."""
    WATCH.again(code, after_s)


def soon(code: str) -> None:
    """A write of this process changed class `code`'s news: the watch reads them now
    (`Watch.soon`; the app's class store calls it, `seat.store_for`)."""
    WATCH.soon(code)


def poll_s() -> float | None:
    """How often a follower's browser asks by itself: never where the watch wakes it."""
    return None if WATCH.running else POLL_S


def period() -> float:
    """WATCH_S, or the seconds in ATTENTION_WATCH_S when it holds a finite number of at least
    SHORTEST_S (anything else: WATCH_S, with a warning)."""
    raw = os.environ.get(EVERY_ENV, "")
    try:
        every = float(raw) if raw else WATCH_S
    except ValueError:
        every = math.nan
    if not (every >= SHORTEST_S and math.isfinite(every)):
        log.warning("%s=%r is not a number of seconds of at least %s: %s s", EVERY_ENV, raw,
                    SHORTEST_S, WATCH_S)  # fmt: skip
        return WATCH_S
    return every


async def watch(read_news: Callable[[Collection[str]], dict[str, tuple | None]]) -> None:
    """The server's loop: every WATCH_S, `read_news(codes)` (the app's class store's `news`,
    given by the server; in a thread: the event loop waits for no database) for the classes
    followed here, and a wake for each class whose news changed. Runs on the server's event
    loop until cancelled."""
    every = period()
    WATCH.loop, WATCH.told = asyncio.get_running_loop(), asyncio.Event()
    WATCH.running = True
    read_at, reads = -math.inf, itertools.count()
    try:
        while True:
            try:
                due = read_at == -math.inf or WATCH.owed or WATCH.in_flight
                told = await WATCH.rest(TURN_S if due else every)
                read = told or time.monotonic() - read_at >= every
                if read:
                    read_at = time.monotonic()
                prune = read and next(reads) % PRUNE_EVERY == 0
                if not await watch_once(read_news, read, prune=prune):
                    read_at = -math.inf  # the read failed (after BACK_OFF_S): read at once
            except Exception:  # never the end of the watch: the followers have no other
                log.exception("the class watch's tick failed")
                await asyncio.sleep(WATCH_S)  # a tick that fails at once does not spin
    finally:
        WATCH.running = False
        WATCH.loop = WATCH.told = None


async def watch_once(read_news, read: bool, prune: bool) -> bool:
    """One tick of the watch: read the news (`read`), owe the wakes, pay those due. False when
    the read failed (the store unreachable: after BACK_OFF_S, the next tick reads again)."""
    if not Runtime.exists():
        return True
    runtime = Runtime.instance()
    codes = WATCH.codes() if read else []
    read_ok = True
    if codes:
        try:
            news = await asyncio.to_thread(read_news, codes)
        except Exception:  # the store unreachable: read again later, against the news last
            # seen, so that nothing the teacher did meanwhile is missed
            log.warning("the class watch could not read the store", exc_info=True)
            await asyncio.sleep(BACK_OFF_S)
            read_ok = False
        else:
            for code in WATCH.changed(news):
                WATCH.wake(code)
    WATCH.pay(runtime)
    if prune:
        WATCH.prune(runtime)
    return read_ok
