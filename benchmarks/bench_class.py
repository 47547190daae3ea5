"""Class mode under load: a class of students join and answer within a couple of seconds, through
one Streamlit process and through `deploy/serve --workers 2`. Figures, not a test.

    python benchmarks/bench_class.py                      # 60 students, 2 s, both targets
    python benchmarks/bench_class.py --students 30 --targets one
    python benchmarks/bench_class.py --check              # the concept check's ten items instead

Each student is `benchmarks.load`'s websocket client (a browser tab speaking Streamlit's
protocol), extended with the buttons it needs: it opens the join link (/class?join=CODE), clicks
Join (the code is filled in from the link), reloads the page when the question is out (as its
poll does), picks a choice and clicks "Send my answer". The teacher is a tab on /class holding
the teacher's cookie, rerunning the tally fragment every 1.5 s as the browser does. Beside the
class, a few bystanders move sliders on lesson 1. Every join and every answer is sent at a random
moment of the window (2 s). The class is made and the question asked through the store itself
(the teacher's clicks are not what is measured).

With `--check`, the teacher gives the concept check before the course (its ten items, asked
through the store as the teacher's button does) instead of one question, and each student picks
one choice for every item on the one screen and clicks "Send my answers" at a random moment of
the window: ten answers in one click, sixty students at once.

Reported: joins and answers recorded (from the store), answers lost (sent and acknowledged but
missing or wrong in the tally: must be 0), p50/p95 time from a click to its run finishing (the
answer is written by then), the teacher's tally refresh (a fragment run) and the bystanders'
ordinary reruns while it all happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from benchmarks.load.protocol import OK_STATUSES  # noqa: E402
from benchmarks.load.report import LoadResult  # noqa: E402
from benchmarks.load.server import Server, free_port  # noqa: E402
from benchmarks.load.student import Student  # noqa: E402
from dashboard.classroom import concept_check  # noqa: E402
from dashboard.classroom.database import dispose_engine  # noqa: E402
from dashboard.classroom.store import ClassStore  # noqa: E402

CHOICES = ["rows", "columns", "heads", "tokens"]
TALLY_S = 1.5  # the teacher's fragment reruns this often (dashboard/classroom/teacher.py)
TIMEOUT = 60.0


@dataclass
class Trigger:
    """A button click as the frontend sends it: the button's id with trigger_value."""

    id: str
    label: str

    def state(self) -> WidgetState:
        return WidgetState(id=self.id, trigger_value=True)

    def describe(self) -> str:
        return f"{self.label}=click"


@dataclass
class TextBox:
    """A text input with the value the frontend would send (its default: a join link's code)."""

    id: str
    label: str
    value: str

    def state(self) -> WidgetState:
        return WidgetState(id=self.id, string_value=self.value)

    def describe(self) -> str:
        return f"{self.label}={self.value}"


class Tab(Student):
    """A load student that also learns the page's buttons and its fragments, and can rerun one
    fragment (`fragment`), as `st.fragment(run_every=...)` makes the browser do."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.buttons: dict[str, str] = {}
        self.texts: dict[str, TextBox] = {}
        self.fragments: set[str] = set()
        self.fragment = ""

    def _parse(self, data, widgets, errors):
        msg = super()._parse(data, widgets, errors)
        if msg.WhichOneof("type") == "delta":
            if msg.delta.fragment_id:
                self.fragments.add(msg.delta.fragment_id)
            if msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                if element.WhichOneof("type") == "button":
                    self.buttons[element.button.label] = element.button.id
                elif element.WhichOneof("type") == "text_input":
                    box = element.text_input
                    self.texts[box.label] = TextBox(box.id, box.label, box.default)
        return msg

    def _rerun_msg(self, widgets) -> bytes:
        if not self.fragment:
            return super()._rerun_msg(widgets)
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        msg.ParseFromString(super()._rerun_msg(widgets))
        msg.rerun_script.fragment_id = self.fragment
        msg.rerun_script.is_auto_rerun = True
        return msg.SerializeToString()

    def click(self, label: str, **values: str) -> dict:
        """The widget states of clicking `label`, with radio values set by label."""
        widgets = {
            k: replace(w, value=values[w.label]) if w.label in values else w
            for k, w in self.widgets.items()
        }
        widgets |= {box.id: box for box in self.texts.values()}
        widgets[self.buttons[label]] = Trigger(self.buttons[label], label)
        return widgets


@dataclass
class Figures:
    target: str
    students: int
    joined: int = 0
    join_ms: list[float] = field(default_factory=list)
    sent: Counter = field(default_factory=Counter)  # choice -> answers acknowledged
    answer_ms: list[float] = field(default_factory=list)
    tally: dict[str, int] = field(default_factory=dict)
    answered: int = 0
    tally_ms: list[float] = field(default_factory=list)
    bystander_ms: list[float] = field(default_factory=list)
    alone_ms: list[float] = field(default_factory=list)  # the bystanders before the class
    failures: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return sum(max(0, n - self.tally.get(choice, 0)) for choice, n in self.sent.items())


def pct(values: list[float], q: float) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.0f}"


async def at_random(rng: random.Random, t0: float, window: float) -> None:
    await asyncio.sleep(max(0.0, t0 + rng.uniform(0, window) - time.perf_counter()))


async def run_class(
    base: str, db: str, n: int, window: float, bystanders: int, seed: int, check: bool = False
):
    rng = random.Random(seed)
    store = ClassStore(db)
    made = store.create_class()
    figures = Figures(target=base, students=n)
    result = LoadResult(app="class", page="class", students=n, duration_s=window,
                        interval_s=0, sync=False)  # fmt: skip

    teacher = Tab(0, base, "class", "", random.Random(seed), result)
    teacher.cookies["attention_teacher"] = f"{made.code}.{made.teacher_token}"
    tabs = [
        Tab(i + 1, base, "class", f"join={made.code}", random.Random(seed + i), result)
        for i in range(n)
    ]
    others = [
        Tab(1000 + i, base, "step_by_step", "", random.Random(seed - i), result)
        for i in range(bystanders)
    ]

    async def load(tab: Tab) -> None:
        if not await tab.open(TIMEOUT) or (await tab.rerun({}, TIMEOUT, "load")).status is None:
            figures.failures.append(f"tab {tab.index} did not load")

    await asyncio.gather(*(load(tab) for tab in (teacher, *tabs, *others)))

    async def bystander(tab: Tab, stop: asyncio.Event, into: list[float]) -> None:
        while not stop.is_set():
            widgets = tab.move()
            if widgets is None:
                return
            outcome = await tab.rerun(widgets, TIMEOUT, "bystander")
            if outcome.status in OK_STATUSES:
                into.append(outcome.latency_ms)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), rng.uniform(1.0, 3.0))

    quiet = asyncio.Event()  # the bystanders alone first, for comparison
    alone = [asyncio.create_task(bystander(tab, quiet, figures.alone_ms)) for tab in others]
    await asyncio.sleep(2 * window)
    quiet.set()
    await asyncio.gather(*alone)

    async def join(tab: Tab, t0: float) -> None:
        await at_random(rng, t0, window)
        outcome = await tab.rerun(tab.click("Join"), TIMEOUT, "join")
        if outcome.status in OK_STATUSES:
            figures.join_ms.append(outcome.latency_ms)

    t0 = time.perf_counter()
    await asyncio.gather(*(join(tab, t0) for tab in tabs))
    figures.joined = store.joined(made.code, made.teacher_token)

    if check:
        qids = concept_check.ask(store, made.code, made.teacher_token, "before")
    else:
        qids = [store.ask(made.code, made.teacher_token, "Rows of Q Kᵀ are…", CHOICES, "rows")]
    await asyncio.gather(*(tab.rerun(dict(tab.widgets), TIMEOUT, "poll") for tab in tabs))

    stop = asyncio.Event()

    async def answer_check(tab: Tab, t0: float) -> None:
        """Every item of the check (a radio each, "1. …" to "10. …"), sent with one click."""
        items = [w for w in tab.widgets.values() if w.kind == "radio" and w.label[:1].isdigit()]
        if "Send my answers" not in tab.buttons or len(items) != len(qids):
            figures.failures.append(f"student {tab.index} saw {len(items)} items of the check")
            return
        picks = {w.label: rng.choice(w.options) for w in items}
        await at_random(rng, t0, window)
        outcome = await tab.rerun(tab.click("Send my answers", **picks), TIMEOUT, "answers")
        if outcome.status in OK_STATUSES:
            figures.answer_ms.append(outcome.latency_ms)
            for label in picks:  # "1\. What …": the item's number first
                figures.sent["item " + re.match(r"\d+", label)[0]] += 1

    async def answer(tab: Tab, t0: float) -> None:
        if check:
            await answer_check(tab, t0)
            return
        if "Send my answer" not in tab.buttons:
            figures.failures.append(f"student {tab.index} saw no question")
            return
        choice = rng.choice(CHOICES)
        await at_random(rng, t0, window)
        outcome = await tab.rerun(tab.click("Send my answer", **{"Your answer": choice}),
                                  TIMEOUT, "answer")  # fmt: skip
        if outcome.status in OK_STATUSES:
            figures.answer_ms.append(outcome.latency_ms)
            figures.sent[choice] += 1

    async def projector() -> None:
        teacher.fragments.clear()  # the fragments of this run's page, not an earlier one's
        await teacher.rerun({}, TIMEOUT, "teacher")  # the question is out: the tally shows
        teacher.fragment = next(iter(teacher.fragments), "")
        while not stop.is_set():
            outcome = await teacher.rerun(dict(teacher.widgets), TIMEOUT, "tally")
            if outcome.status in OK_STATUSES:
                figures.tally_ms.append(outcome.latency_ms)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), TALLY_S)

    background = [asyncio.create_task(projector())]
    background += [
        asyncio.create_task(bystander(tab, stop, figures.bystander_ms)) for tab in others
    ]
    t0 = time.perf_counter()
    await asyncio.gather(*(answer(tab, t0) for tab in tabs))
    await asyncio.sleep(TALLY_S)  # one more tally after the last answer
    stop.set()
    await asyncio.gather(*background)
    if check:  # who answered each item, against who sent it
        for number, qid in enumerate(qids, 1):
            answered = store.tally(made.code, made.teacher_token, qid).answered
            figures.tally[f"item {number}"] = answered
            figures.answered += answered
    else:
        tally = store.tally(made.code, made.teacher_token, qids[0])
        figures.tally, figures.answered = dict(tally.counts), tally.answered
    for tab in (teacher, *tabs, *others):
        await tab.close()
    figures.failures += [f"{kind}: {count}" for kind, count in result.errors.items()]
    store.delete_class(made.code, made.teacher_token)
    return figures


def one_process(db: str) -> tuple[str, Server]:
    server = Server(ROOT / "streamlit_app.py", free_port())
    server.start()
    server.wait_healthy(90)
    return f"http://127.0.0.1:{server.port}", server


@contextlib.contextmanager
def target(kind: str, db: str):
    os.environ["ATTENTION_CLASS_DB"] = db
    if kind == "one":
        base, server = one_process(db)
        try:
            yield base
        finally:
            server.stop()
        return
    port = free_port()
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - removed in the finally below
        prefix="bench-class-serve-", suffix=".log", delete=False
    )
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "deploy" / "serve"), "--workers", "2", "--port", str(port),
         "--address", "127.0.0.1"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "ready:" not in Path(log.name).read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(Path(log.name).read_text(errors="replace")[-2000:])
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        os.unlink(log.name)


def report(name: str, f: Figures, window: float) -> None:
    print(f"\n## {name}: {f.students} students, joins and answers each within {window:g} s")
    print(f"joined (store): {f.joined} of {f.students}; join click -> run finished: "
          f"p50 {pct(f.join_ms, 0.5)} ms, p95 {pct(f.join_ms, 0.95)} ms")  # fmt: skip
    print(f"answers acknowledged: {sum(f.sent.values())}; in the tally: {f.answered}; "
          f"lost: {f.lost}")  # fmt: skip
    print(f"answer click -> recorded (run finished): p50 {pct(f.answer_ms, 0.5)} ms, "
          f"p95 {pct(f.answer_ms, 0.95)} ms, max {max(f.answer_ms, default=0):.0f} ms")  # fmt: skip
    print(f"teacher's tally refresh (fragment run, every {TALLY_S:g} s): "
          f"p50 {pct(f.tally_ms, 0.5)} ms, p95 {pct(f.tally_ms, 0.95)} ms "
          f"({len(f.tally_ms)} refreshes)")  # fmt: skip
    print(f"bystanders' ordinary reruns on lesson 1 meanwhile: p50 {pct(f.bystander_ms, 0.5)} "
          f"ms, p95 {pct(f.bystander_ms, 0.95)} ms ({len(f.bystander_ms)} reruns)")  # fmt: skip
    print(f"the same bystanders before the class: p50 {pct(f.alone_ms, 0.5)} ms, "
          f"p95 {pct(f.alone_ms, 0.95)} ms ({len(f.alone_ms)} reruns)")  # fmt: skip
    print(f"tally: {f.tally}; sent: {dict(f.sent)}")
    if f.failures:
        print("problems:", "; ".join(f.failures[:10]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--window", type=float, default=2.0, help="seconds to join, to answer")
    parser.add_argument("--bystanders", type=int, default=5)
    parser.add_argument("--targets", choices=["one", "serve", "both"], default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="the concept check's ten items")
    args = parser.parse_args()
    kinds = ["one", "serve"] if args.targets == "both" else [args.targets]
    names = {"one": "one Streamlit process", "serve": "deploy/serve --workers 2"}
    print(f"bench_class: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    for kind in kinds:
        with tempfile.TemporaryDirectory() as folder:
            db = f"sqlite:///{folder}/classroom.db"
            with target(kind, db) as base:
                started = time.perf_counter()
                figures = asyncio.run(
                    run_class(
                        base, db, args.students, args.window, args.bystanders, args.seed, args.check
                    )
                )
                report(names[kind], figures, args.window)
                print(f"(the whole run: {time.perf_counter() - started:.1f} s)")
            dispose_engine(db)


if __name__ == "__main__":
    main()
