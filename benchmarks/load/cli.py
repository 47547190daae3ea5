"""A class of students on one `streamlit run` server, over Streamlit's own websocket protocol.

The command line, `python -m benchmarks.load` from the repo root: its flags are `run_load`'s
arguments. `--single N` is the "single student rerun" figure: one student, N moves back to back
(interval 0, no duration limit), after the page load. It prints the report and exits with 1 when
any error happened, so a CI smoke can fail on it.

`--page all` (or a comma-separated list of pages) spreads the class over every lesson, round
robin: the server's memory under a day of classes. `--all-lessons` measures each lesson in turn,
each on a fresh server: the class (--students, --duration, --interval) and one student's
--single-moves random moves, one row a lesson.

`--server-cores N` pins the server to N cores and the class to the others; `--server-quota F`
caps the server at F cores' worth of time (a cgroup CPU quota): Community Cloud's share.
`--waves N` runs N classes in turn on one server, new students each (a day of classes), and
prints whether the server's memory at the end is within 5 % of its peak in the first wave.
"""

from __future__ import annotations

import argparse

from benchmarks.load.crowd import run_load, run_waves
from benchmarks.load.report import LoadResult, _percentile
from benchmarks.load.server import DEFAULT_APP, CpuShare
from dashboard.frame import LESSONS


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, run the class, print the report; 1 when any error happened, else 0."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.load",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of moving")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between moves")
    parser.add_argument(
        "--page", default="step_by_step",
        help='url path of the page, "" = main; "a,b" or "all" (every lesson) spreads the class',
    )  # fmt: skip
    parser.add_argument(
        "--all-lessons", action="store_true",
        help="each lesson in turn on a fresh server: the class and one student, a row each",
    )  # fmt: skip
    parser.add_argument(
        "--single-moves", type=int, default=40, help="--all-lessons: one student's moves"
    )
    parser.add_argument(
        "--query", default="", help="query string of the first load (bound widgets then edit it)"
    )
    parser.add_argument("--app", default=str(DEFAULT_APP))
    parser.add_argument("--port", type=int, default=0, help="0: pick a free loopback port")
    parser.add_argument(
        "--url", default="",
        help="drive the server or balancer already at this URL (e.g. http://127.0.0.1:8501)",
    )  # fmt: skip
    parser.add_argument(
        "--reconnect", action="store_true",
        help="a student whose socket closes reconnects and reloads (as the browser does)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sync", action="store_true", help="all students move at once")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds allowed per rerun")
    parser.add_argument(
        "--load-timeout", type=float, default=30.0, help="seconds allowed for the first page load"
    )
    parser.add_argument("--settle", type=float, default=5.0, help="wait before the after-RSS")
    parser.add_argument("--ramp", type=float, default=0.0, help="spread arrivals over seconds")
    parser.add_argument(
        "--single", type=int, metavar="N", help="one student making N moves back to back"
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not keep a ForwardMsg cache like the browser"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="LABEL",
        help="move only the control with this label (repeat for several)",
    )
    parser.add_argument(
        "--open", action="append", default=[], metavar="LABEL", dest="opened",
        help='each student opens this closed section after its first page and keeps it open '
        '("Check yourself", "Take it home"; repeat for several)',
    )  # fmt: skip
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="FLAG",
        help="extra `streamlit run` flag, e.g. --server-arg=--runner.postScriptGC=true",
    )  # fmt: skip
    parser.add_argument(
        "--server-cores", type=int, metavar="N",
        help="pin the server to N cores (the class runs on the others)",
    )  # fmt: skip
    parser.add_argument(
        "--server-quota", type=float, metavar="CORES",
        help="cap the server at this many cores' worth of CPU time (cgroup quota), e.g. 0.5",
    )  # fmt: skip
    parser.add_argument(
        "--no-floor", action="store_true",
        help="skip the empty app's class after the run (the first page's CPU ratio to it)",
    )  # fmt: skip
    parser.add_argument(
        "--waves", type=int, default=1,
        help="classes in turn on one server, new students each: does its memory come back?",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        args.share = CpuShare(args.server_cores, args.server_quota)
    except ValueError as err:
        parser.error(str(err))
    if args.page == "all":
        args.page = ",".join(LESSON_PAGES)
    if args.all_lessons:
        return all_lessons(args)
    single = args.single is not None
    if args.waves > 1:
        return waves(args)
    result = run_load(
        students=1 if single else args.students,
        duration=args.duration,
        interval=0.0 if single else args.interval,
        page=args.page,
        app=args.app,
        port=args.port,
        seed=args.seed,
        sync=args.sync,
        timeout=args.timeout,
        load_timeout=args.load_timeout,
        settle=args.settle,
        ramp=args.ramp,
        moves=args.single,
        query=args.query,
        use_cache=not args.no_cache,
        only=tuple(args.only),
        opened=tuple(args.opened),
        server_args=tuple(args.server_arg),
        url=args.url,
        reconnect=args.reconnect,
        share=args.share,
    )
    print(result.table())
    if not (single or args.url or args.no_floor):
        print(floor_line(result, args))
    return 1 if result.error_count else 0


def floor_line(result: LoadResult, args: argparse.Namespace) -> str:
    """The same class opening the empty app (benchmarks/empty_app.py, the project's config) on a
    fresh server with the same CPU share: a first page's CPU against Streamlit's own, the ratio
    that a change making every first page dearer moves, whatever the neighbours do."""
    from benchmarks.together import EMPTY_APP

    floor = run_load(
        students=args.students, duration=0.0, interval=60.0, page="", app=EMPTY_APP,
        seed=args.seed, ramp=args.ramp, load_timeout=args.load_timeout, settle=0.5,
        share=args.share,
    )  # fmt: skip
    page_ms = 1000 * result.cpu_loads_s / max(len(result.load_latencies_ms), 1)
    floor_ms = 1000 * floor.cpu_loads_s / max(len(floor.load_latencies_ms), 1)
    return (
        f"{'first pages':<18} {len(result.load_latencies_ms)} at once on a cold server: p95 "
        f"{_percentile(result.load_latencies_ms, 0.95) / 1000:.2f} s, {page_ms:.1f} ms of server "
        f"CPU each = {page_ms / floor_ms:.1f}x the empty app's {floor_ms:.1f} ms (its p95 "
        f"{_percentile(floor.load_latencies_ms, 0.95) / 1000:.2f} s)"
    )


LESSON_PAGES = [lesson.url_path for lesson in LESSONS]  # the lessons' declarations


def all_lessons(args: argparse.Namespace) -> int:
    """Every lesson in turn, a fresh server for each run: the class, then one student; one
    row a lesson. 1 when any run had an error."""
    header = (
        f"{'lesson':<17} {'class reruns':>13} {'errors':>6} {'median':>7} {'p95':>7} "
        f"{'max':>7} {'peak RSS':>9} | {'one student':>11} {'p95':>5} {'payload':>9}"
    )
    print(
        f"{args.students} students, a move every {args.interval:g} s for {args.duration:g} s; "
        f"one student: {args.single_moves} random moves back to back (ms, MiB, KiB)"
    )
    print(header)
    failed = False
    for page in LESSON_PAGES:
        common = dict(page=page, app=args.app, seed=args.seed, timeout=args.timeout,
                      load_timeout=args.load_timeout, settle=1.0, share=args.share)  # fmt: skip
        crowd = run_load(students=args.students, duration=args.duration,
                         interval=args.interval, **common)  # fmt: skip
        one = run_load(students=1, interval=0.0, moves=args.single_moves, **common)
        failed |= bool(crowd.error_count or one.error_count)
        print(
            f"{page:<17} {f'{crowd.achieved}/{crowd.offered}':>13} "
            f"{crowd.error_count + one.error_count:>6} {crowd.latency_median_ms:>7.0f} "
            f"{crowd.latency_p95_ms:>7.0f} {crowd.latency_max_ms:>7.0f} "
            f"{crowd.rss_peak_mib:>9.0f} | {one.latency_median_ms:>11.0f} "
            f"{one.latency_p95_ms:>5.0f} {one.payload_median_kib:>9.1f}",
            flush=True,
        )
    return 1 if failed else 0


GROWTH_LIMIT = 0.05  # the server's memory at the end, at most this far above its first-wave peak


def waves(args: argparse.Namespace) -> int:
    """--waves N: N classes in turn on one server; each wave's report, then the memory verdict.
    1 when any error happened or the memory at the end is over 5 % above the first-wave peak."""
    results = run_waves(
        args.waves, students=args.students, duration=args.duration, interval=args.interval,
        page=args.page, app=args.app, port=args.port, seed=args.seed, sync=args.sync,
        timeout=args.timeout, load_timeout=args.load_timeout, settle=args.settle, ramp=args.ramp,
        query=args.query, use_cache=not args.no_cache, only=tuple(args.only),
        opened=tuple(args.opened), server_args=tuple(args.server_arg), share=args.share,
    )  # fmt: skip
    for number, result in enumerate(results, 1):
        print(f"--- wave {number} of {len(results)}: {result.students} new students")
        print(result.table())
    print(memory_verdict(results))
    grew = growth(results) > GROWTH_LIMIT
    return 1 if grew or any(r.error_count for r in results) else 0


def growth(results: list[LoadResult]) -> float:
    """The server's memory after the last wave over its peak during the first, less 1."""
    return results[-1].rss_after_mib / results[0].rss_peak_mib - 1


def memory_verdict(results: list[LoadResult]) -> str:
    first, last = results[0], results[-1]
    peaks = ", ".join(f"{r.rss_peak_mib:.0f}" for r in results)
    return (
        f"server memory: peak per wave {peaks} MiB; after the last wave {last.rss_after_mib:.0f} "
        f"MiB, {100 * growth(results):+.1f} % against the first wave's peak "
        f"{first.rss_peak_mib:.0f} MiB (limit +{100 * GROWTH_LIMIT:.0f} %)"
    )
