"""A class's followers are woken by the server when the teacher sends a view or asks a question
(dashboard/classroom/wake.py), not by their browsers' poll.

A real server (`streamlit run streamlit_app.py`: its lifespan starts the class watch), a real
SQLite class store, and three joined students following the teacher, each a tab speaking
Streamlit's protocol (benchmarks/follow.py's `Follower`) that, once seated, never asks the
server for anything (it would not tick if a timer were set: it is deaf). Whatever page it
shows next, the server ran it unasked: a sent view, a question, and a view sent while the
question is open, which waits on the class page until the student sends an answer (the
student's one click here) and then follows. The teacher's clicks are the store's writes, as
the teacher's buttons make them.

Correctness only (each follower gets there, with no error); how fast lives in
`python -m benchmarks.follow` and docs/performance.md. About 20-40 s (a server's warm start).
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from benchmarks.follow import (  # noqa: E402
    ASK,
    CHOICES,
    CLASS_PAGE,
    QUESTION_BUTTON,
    SEND_VIEW,
    VIEW,
    Follower,
    seat_class,
    teacher_on,
)
from benchmarks.load.server import Server, free_port  # noqa: E402
from dashboard.classroom.database import dispose_engine  # noqa: E402
from dashboard.classroom.store import ClassStore  # noqa: E402
from dashboard.classroom.wake import EVERY_ENV  # noqa: E402
from dashboard.server import WHOLE_RUN  # noqa: E402

WAIT_S = 90.0  # for a slow, loaded machine: nothing here is timed
QUIET_S = 5.0  # how long a follower is watched not moving (it would in 0.25 s without the hour)
LATER_VIEW = "/step_by_step?src=random&T=8&d_model=8&heads=2&causal=true&seed=0"


class Deaf(Follower):
    """A follower whose browser never reruns its follow panel: a tick is only counted. It counts
    the navigation messages too (the page list, sent once by a page's run)."""

    navigations = 0
    finished = ""  # the page whose whole run finished last

    async def tick(self) -> None:
        self.ticks += 1

    def _parse(self, data, widgets, errors):
        msg = super()._parse(data, widgets, errors)
        kind = msg.WhichOneof("type")
        if kind == "navigation":
            self.navigations += 1
        elif kind == "script_finished" and msg.script_finished in WHOLE_RUN:
            self.finished = self.page_hash
        return msg

    def drawn(self, path: str, params: dict[str, str]) -> bool:
        """On page `path` with these parameters, its run finished (every message of it read)."""
        return self.on(path, params) and self.finished == self.paths.get(path)


async def until(tabs: list[Follower], there) -> bool:
    deadline = time.perf_counter() + WAIT_S
    while time.perf_counter() < deadline:
        if all(there(tab) for tab in tabs):
            return True
        await asyncio.sleep(0.05)
    return False


def listening(tabs: list[Follower]) -> tuple[asyncio.Event, list[asyncio.Task]]:
    """Each tab reads the runs the server starts, until the event is set."""
    stop = asyncio.Event()
    return stop, [asyncio.create_task(tab.poll(stop)) for tab in tabs]


async def deaf(stop: asyncio.Event, tasks: list[asyncio.Task]) -> None:
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)


async def a_class(base: str, db: str) -> None:
    store = ClassStore(db)
    made, tabs = await seat_class(base, store, 3, seed=0, kind=Deaf)
    assert not tabs[0].result.errors, (dict(tabs[0].result.errors), tabs[0].result.error_messages)
    # the browser polls no more (every 2 s before the watch): no follow fragment has a timer
    assert {tab.every for tab in tabs} == {math.inf}
    stop, tasks = listening(tabs)
    try:
        for tab in tabs:
            tab.navigations = 0
        store.send_view(made.code, made.teacher_token, VIEW)
        assert await until(tabs, lambda tab: tab.drawn("masking", {"T": "8"})), [
            (tab.page_hash, tab.query) for tab in tabs]  # fmt: skip
        # one page drawn on the way: the page left is not run again first (it was, to the
        # frame's navigation and two style blocks, before it switched)
        assert [tab.navigations for tab in tabs] == [1, 1, 1]
        woken = [tab.wakes for tab in tabs]
        assert min(woken) >= 1
        store.ask(made.code, made.teacher_token, "Rows of Q Kᵀ are…", CHOICES, "rows")
        asked = await until(tabs, lambda tab: tab.on(CLASS_PAGE) and QUESTION_BUTTON in tab.buttons)
        assert asked, [(tab.page_hash, tab.buttons) for tab in tabs]
        assert all(tab.wakes > before for tab, before in zip(tabs, woken, strict=True))

        # A view sent while the question is open and unanswered waits on the class page...
        woken = [tab.wakes for tab in tabs]
        store.send_view(made.code, made.teacher_token, LATER_VIEW)
        assert await until(tabs, lambda tab: tab.wakes > woken[tabs.index(tab)])
        await deaf(stop, tasks)
        assert all(tab.on(CLASS_PAGE) and QUESTION_BUTTON in tab.buttons for tab in tabs)
        # ...until the student sends an answer: then the server takes them there, unasked
        for tab in tabs:
            sent = await tab.rerun(tab.click(QUESTION_BUTTON, **{"Your answer": "rows"}), 60, "a")
            assert sent.status is not None
        stop, tasks = listening(tabs)
        assert await until(tabs, lambda tab: tab.on("step_by_step", {"T": "8"})), [
            (tab.page_hash, tab.query) for tab in tabs]  # fmt: skip
        assert sum(tab.ticks for tab in tabs) == 0  # no browser asked: the server woke them all
        qid = store.questions(made.code, made.teacher_token)[-1].qid
        assert store.tally(made.code, made.teacher_token, qid).answered == 3
    finally:
        await deaf(stop, tasks)
        await asyncio.gather(*(tab.close() for tab in tabs), return_exceptions=True)
        store.dispose()
    assert not tabs[0].result.errors, (dict(tabs[0].result.errors), tabs[0].result.error_messages)


def served(tmp_path, monkeypatch, play, **env: str) -> None:
    """`play(base, db)` against a real server (with `env` set) whose class store is a SQLite
    file that this test's store opens too."""
    db = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", db)  # the server's store is this file too
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    server = Server(REPO / "streamlit_app.py", free_port())
    try:
        server.start()
        server.wait_healthy(120)
        asyncio.run(play(f"http://127.0.0.1:{server.port}", db))
    finally:
        server.stop()
        dispose_engine(db)


def test_followers_are_woken_by_the_server_when_the_teacher_sends_or_asks(tmp_path, monkeypatch):
    served(tmp_path, monkeypatch, a_class)


async def clicks_of_the_teacher(base: str, db: str) -> None:
    store = ClassStore(db)
    made, tabs = await seat_class(base, store, 2, seed=1, kind=Deaf)
    teacher = [await teacher_on(base, made, url) for url in (VIEW, f"/{CLASS_PAGE}")]
    assert not tabs[0].result.errors, (dict(tabs[0].result.errors), tabs[0].result.error_messages)
    stop, tasks = listening(tabs)
    try:
        # a write from outside this server (another worker's teacher) is found at the watch's
        # next read, an hour away here: nobody moves, so what moves them next is the click
        store.send_view(made.code, made.teacher_token, LATER_VIEW)
        await asyncio.sleep(QUIET_S)
        assert [tab.wakes for tab in tabs] == [0, 0] and all(
            tab.on("step_by_step") and "T" not in dict(parse_qsl(tab.query)) for tab in tabs
        ), [(tab.wakes, tab.page_hash, tab.query) for tab in tabs]
        await teacher[0].press(SEND_VIEW)
        assert await until(tabs, lambda tab: tab.drawn("masking", {"T": "8"})), [
            (tab.page_hash, tab.query) for tab in tabs]  # fmt: skip
        await teacher[1].press(ASK)
        asked = await until(tabs, lambda tab: tab.on(CLASS_PAGE) and QUESTION_BUTTON in tab.buttons)
        assert asked, [(tab.page_hash, tab.buttons) for tab in tabs]
        assert sum(tab.ticks for tab in tabs) == 0  # no browser asked: the server woke them
    finally:
        await deaf(stop, tasks)
        await asyncio.gather(*(tab.close() for tab in tabs + teacher), return_exceptions=True)
        store.dispose()
    assert not tabs[0].result.errors, (dict(tabs[0].result.errors), tabs[0].result.error_messages)


def test_the_teachers_click_wakes_the_followers_without_waiting_for_the_watchs_read(
    tmp_path, monkeypatch
):
    """The teacher's clicks in the app (a tab with the teacher's cookie: *Send this view to the
    class* on a lesson, *Ask the class* on the class page) tell the server's watch at once
    (`wake.soon`). Its reads are an hour apart here (ATTENTION_WATCH_S), so only being told
    brings the followers, unasked, within the test's wait."""
    served(tmp_path, monkeypatch, clicks_of_the_teacher, **{EVERY_ENV: "3600"})
