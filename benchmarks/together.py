"""A class arriving at once: sixty (and two hundred) students opening a lesson's link (or the
app's root, the home page) within one second, on one server held to one core, every page in
turn, beside the empty app measured in the same run. Figures, not a test (issue 53;
docs/performance.md).

    python -m benchmarks.together                # home and every lesson, 60 and 200, one run
    python -m benchmarks.together --pages step_by_step --students 60 --runs 3
    python -m benchmarks.together --pages home    # the app's root: the link a teacher shares

Each row: a fresh server (`streamlit run`, the project's config), held to one core (taskset;
the students run on the other cores), the class opening the page's link spread over `--ramp`
seconds, the time from each student's connect to its first page's `script_finished` (p50, p95,
max), and the server's CPU time per first page (user + system of its process tree, from
/proc) with its ratio to the empty app's (`benchmarks/empty_app.py`, one slider, measured at the
start and the end of the same run, the mean of the two), and the messages a first page sends
(ForwardMsgs to its script_finished, the median). Wall times on a shared machine swing
2-10x with the neighbours; the CPU ratio does not, so read it first.

Each page is opened twice on its server, by two classes in turn: the first finds the server
cold (just started, as Community Cloud wakes a sleeping app when the class opens the link; as
deployed, it imported torch and drew every lesson once before it answered, `server.warm_start`:
`ATTENTION_DRAW_AT_START=0 python -m benchmarks.together` measures a server that does not draw
them, whose first student of a lesson makes what the others share), the second warm (a class
opening the link in the middle of a day of classes). Both are reported.

    python -m benchmarks.together --pages none --lines 50 100 --students 60
                                   # Streamlit's own cost an element: the empty app + N lines

With --cold-browsers every student's browser has never opened the app: before its socket it
fetches the page's document and Streamlit's frontend files (the paths a real headless Chromium
fetched for that page, recorded first on a server of their own: `benchmarks.load.frontend`),
those the browser fetched before its socket first, the rest while its page runs, and its time
runs from its first request to its first page's script_finished or its last file, whichever
comes later; the empty app's students (and the --lines rows) fetch the empty app's. Every app
serves them as streamlit_app.py does (`dashboard.frontend_files`). The column "KiB a visit" is
what those files weighed as sent (the median).
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

from benchmarks.load.crowd import run_waves
from benchmarks.load.frontend import FirstVisit, record
from benchmarks.load.report import LoadResult, _percentile
from benchmarks.load.server import REPO, CpuShare

EMPTY_APP = REPO / "benchmarks" / "empty_app.py"
HOME = "home"  # the app's root, the home page (its URL has no page name)
EMPTY = "(the empty app)"  # its first visit's files, apart from the app's
LINES_APP = REPO / "benchmarks" / "lines_app.py"


@dataclass(frozen=True)
class Arrival:
    """One class opening one page at once, as measured."""

    page: str
    students: int
    server: str  # "cold": the server's first class; "warm": its second
    p50_ms: float
    p95_ms: float
    max_ms: float
    cpu_ms: float  # the server's CPU a first page
    messages: float  # ForwardMsgs a first page (the median): what the page sends
    frontend_kib: float  # a cold browser's files as sent (the median); nan: not fetched
    loaded: int  # first pages that finished
    errors: int

    @classmethod
    def of(cls, page: str, server: str, result: LoadResult) -> Arrival:
        load = result.load_latencies_ms
        return cls(
            page=page or "(the empty app)",
            students=result.students,
            server=server,
            p50_ms=statistics.median(load) if load else float("nan"),
            p95_ms=_percentile(load, 0.95),
            max_ms=max(load, default=float("nan")),
            cpu_ms=1000 * result.cpu_loads_s / max(len(load), 1),
            messages=statistics.median(result.load_messages or [float("nan")]),
            frontend_kib=statistics.median(result.frontend_bytes or [float("nan")]) / 1024,
            loaded=len(load),
            errors=result.error_count,
        )


def arrive(
    page: str,
    students: int,
    ramp: float,
    seed: int,
    share: CpuShare,
    lines: int | None = None,
    frontend: FirstVisit | None = None,
) -> tuple[Arrival, Arrival]:
    """`students` open `page` within `ramp` seconds on a fresh server, then as many new ones on
    the same server; nobody moves. (cold, warm). `lines`: the empty app with that many lines of
    markdown instead (benchmarks/lines_app.py)."""
    app = EMPTY_APP if page == "" else REPO / "streamlit_app.py"
    query, label, page = "", page, "" if page == HOME else page
    if lines is not None:
        app, query, label = LINES_APP, f"lines={lines}", f"(the empty app + {lines} lines)"
    cold, warm = run_waves(
        2, students=students, duration=0.0, interval=60.0, page="" if lines else page, app=app,
        seed=seed, ramp=ramp, load_timeout=120.0, timeout=30.0, settle=0.5, share=share,
        query=query, frontend=frontend,
    )  # fmt: skip
    for result in (cold, warm):
        for kind, said in result.error_messages.items():
            print(f"  {label or EMPTY}, {kind}: {said[0]}", flush=True)
    return Arrival.of(label, "cold", cold), Arrival.of(label, "warm", warm)


def row(arrival: Arrival, floor_ms: float) -> str:
    ratio = arrival.cpu_ms / floor_ms if floor_ms > 0 else float("nan")
    return (
        f"| {arrival.page} | {arrival.students} | {arrival.server} | {arrival.p50_ms / 1000:.2f} | "
        f"{arrival.p95_ms / 1000:.2f} | {arrival.max_ms / 1000:.2f} | {arrival.cpu_ms:.1f} | "
        f"{ratio:.1f} | {arrival.messages:.0f} | {arrival.frontend_kib:.0f} | "
        f"{arrival.loaded}/{arrival.students} | "
        f"{arrival.errors} |"
    )


def main(argv: list[str] | None = None) -> int:
    from benchmarks.load.cli import LESSON_PAGES

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.together", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--pages",
        default="all",
        help='"all" (home and every lesson), "a,b" ("home": the root), or "none" (--lines only)',
    )
    parser.add_argument(
        "--lines", type=int, nargs="*", default=[],
        help="also the empty app with N lines of markdown, for each N: Streamlit's cost an element",
    )  # fmt: skip
    parser.add_argument("--students", type=int, nargs="+", default=[60, 200])
    parser.add_argument("--ramp", type=float, default=1.0, help="seconds the arrivals spread over")
    parser.add_argument("--runs", type=int, default=1, help="rows per page and class size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-cores", type=int, default=1)
    parser.add_argument(
        "--cold-browsers", action="store_true",
        help="every student's browser fetches the frontend's files first, as on a first visit",
    )  # fmt: skip
    args = parser.parse_args(argv)
    named = {"all": [HOME, *LESSON_PAGES], "none": []}
    pages = named[args.pages] if args.pages in named else args.pages.split(",")
    share = CpuShare(cores=args.server_cores)
    files: dict[str, FirstVisit] = {}
    if args.cold_browsers:
        files = record(REPO / "streamlit_app.py", ["" if p == HOME else p for p in pages])
        files[EMPTY] = record(EMPTY_APP, [""])[""]
        for page, visit in files.items():
            print(
                f"  a first visit to {page or HOME}: {len(visit.before)} files before its "
                f"socket, {len(visit.after)} after", flush=True,
            )  # fmt: skip

    def floor(n: int) -> tuple[Arrival, Arrival]:
        return arrive("", n, args.ramp, args.seed, share, frontend=files.get(EMPTY))

    floors = [a for n in args.students for a in floor(n)]
    start_ms = statistics.mean(f.cpu_ms for f in floors)
    rows = []
    for page in pages:
        for students in args.students:
            for run in range(args.runs):
                frontend = files.get("" if page == HOME else page)
                pair = arrive(page, students, args.ramp, args.seed + run, share, frontend=frontend)
                rows += pair
                for arrival in pair:  # as it comes, against the start's empty app: a run cut
                    print(f"  {row(arrival, start_ms)}", flush=True)  # short still says what it had
    lined = []
    for lines in args.lines:
        for students in args.students:
            for run in range(args.runs):
                seed, empty = args.seed + run, files.get(EMPTY)
                lined.append(
                    (lines, arrive("", students, args.ramp, seed, share, lines, frontend=empty))
                )
    rows += [arrival for _, pair in lined for arrival in pair]
    half = len(floors)
    floors += [a for n in args.students for a in floor(n)]
    floor_ms = statistics.mean(f.cpu_ms for f in floors)
    print(
        f"\n{', '.join(map(str, args.students))} students opening each page within "
        f"{args.ramp:g} s; the server on {share.describe()}; the empty app "
        f"{floor_ms:.1f} ms a first page (mean of {len(floors)}: "
        f"{', '.join(f'{f.cpu_ms:.1f}' for f in floors)})\n"
    )
    print("| page | students | server | p50 s | p95 s | max s | CPU ms a first page | × empty app "
          "| messages | KiB a visit | loaded | errors |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for arrival in floors[:half] + rows + floors[half:]:
        print(row(arrival, floor_ms))
    for lines, pair in lined:  # what an element adds to a first page, over the empty app's
        each = ", ".join(f"{a.server} {(a.cpu_ms - floor_ms) / lines:.3f}" for a in pair)
        print(f"\n{lines} lines, {pair[0].students} students: ms of server CPU a line: {each}")
    return 1 if any(r.errors or r.loaded < r.students for r in rows + floors) else 0


if __name__ == "__main__":
    raise SystemExit(main())
