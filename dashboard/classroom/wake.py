"""Followers woken when their class changes, not at their next poll (issue 53, item 2).

A student's screen learns what the teacher did from its follow panel (`bar.follow_panel`, a
fragment): the view sent, a question asked, closed or revealed. Polled by every browser, that
costs the server a run per student every few seconds while nothing happens, and a class still
waits up to a poll for what the teacher did. Instead, one watch per server process reads the
store's `news` for every class that has a follower in this process, every WATCH_S, and when a
class's news change it reruns the follow panel of each of its followers here, as the browser's
timer would have (a fragment run, widget states untouched). The followers of a class on other
workers (`deploy/serve`) are woken by their own process's watch: they all read one store.

`listen(code)`, called by the follow panel as it runs, puts this screen on its class's list
(the session, the fragment, and the run's context for the page and the link it shows); `watch`,
started by the served app's lifespan (`server.warm_start`), is the loop. Without a watch (a test
of the script alone, AppTest), `poll_s` keeps the browser's poll short instead.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    ScriptRunContext,
    ThreadState,
    get_script_run_ctx,
)

from dashboard.classroom.database import default_url
from dashboard.classroom.store import ClassStore

log = logging.getLogger(__name__)

WATCH_S = 0.25  # how often a server reads the news of the classes it has followers of
POLL_S = 2.0  # a follower's own poll where no watch runs
SAFETY_POLL_S = 20.0  # where one does: in case a wake was lost (the store unreachable a moment)
BACK_OFF_S = 2.0  # after a failed read of the store


@dataclass
class Listener:
    """One follower's screen in this process: its session, its follow panel's fragment, and
    the context of the run that drew it (its page, and the link as the page left it)."""

    session_id: str
    fragment_id: str
    ctx: ScriptRunContext


class Watch:
    """The listeners of this process by class code, and the news last seen for each class."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listeners: dict[str, dict[str, Listener]] = {}
        self.seen: dict[str, tuple | None] = {}
        self.running = False
        self.wakes = 0  # follow panels rerun by the watch, since the server started

    def listen(self, code: str) -> None:
        """This run's follow panel listens for class `code` (called inside the fragment)."""
        ctx = get_script_run_ctx()
        fragment_id = ThreadState.get().fragment_id
        if not self.running or ctx is None or not fragment_id:
            return
        with self.lock:
            for other, listeners in self.listeners.items():  # a screen follows one class
                if other != code:
                    listeners.pop(ctx.session_id, None)
            listening = self.listeners.setdefault(code, {})
            listening[ctx.session_id] = Listener(ctx.session_id, fragment_id, ctx)

    def codes(self) -> list[str]:
        with self.lock:
            return [code for code, listeners in self.listeners.items() if listeners]

    def changed(self, news: dict[str, tuple | None]) -> list[str]:
        """The classes whose news differ from what the last read saw (a class read for the
        first time is not news: its followers drew it as they started listening)."""
        moved = [c for c, n in news.items() if c in self.seen and self.seen[c] != n]
        self.seen = dict(news)
        return moved

    def wake(self, code: str, runtime: Runtime) -> int:
        """Rerun the follow panel of each follower of class `code` in this process (on the
        server's event loop, where a session takes its reruns); forget the gone ones."""
        with self.lock:
            listeners = list(self.listeners.get(code, {}).values())
        woken = 0
        for listener in listeners:
            session = runtime.get_app_session(listener.session_id)
            if session is None or not session.has_fragment(listener.fragment_id):
                self.forget(code, listener)
                continue
            rerun = ClientState()
            rerun.query_string = listener.ctx.query_string
            rerun.page_script_hash = listener.ctx.page_script_hash
            rerun.fragment_id = listener.fragment_id
            rerun.is_auto_rerun = True  # as the browser's timer sends it
            session.request_rerun(rerun)  # no widget states: the session keeps its own
            woken += 1
        self.wakes += woken
        return woken

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


WATCH = Watch()


def listen(code: str) -> None:
    """The follow panel of this run listens for what class `code`'s teacher does."""
    WATCH.listen(code)


def poll_s() -> float:
    """How often a follower's browser asks by itself: rarely where the watch wakes it."""
    return SAFETY_POLL_S if WATCH.running else POLL_S


@functools.cache
def store_for(url: str) -> ClassStore:
    """The watch's store (its engine is the one the app's store shares, per URL)."""
    return ClassStore(url)


def read_news(codes: Collection[str]) -> dict[str, tuple | None]:
    """The news of these classes in the class store (ATTENTION_CLASS_DB, or the default)."""
    return store_for(default_url()).news(codes)


async def watch(read_news: Callable[[list[str]], dict[str, tuple | None]] = read_news) -> None:
    """The server's loop: every WATCH_S, `read_news(codes)` (the store's `news`, in a thread:
    the event loop waits for no database) for the classes followed here, and a wake for each
    class whose news changed. Runs on the server's event loop until cancelled."""
    WATCH.running = True
    try:
        while True:
            await asyncio.sleep(WATCH_S)
            codes = WATCH.codes()
            if not codes or not Runtime.exists():
                continue
            runtime = Runtime.instance()
            try:
                news = await asyncio.to_thread(read_news, codes)
            except Exception:  # the store unreachable a moment: the followers' poll covers it
                log.warning("the class watch could not read the store", exc_info=True)
                await asyncio.sleep(BACK_OFF_S)
                continue
            for code in WATCH.changed(news):
                WATCH.wake(code, runtime)
            WATCH.prune(runtime)
    finally:
        WATCH.running = False
