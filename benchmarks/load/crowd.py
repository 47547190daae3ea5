"""The class: every student loads the page, then all move on schedule; `run_load` runs it.

The moving window opens for everyone once every student has loaded the page (or failed to);
each then moves on its own slots (`move_slots`) until the window closes. `run_load` starts the
server (or, with `url`, drives the server or balancer already listening there), runs the class
in one asyncio loop in this process, watches the server's memory and exit, and stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import h11

from benchmarks.load.frontend import FirstVisit, fetch_all
from benchmarks.load.protocol import OK_STATUSES
from benchmarks.load.report import LoadResult
from benchmarks.load.server import (
    DEFAULT_APP,
    CpuShare,
    Server,
    free_port,
    sample_rss,
    tree_cpu_s,
    tree_rss_mib,
)
from benchmarks.load.student import Student


@dataclass(frozen=True)
class LoadConfig:
    """The knobs of one run (see run_load and the command-line help)."""

    students: int
    duration: float
    interval: float
    page: str
    query: str
    seed: int
    sync: bool
    timeout: float
    load_timeout: float
    settle: float
    ramp: float
    moves: int | None
    use_cache: bool
    only: tuple[str, ...] = ()
    reconnect: bool = False
    opened: tuple[str, ...] = ()
    frontend: FirstVisit | None = None  # a browser's first visit: its files around the socket


def move_slots(
    rng: random.Random, t0: float, duration: float, interval: float, sync: bool, moves: int | None
) -> list[float]:
    """When one student wants to move (perf_counter times)."""
    if moves is not None:
        return [t0 + k * interval for k in range(moves)]
    if interval <= 0:
        raise ValueError("--interval must be > 0 unless a number of moves is given")
    slots: list[float] = []
    if sync:
        k = 1
        while k * interval < duration:
            slots.append(t0 + k * interval)
            k += 1
        return slots
    t = rng.uniform(0, interval)
    while t < duration:
        slots.append(t0 + max(0.0, t + rng.uniform(-0.25, 0.25) * interval))
        t += interval
    return slots


@dataclass
class Gate:
    """The class starts moving together, once every student has loaded the page (or failed)."""

    students: int
    ready: int = 0
    t0: float = 0.0  # perf_counter time the moving window opens
    all_loaded: asyncio.Event = field(default_factory=asyncio.Event)
    go: asyncio.Event = field(default_factory=asyncio.Event)

    def loaded_one(self) -> None:
        self.ready += 1
        if self.ready >= self.students:
            self.all_loaded.set()

    def open(self) -> None:
        self.t0 = time.perf_counter()
        self.go.set()


async def first_visit(
    student: Student, visit: FirstVisit, timeout: float
) -> asyncio.Task[int] | None:
    """The files a browser fetches before its socket; then those it fetches while its page
    runs, started (their task), or None when a fetch failed (the student leaves)."""
    try:
        read = await fetch_all(student.base, visit.before, timeout, document=True)
    except (OSError, TimeoutError, h11.ProtocolError) as exc:
        student.result.error("frontend", f"student {student.index}: {exc!r}")
        student.closed = True
        return None

    async def rest() -> int:
        return read + await fetch_all(student.base, visit.after, timeout, document=False)

    return asyncio.create_task(rest())


async def fetched(student: Student, later: asyncio.Task[int]) -> bool:
    """Whether the files fetched while the page ran came (the visit's bytes counted)."""
    try:
        student.result.frontend_bytes.append(await later)
    except (OSError, TimeoutError, h11.ProtocolError) as exc:
        student.result.error("frontend", f"student {student.index}: {exc!r}")
        student.closed = True
        return False
    return True


async def _student_session(student: Student, gate: Gate, cfg: LoadConfig) -> None:
    """Load the page, wait for the class, then move on schedule until the window closes."""
    result = student.result
    try:
        arrived, later = time.perf_counter(), None
        if cfg.frontend:  # a browser that never opened the app: its files, as it fetched them
            later = await first_visit(student, cfg.frontend, cfg.load_timeout)
            if later is None:
                return
        if not await student.open(cfg.load_timeout):
            if later is not None:
                later.cancel()
            return
        outcome = await student.rerun({}, cfg.load_timeout, "load_timeout")
        if later is not None and not await fetched(student, later):
            return
        if outcome.status is not None:
            result.load_latencies_ms.append(
                1000 * (time.perf_counter() - arrived) if cfg.frontend else outcome.latency_ms
            )
            result.load_messages.append(outcome.messages)
        elif not student.closed and not await student.wait_stale_run(2 * cfg.timeout):
            result.error("stuck", f"student {student.index}: the page load never finished, left")
            student.closed = True
        if student.index == 0:
            result.widgets = [f"{w.kind} {w.label!r}" for w in student.widgets.values()]
        if not student.closed and not any(w.movable for w in student.widgets.values()):
            result.error("no_widgets", f"page {student.page!r} showed no control to move")
            student.closed = True
    finally:
        gate.loaded_one()
    await gate.go.wait()
    slots = move_slots(student.rng, gate.t0, cfg.duration, cfg.interval, cfg.sync, cfg.moves)
    result.offered += len(slots)
    if student.closed:
        return
    for i, slot in enumerate(slots):
        now = time.perf_counter()
        if cfg.moves is None and now >= gate.t0 + cfg.duration:
            break
        next_slot = slots[i + 1] if i + 1 < len(slots) else None
        if cfg.interval > 0 and next_slot is not None and now >= next_slot:
            result.skipped_busy += 1  # still waiting on the previous rerun: this move is lost
            continue
        if slot > now:
            await asyncio.sleep(slot - now)
        widgets = student.move()
        if widgets is None:
            break
        result.sent += 1
        outcome = await student.rerun(widgets, cfg.timeout, "timeout")
        if student.closed:
            return
        if outcome.status is None:
            if not await student.wait_stale_run(2 * cfg.timeout):
                result.error("stuck", f"student {student.index}: a rerun never finished, left")
                return
            continue
        result.payloads.append(outcome.payload)
        if outcome.status in OK_STATUSES:
            result.achieved += 1
            if outcome.reconnected:
                continue  # reported apart: the time to get back, not a rerun's cost
            result.latencies_ms.append(outcome.latency_ms)
            student.latencies_ms.append(outcome.latency_ms)
            if student.worker:
                result.worker_latencies_ms.setdefault(student.worker, []).append(outcome.latency_ms)


async def _run_class(server: Server | None, base: str, result: LoadResult, cfg: LoadConfig) -> None:
    """The class against base; the server's memory and exit are watched when it is ours."""
    pid = server.proc.pid if server is not None and server.proc is not None else None
    rng = random.Random(cfg.seed)
    pages = cfg.page.split(",")  # several: the students spread over them, round robin
    students = [
        Student(
            i,
            base,
            pages[i % len(pages)],
            cfg.query,
            random.Random(rng.getrandbits(64)),
            result,
            use_cache=cfg.use_cache,
            only=cfg.only,
            opened=cfg.opened,
            reconnect=cfg.reconnect,
        )
        for i in range(cfg.students)
    ]
    gate = Gate(len(students))
    samples: list[float] = []
    stop_sampling = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, samples, stop_sampling)) if pid else None
    cpu_start = tree_cpu_s(pid) if pid else float("nan")
    tasks = []
    for student in students:
        tasks.append(asyncio.create_task(_student_session(student, gate, cfg)))
        if cfg.ramp > 0:
            await asyncio.sleep(cfg.ramp / len(students))
    try:
        # Everyone has loaded (or failed to) within the load timeout: start the window together.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                gate.all_loaded.wait(), cfg.ramp + 2 * cfg.load_timeout + 2 * cfg.timeout + 5
            )
        result.rss_loaded_mib = tree_rss_mib(pid) if pid else float("nan")
        cpu_loaded = tree_cpu_s(pid) if pid else float("nan")
        result.cpu_loads_s = cpu_loaded - cpu_start
        gate.open()
        if cfg.moves is not None:
            bound = cfg.moves * (cfg.interval + 3 * cfg.timeout) + 10
        else:
            bound = cfg.duration + 3 * cfg.timeout + 10
        done, pending = await asyncio.wait(tasks, timeout=bound)
        result.cpu_moves_s = (tree_cpu_s(pid) if pid else float("nan")) - cpu_loaded
        for task in pending:
            task.cancel()
        for task in done:
            if task.exception() is not None:
                result.error("client_bug", repr(task.exception()))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(s.close() for s in students), return_exceptions=True)
        if cfg.reconnect:
            for student in students:
                if not student.reconnections:
                    result.undisturbed_ms.extend(student.latencies_ms)
        stop_sampling.set()
        if sampler is not None:
            await sampler
    valid = [s for s in [*samples, result.rss_loaded_mib] if not math.isnan(s)]
    result.rss_peak_mib = max(valid, default=float("nan"))
    if server is None or pid is None:
        return
    if not server.alive:
        assert server.proc is not None
        tail = " | ".join(line.strip() for line in server.tail(6).splitlines() if line.strip())
        result.error("server_exit", f"exit code {server.proc.returncode}; log: {tail}")
        return
    await asyncio.sleep(cfg.settle)
    result.rss_after_mib = tree_rss_mib(pid)


def run_load(**options: Any) -> LoadResult:
    """Start the app, run the class against it, stop the app, return what was measured: one
    wave of `run_waves`, whose keywords it takes (students, duration, interval, page, app, port,
    seed, sync, timeout, load_timeout, settle, ramp, moves, query, use_cache, only,
    server_args, url, reconnect, share, opened)."""
    return run_waves(1, **options)[0]


def run_waves(
    waves: int,
    *,
    students: int = 60,
    duration: float = 60.0,
    interval: float = 5.0,
    page: str = "step_by_step",
    app: str | Path = DEFAULT_APP,
    port: int = 0,
    seed: int = 0,
    sync: bool = False,
    timeout: float = 10.0,
    load_timeout: float = 30.0,
    settle: float = 5.0,
    ramp: float = 0.0,
    moves: int | None = None,
    query: str = "",
    use_cache: bool = True,
    only: tuple[str, ...] = (),
    server_args: tuple[str, ...] = (),
    url: str = "",
    reconnect: bool = False,
    share: CpuShare | None = None,
    opened: tuple[str, ...] = (),
    frontend: FirstVisit | None = None,
) -> list[LoadResult]:
    """`waves` classes in turn on one server, each wave new students (their own seed) arriving
    once the wave before has left; one result a wave, each with the server's memory during it
    and `settle` seconds after it (whether a day of classes grows the server).

    `url`: drive the server or balancer already listening there (e.g. `deploy/serve`'s
    http://127.0.0.1:8501) instead of starting one; `app`, `port` and `server_args` are then
    unused and the result has the sessions per worker. `reconnect`: a student whose socket
    closes reconnects and reloads (as the frontend does) instead of leaving with an error.

    `moves`: each student makes exactly this many moves, `interval` apart (0: back to back),
    and `duration` is ignored. `ramp`: spread the students' arrivals over this many seconds.
    `only`: the labels of the controls students move (empty: any). `server_args`: extra
    `streamlit run` flags, e.g. ("--runner.postScriptGC", "true") to measure a setting.
    `share`: hold the server to fewer cores or a CPU quota (`CpuShare`); the class then runs on
    the cores the server does not hold. `opened`: the labels of the closed sections each
    student opens after its first page ("Check yourself", "Take it home"), kept open for
    every move after. `frontend`: each student's browser never opened the app: it fetches
    these files as a browser does (`benchmarks.load.frontend`), and its first page's time runs
    from its first request to its script_finished or its last file, whichever comes later.
    """
    if waves < 1:
        raise ValueError(f"--waves must be at least 1, got {waves}")
    app_path = Path(app).resolve()
    if not url and not app_path.is_file():
        raise FileNotFoundError(app_path)
    if url and urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"--url must start with http:// or https://, got {url!r}")
    share = share or CpuShare()
    results = [
        LoadResult(
            app=url or str(app_path), page=page, target=url, students=students,
            duration_s=duration, interval_s=interval, sync=sync, moves_per_student=moves,
            cpu=share.describe(),
        )
        for _ in range(waves)
    ]  # fmt: skip
    configs = [
        LoadConfig(
            students=students, duration=duration, interval=interval, page=page, query=query,
            seed=seed + wave, sync=sync, timeout=timeout, load_timeout=load_timeout,
            settle=settle, ramp=ramp, moves=moves, use_cache=use_cache, only=tuple(only),
            reconnect=reconnect, opened=tuple(opened), frontend=frontend,
        )
        for wave in range(waves)
    ]  # fmt: skip
    if url:
        for result, cfg in zip(results, configs, strict=True):
            began, cpu0 = time.perf_counter(), time.process_time()
            asyncio.run(_run_class(None, url, result, cfg))
            result.client_cpu_s = time.process_time() - cpu0
            result.wall_s = time.perf_counter() - began
        return results
    server = Server(app_path, port or free_port(), tuple(server_args), share)
    own_cpus = os.sched_getaffinity(0)
    try:
        server.start()
        server.wait_healthy()
        time.sleep(1.0)  # let the server finish settling before the baseline
        assert server.proc is not None
        baseline = tree_rss_mib(server.proc.pid)
        os.sched_setaffinity(0, share.client_cpus)  # the class off the server's cores
        for result, cfg in zip(results, configs, strict=True):
            began, cpu0 = time.perf_counter(), time.process_time()
            result.rss_baseline_mib = baseline
            asyncio.run(_run_class(server, f"http://127.0.0.1:{server.port}", result, cfg))
            result.client_cpu_s = time.process_time() - cpu0
            result.wall_s = time.perf_counter() - began
            baseline = result.rss_after_mib
    finally:
        os.sched_setaffinity(0, own_cpus)
        server.stop()
    return results
