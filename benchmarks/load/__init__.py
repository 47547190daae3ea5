"""A class of students on one `streamlit run` server, over Streamlit's own websocket protocol.

    python -m benchmarks.load                       # 60 students, 60 s, a move every ~5 s each
    python -m benchmarks.load --students 10 --duration 10 --interval 2 --sync
    python -m benchmarks.load --single 30           # one student, 30 back-to-back reruns
    python -m benchmarks.load --url http://127.0.0.1:8501   # a running server or balancer

(from the repo root). Starts `python -m streamlit run <app>` on a free loopback port (the repo's
streamlit_app.py unless --app), waits for /_stcore/health, and always kills the server's process
group at the end. With --url it starts nothing and drives the server (or load balancer, e.g.
`deploy/serve`) already listening there; each student then behaves like a browser towards a
balancer: it keeps the cookies of its websocket handshake (HAProxy's SERVERID stickiness cookie)
and sends them again when it reconnects. The report then shows how the sessions spread over the
workers (the `X-Worker` response header deploy/serve's HAProxy adds, else the SERVERID cookie)
with each worker's latencies. With --reconnect a student whose socket closes (its worker died)
reconnects through the same URL and reloads its page with its widget states, as Streamlit's
frontend does; those reconnections and the time they took are reported instead of counted as
errors.

Each simulated student is a websocket client that speaks what the browser speaks: it loads the
lesson page (--page, default step_by_step), learns the page's widgets from what the server sends,
and every --interval seconds (jittered, or all at once with --sync) moves one random control to
another valid value and waits for that rerun to finish. `--single N` is the "single student
rerun" figure: one student, N moves back to back (interval 0, no duration limit), after the page
load. The report gives reruns offered / sent / achieved / skipped, rerun and page-load latency,
errors by kind with the widget values that led to them, the payload per rerun and the server's
resident memory (sessions per worker with --url). The exit code is 1 when any error happened, so
a CI smoke can fail on it.

Limitations: the clients run in this process on the same machine as the server, so they share
its cores; payload sizes are message sizes (after permessage-deflate is undone, before any
compression on the wire); widgets inside forms, disabled widgets and widget kinds not listed in
`protocol` are not moved (kinds not listed are left at their defaults, which is what an idle
browser does).

The modules, each with its details: `protocol` (the widgets a page shows and the WidgetStates a
browser sends, as the 1.67 frontend does), `student` (one tab: connect, load, move, reconnect),
`crowd` (the class on its schedule, and `run_load`), `server` (`streamlit run`, free ports, the
memory of its process tree), `report` (`LoadResult`, the errors by kind and the printed report),
`cli` (the flags). The public API, re-exported from the modules that define it.
"""

from benchmarks.load.cli import main
from benchmarks.load.crowd import LoadConfig, move_slots, run_load, run_waves
from benchmarks.load.protocol import OK_STATUSES, Widget, widget_from_element
from benchmarks.load.report import LoadResult
from benchmarks.load.server import (
    DEFAULT_APP,
    REPO,
    CpuShare,
    Server,
    children,
    free_port,
    tree_rss_mib,
)
from benchmarks.load.student import RunOutcome, Student, worker_of

__all__ = [
    "DEFAULT_APP",
    "OK_STATUSES",
    "REPO",
    "CpuShare",
    "LoadConfig",
    "LoadResult",
    "RunOutcome",
    "Server",
    "Student",
    "Widget",
    "children",
    "free_port",
    "main",
    "move_slots",
    "run_load",
    "run_waves",
    "tree_rss_mib",
    "widget_from_element",
    "worker_of",
]
