"""The moments that come together in a class: the teacher sends a view (or a presenter section,
or asks a question) and every student who follows is moved at once. Figures, not a test
(issue 53, item 1; docs/performance.md).

    python -m benchmarks.follow                                   # 60 followers, every moment
    python -m benchmarks.follow --students 60 --moments view,section,question --runs 2
    python -m benchmarks.follow --students 200 --moments view

Each run: a fresh server (`streamlit run`, the project's config, a fresh SQLite class store in
ATTENTION_CLASS_DB) held to one core (taskset; this process, the class, runs on the others); a
class made through the store, N students joined through it, each a browser tab
(`bench_class.Tab`, a websocket speaking Streamlit's protocol) carrying its seat cookie, as a
joined student's browser does, on lesson 1 (`step_by_step`) with "Follow my teacher
automatically" switched on. Each tab reads the runs of its follow fragment
(`bar.follow_panel`) that the server starts (its class watch wakes a class's followers when
the store's news change: classroom/wake.py), and reruns the fragment itself as the browser does
for `st.fragment(run_every=...)` where the fragment asks for it (its `auto_rerun`: 2 s on the
code before the watch, none with it): a timer started when that message comes (again after
every page switch), on a random phase per student at the start; a tick that comes while the
tab waits for a run is skipped.

The moments, in this order (each 2-4 s after the class sat still again, at random: a
teacher's click falls on no follower's beat):
- view: the teacher sends another lesson with other settings (`/masking?...T=8...`);
- present / section: a presenter-mode view (`?present=1&section=1`), then the next section
  (`section=2`, the teacher turning the page): the figure that matters is the second;
- question: the teacher asks a question; a follower on a lesson is brought to the class page,
  where the question shows.
The teacher acts as in a class (`--teacher app`, the default): a tab of its own with the
teacher's cookie (`Teacher`), opened on the moment's page before the class sits still, clicks
"Send this view to the class" on the view, "Send this section to the class" then "Next" in
presenter mode, "Ask the class" on the class page; its click's run is the server's too, and its
store's write tells the watch at once (`wake.soon`). `--teacher store` writes the store from
here instead, as another process would (a second server's teacher): the watch finds the write at
its next read. Per follower: the time from the teacher's click (or the store's write) to the
`script_finished` of the full run that drew the new view (its page, and its query string: T=8,
section=2; for the question, the class page with "Send my answer"), split into the wait for the
run that brought it (the send to the first message of the watch's wake, or to the tick that
found it) and the server's part (that run's start to its page finished). Reported: p50, p95, max
("the last follower") over followers, and the server's CPU (user + system of its process tree,
/proc) from the send to the last follower's page, per page drawn, beside the empty app's CPU a
first page (`benchmarks/empty_app.py`, measured at the start and the end of the same command by
`benchmarks.together.arrive`) and their ratio. The idle cost of following: the server's CPU a
second while the N followers sit following (nothing sent, `--idle` seconds), and per poll.

The watch reads the store every WATCH_S (0.25 s), and at once when told by a write in its own
process: with the teacher's click, the wait is the server's queue (the teacher's run first);
with a write from outside, up to WATCH_S more. Without the watch (the code before it) a poll
every 2 s bounded the wait from below: the last follower's near 2 s. The server runs each
session's script in a thread of one process: on one core the new pages share it, and a moment's
pages tend to finish together. Wall times on a shared machine swing with the neighbours; CPU
ratios less so. A run of 60 followers, every moment, takes about two minutes (the empty app's
four waves included), one of 200 for the view about the same.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import math
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.bench_class import CHOICES, Tab
from benchmarks.load.protocol import Status
from benchmarks.load.report import LoadResult, _percentile
from benchmarks.load.server import REPO, CpuShare, Server, free_port, tree_cpu_s
from benchmarks.together import EMPTY_APP, arrive
from dashboard.classroom.bar import FOLLOW_KEY
from dashboard.classroom.database import dispose_engine
from dashboard.classroom.limits import JOINS_PER_MINUTE
from dashboard.classroom.seat import COOKIES
from dashboard.classroom.store import ClassStore
from dashboard.render.presenter import PRESENT_KEY, SECTION_KEY

LESSON = "step_by_step"  # where the followers sit
SETTINGS = "src=random&T=8&d_model=8&heads=2&causal=true&seed=0"  # a view's sidebar, T changed
VIEW = f"/masking?{SETTINGS}"  # the view sent
SECTION = f"/masking?{SETTINGS}&{PRESENT_KEY}=1&{SECTION_KEY}={{}}"  # a presented section
CLASS_PAGE = "class"
QUESTION_BUTTON = "Send my answer"  # the class page shows the open question with this button
SEND_VIEW, SEND_SECTIONS, NEXT, ASK = (  # the teacher's buttons (`--teacher app`)
    "Send this view to the class",
    "Send this section to the class",
    "Next",
    "Ask the class",
)
TIMEOUT = 120.0  # seconds a run may take on one busy core
SETTLE_S = 4.0  # the class sits still this long (two of the old 2 s polls) before a moment


class Follower(Tab):
    """A joined student's tab on a lesson, following the teacher: it reruns the follow fragment
    on the browser's timer and notes when its page shows what the moment waits for."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.follow_id = ""  # the fragment with run_every: the follow panel (with a timer only)
        self.timer_from = 0.0  # when the browser's timer for it started (its auto_rerun came)
        self.paths: dict[str, str] = {}  # url path -> page_script_hash, from `navigation`
        self.ticks = 0  # follow fragment runs on the browser's timer
        self.wakes = 0  # and started by the server (its class watch)
        self.every = math.inf  # the timer's interval, if the fragment's auto_rerun sets one
        self.switch_said = ""  # how switching Follow on went (the setup's error says)
        self.goal: Callable[[Follower], bool] | None = None  # the moment's "arrived"
        self.sent_at = 0.0  # the moment's send
        self.tick_at = 0.0  # the tick that brought the view (start)
        self.arrived_at = 0.0  # its page's script_finished (0: not yet)

    def _parse(self, data, widgets, errors):
        msg = super()._parse(data, widgets, errors)
        kind = msg.WhichOneof("type")
        if kind == "auto_rerun":  # the browser (re)starts this fragment's timer
            self.follow_id, self.timer_from = msg.auto_rerun.fragment_id, time.perf_counter()
            self.every = msg.auto_rerun.interval
        elif kind == "navigation":
            self.paths |= {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
        return msg

    def on(self, path: str, params: dict[str, str] | None = None) -> bool:
        """Whether this tab shows page `path` with these query parameters."""
        here = dict(parse_qsl(self.query))
        return self.page_hash == self.paths.get(path) and (params or {}).items() <= here.items()

    async def switch_on(self) -> bool:
        """Click "Follow my teacher automatically" (a full rerun, as the browser sends it)."""
        switch = next((w for w in self.widgets.values() if w.id.endswith(FOLLOW_KEY)), None)
        if switch is None:
            self.switch_said = "no switch drawn"
            return False
        widgets = {**self.widgets, switch.id: replace(switch, value=True)}
        status = (await self.rerun(widgets, TIMEOUT, "switch")).status
        if status == Status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:  # the panel's run the server
            # started (the watch's first read of a class wakes its followers) finished first
            status = (await self._read_run(widgets, time.perf_counter(), TIMEOUT, "switch")).status
        self.switch_said = f"its run ended {status}"
        return status == Status.FINISHED_SUCCESSFULLY

    async def tick(self) -> None:
        """The follow fragment's timed rerun, as the browser sends it (is_auto_rerun, every
        widget's state); a run that ends in a page switch is read to the new page's finish."""
        self.moved_fragment = self.fragment = self.follow_id
        self.buttons.clear()  # the buttons of this run's page, to tell the question is shown
        start = time.perf_counter()
        self.ticks += 1
        self.arrive(start, await self.rerun(dict(self.widgets), TIMEOUT, "follow"))

    async def woken(self, first: tuple[float, bytes]) -> None:
        """A run the server started (the class watch reran the follow fragment: wake.py), read
        from its first message to its page's finish, as `tick` reads its own."""
        self.moved_fragment = self.fragment = self.follow_id
        widgets, buttons = dict(self.widgets), dict(self.buttons)
        self.buttons.clear()
        self.wakes += 1
        outcome = await self.take_run(first, TIMEOUT, "woken")
        if outcome.status == Status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:  # the panel alone ran:
            self.widgets = widgets | outcome.widgets  # the page around it stays, as in a browser
            self.buttons = buttons | self.buttons
        self.arrive(first[0], outcome)

    def arrive(self, start: float, outcome) -> None:
        self.fragment = ""
        if outcome.status == Status.FINISHED_SUCCESSFULLY:  # the app ran: a page, drawn anew
            self.widgets = outcome.widgets
        if self.goal is not None and not self.arrived_at and self.goal(self):
            self.tick_at, self.arrived_at = start, start + outcome.latency_ms / 1000

    async def poll(self, stop: asyncio.Event) -> None:
        """Until `stop`: tick on the browser's timer (every `every` seconds from `timer_from`),
        and read each run the server starts as it comes."""
        while not stop.is_set() and not self.closed:
            now = time.perf_counter()
            if math.isfinite(self.every):
                beats = math.floor((now - self.timer_from) / self.every) + 1
                due = self.timer_from + self.every * beats
            else:  # no timer: only the server starts this tab's runs
                due = math.inf
            message = asyncio.ensure_future(self.inbox.get())
            stopped = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({message, stopped},
                                         timeout=None if due == math.inf else due - now,
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            stopped.cancel()
            if message in done:
                first = message.result()
                if first is None:  # the socket closed
                    self.closed = True
                    return
                if starts_run(first[1]):
                    await self.woken(first)
                else:  # between runs (a status change): read, as the browser reads it
                    self._parse(first[1], {}, None)
            else:
                message.cancel()
                if not stop.is_set():
                    await self.tick()


def starts_run(data: bytes) -> bool:
    """Whether a message begins a run (every run, the server's own too, opens with new_session)."""
    msg = ForwardMsg()
    msg.ParseFromString(data)
    return msg.WhichOneof("type") == "new_session"


@dataclass
class Moment:
    """One moment as measured: per follower, the send to its page finished, split in two."""

    name: str
    followers: int
    run: int
    total_s: list[float] = field(default_factory=list)
    wait_s: list[float] = field(default_factory=list)  # the send to the tick that found it
    server_s: list[float] = field(default_factory=list)  # that tick to its page finished
    last: tuple[float, float, float] = (math.nan, math.nan, math.nan)  # the last follower's
    cpu_s: float = math.nan  # the server's, from the send to the last page
    pages: int = 0  # full runs finished meanwhile (the followers' new pages)
    polls: int = 0  # follow fragment runs meanwhile (the browsers' ticks, the watch's wakes)
    client_cpu_s: float = math.nan  # this process's (the class's), to see it is not the limit

    @property
    def cpu_ms_a_page(self) -> float:
        return 1000 * self.cpu_s / self.pages if self.pages else math.nan

    def net_ms_a_page(self, idle: Idle) -> float:
        """CPU a page less the polls that brought nothing (at the idle class's cost a poll)."""
        others = (self.polls - self.pages) * idle.cpu_s / max(idle.polls, 1)
        return 1000 * (self.cpu_s - others) / self.pages if self.pages else math.nan


@dataclass
class Idle:
    """The followers sitting still: the server's CPU over `seconds`, and the polls it served."""

    followers: int
    run: int
    seconds: float
    cpu_s: float
    polls: int
    every: float = math.inf  # the followers' poll, as their follow fragment set it (inf: none)
    wakes: int = 0  # of the polls, the runs the server started (its class watch)


async def moment(
    name: str, run: int, tabs: list[Follower], pid: int, send: Callable[[], object],
    goal: Callable[[Follower], bool], wait: float,
) -> Moment:  # fmt: skip
    """Send (through the store), then wait until every follower's page meets `goal` (or
    `wait` seconds); the server's CPU over it, the pages drawn and the polls served."""
    if any(goal(tab) for tab in tabs):  # else "there" would prove nothing
        raise RuntimeError(f"{name}: a follower shows the view before it is sent")
    for tab in tabs:
        tab.goal, tab.arrived_at = goal, 0.0
    result = tabs[0].result
    pages0, polls0 = result.statuses["FINISHED_SUCCESSFULLY"], sum(t.ticks + t.wakes for t in tabs)
    cpu0, client0 = tree_cpu_s(pid), time.process_time()
    sent = time.perf_counter()
    clicked = send()  # the store's write, or the teacher's click (its run read meanwhile)
    teaching = asyncio.ensure_future(clicked) if inspect.isawaitable(clicked) else None
    deadline = sent + wait
    while not all(t.arrived_at for t in tabs) and time.perf_counter() < deadline:
        await asyncio.sleep(0.02)
    if teaching is not None:
        await teaching
    found = Moment(name, len(tabs), run, cpu_s=tree_cpu_s(pid) - cpu0,
                   client_cpu_s=time.process_time() - client0)  # fmt: skip
    found.pages = result.statuses["FINISHED_SUCCESSFULLY"] - pages0
    found.polls = sum(t.ticks + t.wakes for t in tabs) - polls0
    there = sorted((t for t in tabs if t.arrived_at), key=lambda t: t.arrived_at)
    for tab in there:
        found.total_s.append(tab.arrived_at - sent)
        found.wait_s.append(max(0.0, tab.tick_at - sent))
        found.server_s.append(tab.arrived_at - max(tab.tick_at, sent))
    if there:
        found.last = (found.total_s[-1], found.wait_s[-1], found.server_s[-1])
    for tab in tabs:
        tab.goal = None
    return found


async def seat_class(
    base: str, store: ClassStore, n: int, seed: int, kind: type[Follower] = Follower
) -> tuple[object, list]:
    """A class, N students joined through the store, each a tab (a `kind`) with its seat
    cookie on the lesson, its follow switch on; a random phase each for its browser's timer."""
    made = store.create_class()
    result = LoadResult(app="follow", page=LESSON, students=n, duration_s=0, interval_s=0,
                        sync=False)  # fmt: skip
    rng = random.Random(seed)
    tabs = [kind(i, base, LESSON, "", random.Random(rng.getrandbits(64)), result)
            for i in range(n)]  # fmt: skip
    for tab in tabs:
        tab.cookies[COOKIES["student"]] = f"{made.code}.{store.join(made.code)}"

    async def ready(tab: Follower, delay: float) -> None:
        await asyncio.sleep(delay)
        opened = await tab.open(TIMEOUT)
        loaded = opened and (await tab.rerun({}, TIMEOUT, "load")).status is not None
        switched = loaded and await tab.switch_on()
        timer_without_panel = math.isfinite(tab.every) and not tab.follow_id
        if not switched or timer_without_panel:
            why = ("did not connect" if not opened else "its page did not load" if not loaded
                   else f"could not switch Follow on ({tab.switch_said})" if not switched
                   else "has the browser's timer and no follow panel")  # fmt: skip
            result.error("setup", f"follower {tab.index} {why}")
        if math.isfinite(tab.every):  # students' browsers are not in step
            tab.timer_from -= rng.uniform(0, tab.every)

    spread = 0.05 * n  # arrivals over a few seconds: the setup is not what is measured
    await asyncio.gather(*(ready(tab, spread * i / n) for i, tab in enumerate(tabs)))
    return made, tabs


class Teacher(Tab):
    """The teacher's screen on one page, with the teacher's cookie: its clicks are a moment's
    send (`press`)."""

    async def press(self, label: str, **values: str) -> None:
        outcome = await self.rerun(self.click(label, **values), TIMEOUT, "teach")
        if outcome.status != Status.FINISHED_SUCCESSFULLY or self.result.errors:
            raise RuntimeError(f"the teacher's {label!r}: {outcome.status}, "
                               f"{dict(self.result.errors)}")  # fmt: skip


async def teacher_on(base: str, made, url: str) -> Teacher:
    """A teacher's tab on `url` (its own result: its pages are not the followers')."""
    parts = urlsplit(url)
    result = LoadResult(app="teacher", page=parts.path.strip("/"), students=1, duration_s=0,
                        interval_s=0, sync=False)  # fmt: skip
    tab = Teacher(-1, base, parts.path.strip("/"), parts.query, random.Random(0), result)
    tab.cookies[COOKIES["teacher"]] = f"{made.code}.{made.teacher_token}"
    ok = await tab.open(TIMEOUT) and (await tab.rerun({}, TIMEOUT, "load")).status is not None
    if not ok or result.errors:
        raise RuntimeError(f"the teacher's tab on {url} did not load: {dict(result.errors)}")
    return tab


def view_goal(path: str, query: str) -> Callable[[Follower], bool]:
    """A follower shows the view: its page, with the view's settings that differ from the
    sidebar's defaults (as the page writes them back into the URL) and presenter mode's."""
    keep = {PRESENT_KEY, SECTION_KEY, "T"}
    params = {k: v for k, v in parse_qsl(query) if k in keep}
    return lambda tab: tab.on(path, params)


async def moments_of(
    names: list[str], store: ClassStore, made, base: str, teacher: str
) -> tuple[list[tuple[str, Callable, Callable]], list[Teacher]]:
    """(name, send, goal) for each moment asked for, in class order, and the teacher's tabs
    (`teacher` "app": a tab for each page the teacher acts on, opened now)."""

    def send(url: str) -> Callable[[], None]:
        return lambda: store.send_view(made.code, made.teacher_token, url)

    def ask() -> None:
        store.ask(made.code, made.teacher_token, "Rows of Q Kᵀ are…", CHOICES, "rows")

    tabs: list[Teacher] = []
    app = teacher == "app"

    async def presses(url: str, *labels: str) -> list[Callable]:
        """A teacher's tab on `url`, opened now, and a press of each of its buttons `labels`."""
        tabs.append(await teacher_on(base, made, url))
        return [partial(tabs[-1].press, label) for label in labels]

    plan = []
    if "view" in names:
        (sends,) = (await presses(VIEW, SEND_VIEW)) if app else [send(VIEW)]
        plan.append(("view", sends, view_goal("masking", urlsplit(VIEW).query)))
    if "section" in names:
        urls = [SECTION.format(number) for number in (1, 2)]
        sends = (await presses(urls[0], SEND_SECTIONS, NEXT)) if app else map(send, urls)
        for name, url, sending in zip(("present", "section"), urls, sends, strict=True):
            plan.append((name, sending, view_goal("masking", urlsplit(url).query)))
    if "question" in names:
        (sends,) = (await presses(f"/{CLASS_PAGE}", ASK)) if app else [ask]
        question = lambda tab: tab.on(CLASS_PAGE) and QUESTION_BUTTON in tab.buttons  # noqa: E731
        plan.append(("question", sends, question))
    return plan, tabs


async def one_class(base: str, pid: int, db: str, args, run: int) -> tuple[Idle, list[Moment]]:
    """Seat the class, measure it idle, then each moment in turn."""
    # joins are limited (120 a minute a class): a class of 200 joins over two minutes; here
    # they go through this store at once, the joining is not what is measured
    store = ClassStore(db, joins_per_minute=max(JOINS_PER_MINUTE, args.students))
    made, tabs = await seat_class(base, store, args.students, args.seed + run)
    if tabs[0].result.errors:
        raise RuntimeError(f"the class did not sit down: {dict(tabs[0].result.errors)}")
    stop = asyncio.Event()
    pollers = [asyncio.create_task(tab.poll(stop)) for tab in tabs]
    teachers: list[Teacher] = []
    try:
        plan, teachers = await moments_of(args.moments, store, made, base, args.teacher)
        await asyncio.sleep(SETTLE_S)  # the timers all running
        cpu0, polls0 = tree_cpu_s(pid), sum(t.ticks + t.wakes for t in tabs)
        wakes0 = sum(t.wakes for t in tabs)
        await asyncio.sleep(args.idle)
        idle = Idle(len(tabs), run, args.idle, tree_cpu_s(pid) - cpu0,
                    sum(t.ticks + t.wakes for t in tabs) - polls0, tabs[0].every,
                    sum(t.wakes for t in tabs) - wakes0)  # fmt: skip
        found, rng = [], random.Random(args.seed + run)
        for name, send, goal in plan:
            # the class sits still again; the teacher's send falls on no follower's beat
            await asyncio.sleep(rng.uniform(SETTLE_S / 2, SETTLE_S))
            found.append(await moment(name, run, tabs, pid, send, goal, args.wait))
            print(f"  run {run}, {name}: {len(found[-1].total_s)}/{len(tabs)} there", flush=True)
    finally:
        stop.set()
        await asyncio.gather(*pollers, return_exceptions=True)
        await asyncio.gather(*(tab.close() for tab in tabs + teachers), return_exceptions=True)
    errors = tabs[0].result.errors
    if errors:
        print(f"  run {run}: problems {dict(errors)}")
    return idle, found


def run_class(args, share: CpuShare, run: int) -> tuple[Idle, list[Moment]]:
    """One run on a fresh server held to `share`, with a fresh class store."""
    own_cpus = os.sched_getaffinity(0)
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{folder}/classroom.db"
        os.environ["ATTENTION_CLASS_DB"] = db  # the server's store is this file too
        server = Server(REPO / "streamlit_app.py", free_port(), share=share)
        try:
            server.start()
            server.wait_healthy(90)
            assert server.proc is not None
            os.sched_setaffinity(0, share.client_cpus)  # the class off the server's cores
            base = f"http://127.0.0.1:{server.port}"
            return asyncio.run(one_class(base, server.proc.pid, db, args, run))
        finally:
            os.sched_setaffinity(0, own_cpus)
            server.stop()
            dispose_engine(db)


def seconds(values: list[float]) -> tuple[str, str, str]:
    """p50, p95 and max, in seconds."""
    if not values:
        return ("n/a",) * 3
    cut = (statistics.median(values), _percentile(values, 0.95), max(values))
    return tuple(f"{v:.2f}" for v in cut)


def print_figures(idles: list[Idle], moments: list[Moment], floor_ms: float) -> None:
    print("\n| moment | followers | run | p50 s | p95 s | last s | last: poll wait s | "
          "last: server s | wait p50 s | server p50 s | server max s | CPU ms a page | "
          "× empty app | less other polls: CPU ms a page | × empty app | pages | polls | "
          "there | server CPU s | client CPU s |")  # fmt: skip
    print("|---" * 20 + "|")
    idle_of = {i.run: i for i in idles}
    for m in moments:
        net = m.net_ms_a_page(idle_of[m.run])
        p50, p95, last = seconds(m.total_s)
        waited, served = seconds(m.wait_s), seconds(m.server_s)
        ratio = m.cpu_ms_a_page / floor_ms if floor_ms > 0 else math.nan
        print(f"| {m.name} | {m.followers} | {m.run} | {p50} | {p95} | {last} | "
              f"{m.last[1]:.2f} | {m.last[2]:.2f} | {waited[0]} | {served[0]} | {served[2]} | "
              f"{m.cpu_ms_a_page:.1f} | {ratio:.1f} | {net:.1f} | {net / floor_ms:.1f} | "
              f"{m.pages} | {m.polls} | {len(m.total_s)}/{m.followers} | {m.cpu_s:.2f} | "
              f"{m.client_cpu_s:.2f} |")  # fmt: skip
    print("\n| idle | followers | run | seconds | server CPU ms a second | polls a second | "
          "CPU ms a poll | × empty app's first page |")  # fmt: skip
    print("|---" * 8 + "|")
    for i in idles:
        a_poll = 1000 * i.cpu_s / i.polls if i.polls else math.nan
        print(f"| following | {i.followers} | {i.run} | {i.seconds:g} | "
              f"{1000 * i.cpu_s / i.seconds:.0f} | {i.polls / i.seconds:.1f} | {a_poll:.1f} | "
              f"{a_poll / floor_ms:.2f} |")  # fmt: skip


def empty_app(students: int, seed: int, share: CpuShare) -> list[float]:
    """The empty app's server CPU a first page (ms), cold and warm: the floor."""
    return [a.cpu_ms for a in arrive("", students, 1.0, seed, share)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.follow", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--students", type=int, default=60, help="followers")
    parser.add_argument("--moments", default="view,section,question",
                        help="which of view,section,question (always in that order)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=1, help="fresh servers, one class each")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured sitting still")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds a moment may take")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-cores", type=int, default=1)
    parser.add_argument("--teacher", choices=("app", "store"), default="app",
                        help="the teacher clicks in a tab of the app, or writes the store from "
                        "this process (as a teacher on another server would)")  # fmt: skip
    args = parser.parse_args(argv)
    args.moments = args.moments.split(",")
    unknown = set(args.moments) - {"view", "section", "question"}
    if unknown:
        parser.error(f"unknown moments {sorted(unknown)}: view, section, question")
    share = CpuShare(cores=args.server_cores)
    began = time.perf_counter()
    floors = empty_app(args.students, args.seed, share)
    idles, moments = [], []
    for run in range(1, args.runs + 1):
        idle, found = run_class(args, share, run)
        idles.append(idle)
        moments += found
    floors += empty_app(args.students, args.seed, share)
    floor_ms = statistics.mean(floors)
    polling = f"polling every {idles[0].every:g} s" if math.isfinite(idles[0].every) else "woken"
    print(f"\n{args.students} followers on {LESSON}, each {polling}; the teacher's "
          f"{'clicks in the app' if args.teacher == 'app' else 'writes from outside'}; the "
          f"server on {share.describe()}; the empty app ({EMPTY_APP.name}) {floor_ms:.1f} ms "
          f"a first page (mean of {', '.join(f'{f:.1f}' for f in floors)}); "
          f"{time.perf_counter() - began:.0f} s in all")  # fmt: skip
    print_figures(idles, moments, floor_ms)
    return 0 if all(len(m.total_s) == m.followers for m in moments) else 1


if __name__ == "__main__":
    raise SystemExit(main())
