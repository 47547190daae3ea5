"""A class of students on one `streamlit run` server, over Streamlit's own websocket protocol.

    python benchmarks/load.py                       # 60 students, 60 s, a move every ~5 s each
    python benchmarks/load.py --students 10 --duration 10 --interval 2 --sync
    python benchmarks/load.py --single 30           # one student, 30 back-to-back reruns
    python benchmarks/load.py --url http://127.0.0.1:8501   # a running server or balancer

Starts `python -m streamlit run <app>` on a free loopback port (the repo's streamlit_app.py
unless --app), waits for /_stcore/health, and always kills the server's process group at the end.
With --url it starts nothing and drives the server (or load balancer, e.g. `deploy/serve`)
already listening there; each student then behaves like a browser towards a balancer: it keeps
the cookies of its websocket handshake (HAProxy's SERVERID stickiness cookie) and sends them
again when it reconnects. The report then shows how the sessions spread over the workers (the
`X-Worker` response header deploy/serve's HAProxy adds, else the SERVERID cookie) with each
worker's latencies. With --reconnect a student whose socket closes (its worker died) reconnects
through the same URL and reloads its page with its widget states, as Streamlit's frontend does;
those reconnections and the time they took are reported instead of counted as errors.

Each simulated student is a websocket client that speaks what the browser speaks: it connects to
/_stcore/stream with the "streamlit" subprotocol, loads the lesson page (--page, default
step_by_step) with a `rerun_script` BackMsg, and reads ForwardMsgs until `script_finished`. From
the `new_element` deltas it learns the page's widgets (slider, select_slider, number_input,
checkbox/toggle, selectbox, radio) with their ids, ranges, options and current values. Then, every
--interval seconds (each student on its own random phase with +/-25 % jitter, or all at the same
instant with --sync), it moves one random control to a random other valid value and sends
`rerun_script` with the full WidgetStates, as the frontend does, and waits for that rerun to finish
before it may move again (a slot that comes round while it is still waiting is skipped and shown
as "skipped (busy)"). The moving window opens for everyone once every student has loaded the page.

Protocol details it copies from the 1.67 frontend: the first rerun names the page by `page_name`
(its url path), later ones by the `page_script_hash` the server reported (new_session /
navigation); widget values go in the proto fields the server registers (slider:
double_array_value; select_slider: string_array_value of the formatted options; number_input:
int_value or double_value by its data type; checkbox/toggle: bool_value; selectbox/radio:
string_value of the formatted option); a control bound to a query parameter rewrites the query
string sent with the next rerun, and `page_info_changed` replaces it; it keeps a ForwardMsg cache
and sends its hashes (`cached_message_hashes`), so large unchanged elements come back as small
`ref_hash` messages (--no-cache turns that off). The client is the `websockets` package, which
Streamlit 1.67 itself depends on (its server is Starlette/uvicorn; tornado is gone).

`--single N` is the "single student rerun" figure: one student, N moves back to back (interval 0,
no duration limit), after the page load.

What it reports (and returns from `run_load` as a `LoadResult`):

- reruns offered (move slots scheduled in the window), sent, achieved (finished), skipped;
- latency from sending the rerun to its `script_finished`: median / p95 / max in ms, for the
  moves and, separately, for the first page load of each student;
- errors by kind, with the first few messages and the widget values that led to them (enough
  to reproduce by hand): `exception` (an exception element shown in the
  app), `warning_box` (an exception element marked as a warning), `compile_error`,
  `page_not_found`, `timeout` (no `script_finished` within --timeout; the student then waits
  up to twice as long again for that run to end before it moves on), `load_timeout` (the same for
  the first page load, --load-timeout), `stuck` (that late run never ended: the student leaves),
  `disconnect`, `connect`, `reconnect` (--reconnect: no live worker within --load-timeout),
  `cache_miss` (a `ref_hash` to a message this client never got),
  `no_widgets` (the page showed no control to move), `server_exit`, `client_bug`;
- with --url: sessions per worker, and each worker's rerun latency median / p95; with
  --reconnect: how many students reconnected and how long their interrupted move took
  (from sending it, through reconnecting and reloading, to its script_finished);
- the median payload of a rerun (sum of the websocket message sizes from send to finish);
- the server's resident memory (VmRSS of the server process and its children, sampled every
  0.5 s): at baseline (started, no session yet), after every student has loaded the page, the
  peak during the run, and after the crowd has left (--settle seconds after the last disconnect);
  not with --url (the server is not this script's child).

The exit code is 1 when any error happened, so a CI smoke can fail on it.

Limitations: the clients run in this process on the same machine as the server, so they share
its cores; payload sizes are message sizes (after permessage-deflate is undone, before any
compression on the wire); widgets inside forms, disabled widgets and widget kinds not listed above
are not moved (kinds not listed are left at their defaults, which is what an idle browser does).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

REPO = Path(__file__).resolve().parents[1]
DEFAULT_APP = REPO / "streamlit_app.py"

Status = ForwardMsg.ScriptFinishedStatus
OK_STATUSES = {Status.FINISHED_SUCCESSFULLY, Status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
MAX_MESSAGES_KEPT = 5  # first messages kept per error kind
RSS_PERIOD_S = 0.5


# --------------------------------------------------------------------------------------------
# Widgets: what the page shows, and the WidgetState the frontend would send for each
# --------------------------------------------------------------------------------------------


def _js_str(v: Any) -> str:
    """String(v) as JavaScript writes it: 8 not 8.0, true not True."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass
class Widget:
    """One control of the page, its range and its current value in wire form.

    `value` is what goes into the WidgetState: list[float] (slider, double_array_value),
    list[str] (select_slider, string_array_value: the formatted options), int or float
    (number_input: int_value for INT inputs, double_value for FLOAT ones, as the frontend does),
    bool (checkbox/toggle, bool_value), str (selectbox/radio, string_value: the formatted option)
    or None (no value yet: no state is sent, the server uses the default).
    """

    id: str
    kind: str
    label: str
    value: Any
    movable: bool
    lo: float = 0.0
    hi: float = 0.0
    step: float = 1.0
    is_int: bool = False
    options: list[str] = field(default_factory=list)
    default: Any = None
    param_key: str = ""  # bound to this query parameter (`bind="query-params"`)

    def state(self) -> WidgetState | None:
        if self.value is None:
            return None
        ws = WidgetState(id=self.id)
        if self.kind == "slider":
            ws.double_array_value.data.extend(self.value)
        elif self.kind == "select_slider":
            ws.string_array_value.data.extend(self.value)
        elif self.kind == "number_input":
            if self.is_int:
                ws.int_value = int(self.value)
            else:
                ws.double_value = float(self.value)
        elif self.kind == "checkbox":
            ws.bool_value = bool(self.value)
        else:  # selectbox, radio
            ws.string_value = str(self.value)
        return ws

    def url_value(self) -> list[str] | None:
        """What the frontend writes into the URL for this value; None: drop the parameter."""
        if self.value is None or self.value == self.default:
            return None
        values = self.value if isinstance(self.value, list) else [self.value]
        return [_js_str(v) for v in values]

    def describe(self) -> str:
        value = self.value
        if isinstance(value, list):
            value = ", ".join(_js_str(v) for v in value)
        elif value is not None:
            value = _js_str(value)
        return f"{self.label}={value}"

    def _grid_point(self, rng: random.Random, lo: float, hi: float) -> float:
        steps = max(0, math.floor((hi - lo) / self.step + 1e-9)) if self.step > 0 else 0
        v = lo + rng.randint(0, steps) * self.step
        return float(round(v)) if self.is_int else round(v, 10)

    def random_value(self, rng: random.Random) -> Any:
        """A random valid value, different from the current one when there is another."""
        for _ in range(20):
            new = self._draw(rng)
            if new != self.value:
                return new
        return new

    def _draw(self, rng: random.Random) -> Any:
        if self.kind == "slider":
            picks = sorted(self._grid_point(rng, self.lo, self.hi) for _ in self.value)
            return picks
        if self.kind == "select_slider":
            idx = sorted(rng.randrange(len(self.options)) for _ in self.value)
            return [self.options[i] for i in idx]
        if self.kind == "number_input":
            v = self._grid_point(rng, self.lo, self.hi)
            return int(v) if self.is_int else v
        if self.kind == "checkbox":
            return not self.value
        return rng.choice(self.options)


def _numeric_bounds(
    has_min: bool, lo: float, has_max: bool, hi: float, centre: float, step: float
) -> tuple[float, float]:
    """A number_input without min/max: move within ten steps either side of its value."""
    if not has_min:
        lo = centre - 10 * step
    if not has_max:
        hi = centre + 10 * step
    return lo, hi


def widget_from_element(element: Element, known: dict[str, Widget]) -> Widget | None:
    """The Widget for a new_element delta, or None when it is not a control we drive.

    The value is the server's when it set one (`set_value`), else the one this student already
    had for the same id, else the default: what the frontend would show.
    """
    kind = element.WhichOneof("type")
    if kind not in {"slider", "number_input", "checkbox", "selectbox", "radio"}:
        return None
    proto = getattr(element, kind)
    extra: dict[str, Any] = {}
    server_value: Any = None

    if kind == "slider" and proto.type == Slider.Type.SELECT_SLIDER:
        kind, options = "select_slider", list(proto.options)
        if not options:
            return None
        default: Any = [options[int(i)] for i in proto.default]
        if proto.set_value:
            server_value = list(proto.raw_value)
        extra = {"options": options}
    elif kind == "slider":
        default = [float(v) for v in proto.default]
        if proto.set_value:
            server_value = [float(v) for v in proto.value]
        extra = {
            "lo": proto.min, "hi": proto.max, "step": proto.step or 1.0,
            "is_int": proto.data_type != Slider.DataType.FLOAT,
        }  # fmt: skip
    elif kind == "number_input":
        is_int = proto.data_type == NumberInput.DataType.INT
        step = proto.step or (1.0 if is_int else 0.01)
        default = proto.default if proto.HasField("default") else None
        if proto.set_value and proto.HasField("value"):
            server_value = proto.value
        centre = next((v for v in (server_value, default) if v is not None), 0.0)
        lo, hi = _numeric_bounds(proto.has_min, proto.min, proto.has_max, proto.max, centre, step)
        extra = {"lo": lo, "hi": hi, "step": step, "is_int": is_int}
    elif kind == "checkbox":
        default = proto.default
        if proto.set_value:
            server_value = proto.value
    else:  # selectbox / radio: the state is the formatted option string
        options = list(proto.options)
        if not options:
            return None
        default = options[proto.default] if proto.HasField("default") else None
        if proto.set_value and proto.HasField("raw_value"):
            server_value = proto.raw_value
        extra = {"options": options}

    prev = known.get(proto.id)
    if server_value is not None:
        value = server_value
    elif prev is not None and prev.kind == kind:
        value = prev.value
    else:
        value = default
    if kind == "number_input" and extra["is_int"]:
        value = None if value is None else int(value)
        default = None if default is None else int(default)
    movable = not proto.disabled and not proto.form_id and not proto.ignore_rerun
    return Widget(
        proto.id, kind, proto.label, value, movable, default=default,
        param_key=proto.query_param_key, **extra,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class LoadResult:
    """Everything one run measured. Latencies in ms, payloads in bytes, memory in MiB."""

    app: str
    page: str
    students: int
    duration_s: float
    interval_s: float
    sync: bool
    moves_per_student: int | None = None
    offered: int = 0
    sent: int = 0
    achieved: int = 0
    skipped_busy: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    load_latencies_ms: list[float] = field(default_factory=list)
    payloads: list[int] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    error_messages: dict[str, list[str]] = field(default_factory=dict)
    widgets: list[str] = field(default_factory=list)
    rss_baseline_mib: float = float("nan")
    rss_loaded_mib: float = float("nan")
    rss_peak_mib: float = float("nan")
    rss_after_mib: float = float("nan")
    wall_s: float = 0.0
    client_cpu_s: float = 0.0
    target: str = ""  # the URL driven (--url), empty when run_load started its own server
    workers: Counter[str] = field(default_factory=Counter)  # sessions per worker
    worker_latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    reconnect_ms: list[float] = field(default_factory=list)
    undisturbed_ms: list[float] = field(default_factory=list)  # students who never reconnected

    def error(self, kind: str, message: str = "") -> None:
        self.errors[kind] += 1
        kept = self.error_messages.setdefault(kind, [])
        if message and len(kept) < MAX_MESSAGES_KEPT and message not in kept:
            kept.append(message)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def latency_median_ms(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    @property
    def latency_p95_ms(self) -> float:
        return _percentile(self.latencies_ms, 0.95)

    @property
    def latency_max_ms(self) -> float:
        return max(self.latencies_ms, default=float("nan"))

    @property
    def payload_median_kib(self) -> float:
        return statistics.median(self.payloads) / 1024 if self.payloads else float("nan")

    def table(self) -> str:
        mode = (
            f"{self.moves_per_student} moves each, back to back"
            if self.moves_per_student is not None
            else f"{self.duration_s:g} s, a move every {self.interval_s:g} s"
            + (" (all at once)" if self.sync else " (jittered)")
        )
        load = self.load_latencies_ms
        rows = [
            ("app / page", f"{self.app} / {self.page or '(main)'}"),
            ("students", f"{self.students} ({mode})"),
            ("widgets found", ", ".join(self.widgets) or "none"),
            (
                "reruns",
                f"offered {self.offered}, sent {self.sent}, achieved {self.achieved}, "
                f"skipped (busy) {self.skipped_busy}",
            ),
            (
                "rerun latency",
                f"median {self.latency_median_ms:.0f} ms, p95 {self.latency_p95_ms:.0f} ms, "
                f"max {self.latency_max_ms:.0f} ms",
            ),
            (
                "page load latency",
                f"median {statistics.median(load) if load else float('nan'):.0f} ms, "
                f"max {max(load, default=float('nan')):.0f} ms",
            ),
            ("payload per rerun", f"median {self.payload_median_kib:.1f} KiB"),
            (
                "server RSS",
                "not measured (--url: the server is not this script's child)"
                if self.target
                else f"baseline {self.rss_baseline_mib:.0f} MiB, loaded "
                f"{self.rss_loaded_mib:.0f} MiB, peak {self.rss_peak_mib:.0f} MiB, "
                f"after {self.rss_after_mib:.0f} MiB",
            ),
            *self._worker_rows(),
            ("run statuses", ", ".join(f"{k} {v}" for k, v in self.statuses.items()) or "-"),
            (
                "errors",
                ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none",
            ),
            (
                "wall time",
                f"{self.wall_s:.1f} s (the simulated students used {self.client_cpu_s:.1f} s "
                "of CPU on this machine)",
            ),
        ]
        if self.target:
            rows.insert(0, ("target", self.target))
        width = max(len(name) for name, _ in rows)
        lines = [f"{name:<{width}}  {value}" for name, value in rows]
        for kind, messages in sorted(self.error_messages.items()):
            for message in messages:
                first, *rest = message.split("\n")
                lines.append(f"  {kind}: {first[:300]}")
                lines.extend(f"      {line[:300]}" for line in rest)
        return "\n".join(lines)

    def _worker_rows(self) -> list[tuple[str, str]]:
        """Sessions and latencies per worker (only when driving a balancer)."""
        rows: list[tuple[str, str]] = []
        if self.workers:
            spread = ", ".join(f"{w} {n}" for w, n in sorted(self.workers.items()))
            rows.append(
                ("sessions per worker", spread + " (websocket sessions, reconnections included)")
            )
        for worker, lat in sorted(self.worker_latencies_ms.items()):
            rows.append(
                (
                    f"  latency on {worker}",
                    f"median {statistics.median(lat) if lat else float('nan'):.0f} ms, "
                    f"p95 {_percentile(lat, 0.95):.0f} ms ({len(lat)} reruns)",
                )
            )
        if self.reconnect_ms:
            rec = self.reconnect_ms
            rows.append(
                (
                    "reconnected",
                    f"{len(rec)} students; their interrupted move took median "
                    f"{statistics.median(rec):.0f} ms, max {max(rec):.0f} ms",
                )
            )
            calm = self.undisturbed_ms
            rows.append(
                (
                    "  the others",
                    f"median {statistics.median(calm) if calm else float('nan'):.0f} ms, "
                    f"p95 {_percentile(calm, 0.95):.0f} ms ({len(calm)} reruns of students "
                    "who never lost their socket)",
                )
            )
        return rows


def worker_of(headers: Any) -> str:
    """The worker that answered: HAProxy's X-Worker header, else the SERVERID cookie value."""
    worker = headers.get("X-Worker")
    if worker:
        return str(worker)
    for cookie in headers.get_all("Set-Cookie") if hasattr(headers, "get_all") else []:
        name, _, rest = cookie.partition("=")
        if name.strip() == "SERVERID":
            return rest.split(";")[0]
    return ""


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            kids.extend(int(k) for k in task.read_text().split())
    return kids


def tree_rss_mib(pid: int) -> float:
    """VmRSS of pid and all its descendants, in MiB (nan where /proc is missing)."""
    total_kib, todo, seen = 0, [pid], set()
    found = False
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
                    found = True
        except OSError:
            continue
        todo.extend(_children(p))
    return total_kib / 1024 if found else float("nan")


class Server:
    """`streamlit run app` in its own process group, with its output in a temporary file."""

    def __init__(self, app: Path, port: int, extra: tuple[str, ...] = ()) -> None:
        self.app, self.port, self.extra = app, port, extra
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="streamlit-load-", suffix=".log", delete=False
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [
            sys.executable, "-m", "streamlit", "run", str(self.app),
            "--server.headless", "true",
            "--server.port", str(self.port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
            *self.extra,
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.app.parent,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as a whole in stop()
        )

    def wait_healthy(self, timeout: float = 60.0) -> None:
        url = f"http://127.0.0.1:{self.port}/_stcore/health"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.read().strip() == b"ok":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"{url} did not answer ok within {timeout:g} s:\n{self.tail()}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines: int = 30) -> str:
        self.log.flush()
        text = Path(self.log.name).read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is not None:
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, sig)
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)


# --------------------------------------------------------------------------------------------
# A student
# --------------------------------------------------------------------------------------------


@dataclass
class RunOutcome:
    status: int | None  # None: timed out or disconnected
    latency_ms: float
    payload: int
    widgets: dict[str, Widget]
    reconnected: bool = False


class Student:
    """One browser tab: a websocket, a page, its widgets and a ForwardMsg cache."""

    def __init__(
        self,
        index: int,
        base: str,
        page: str,
        query: str,
        rng: random.Random,
        result: LoadResult,
        use_cache: bool = True,
        only: tuple[str, ...] = (),
        reconnect: bool = False,
    ) -> None:
        self.index, self.base, self.page, self.query = index, base.rstrip("/"), page, query
        self.reconnect_on_close = reconnect
        self.cookies: dict[str, str] = {}  # what a browser would keep: the stickiness cookie
        self.worker = ""
        self.latencies_ms: list[float] = []  # this student's moves (reconnected ones apart)
        self.reconnections = 0
        self.only = only  # labels of the controls this student may move (empty: any)
        self.rng, self.result, self.use_cache = rng, result, use_cache
        self.ws: ClientConnection | None = None
        self.inbox: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        self.reader: asyncio.Task[None] | None = None
        self.widgets: dict[str, Widget] = {}
        self.page_hash = ""  # after the first run the frontend names the page by its hash
        self.cache: dict[str, tuple[bytes, int]] = {}  # hash -> (message, run count when used)
        self.run_count = 0
        self.max_cache_age = 2
        self.closed = False
        self.closed_seen = False  # the reader saw the socket close
        self.last_move = "the page load"

    async def open(self, timeout: float, kind: str = "connect") -> bool:
        parts = urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{parts.path}/_stcore/stream"
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        try:
            self.ws = await connect(
                url,
                subprotocols=[Subprotocol("streamlit")],
                max_size=None,
                open_timeout=timeout,
                ping_interval=None,
                additional_headers=headers if self.cookies else None,
            )
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            self.result.error(kind, f"student {self.index}: {exc!r}")
            self.closed = True
            return False
        response = self.ws.response
        if response is not None:
            for cookie in response.headers.get_all("Set-Cookie"):
                name, _, rest = cookie.partition("=")
                self.cookies[name.strip()] = rest.split(";")[0]
            self.worker = worker_of(response.headers)
            if self.worker:
                self.result.workers[self.worker] += 1
        self.closed = self.closed_seen = False
        self.inbox = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())
        return True

    async def reopen(self, timeout: float) -> bool:
        """The socket closed (its worker died): connect again through the same URL, retrying
        for up to timeout seconds as the frontend does, and forget the old ForwardMsg cache."""
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        self.cache.clear()
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                self.result.error("reconnect", f"student {self.index}: no live worker")
                self.closed = True
                return False
            scratch = LoadResult(app="", page="", students=0, duration_s=0, interval_s=0,
                                 sync=False)  # fmt: skip
            real, self.result = self.result, scratch  # failed attempts are not errors
            try:
                ok = await self.open(min(remaining, 5.0))
            finally:
                self.result = real
            if ok:
                if self.worker:
                    self.result.workers[self.worker] += 1
                return True
            await asyncio.sleep(0.5)

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for raw in self.ws:
                data = raw if isinstance(raw, bytes) else raw.encode()
                self.inbox.put_nowait((time.perf_counter(), data))
        except ConnectionClosed:
            pass
        finally:
            self.inbox.put_nowait(None)

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        self.closed = True

    def _rerun_msg(self, widgets: dict[str, Widget]) -> bytes:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.page
        for widget in widgets.values():
            state = widget.state()
            if state is not None:
                cs.widget_states.widgets.append(state)
        if self.use_cache:
            cs.cached_message_hashes.extend(self.cache)
        info = cs.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url = f"{self.base}/{self.page}"
        info.is_embedded, info.color_scheme = False, "light"
        return msg.SerializeToString()

    def _drain_idle(self) -> None:
        """Messages that came between runs (status changes): read, not counted in a rerun."""
        while not self.inbox.empty():
            item = self.inbox.get_nowait()
            if item is None:
                self.closed_seen = True
                self.inbox.put_nowait(None)  # keep the end marker for the next reader
                return
            self._parse(item[1], {}, None)

    def _parse(
        self, data: bytes, widgets: dict[str, Widget], errors: list[tuple[str, str]] | None
    ) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                if errors is not None:
                    errors.append(("cache_miss", msg.ref_hash))
                return msg
            self.cache[msg.ref_hash] = (cached[0], self.run_count)
            msg = ForwardMsg()
            msg.ParseFromString(cached[0])
        elif self.use_cache and msg.metadata.cacheable and msg.hash and msg.hash not in self.cache:
            self.cache[msg.hash] = (data, self.run_count)

        kind = msg.WhichOneof("type")
        if kind == "new_session":
            if msg.new_session.page_script_hash:
                self.page_hash = msg.new_session.page_script_hash
            age = msg.new_session.config.max_cached_message_age
            self.max_cache_age = age if age > 0 else self.max_cache_age
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string  # the app rewrote the URL
        elif kind == "page_not_found" and errors is not None:
            name = msg.page_not_found.page_name or self.page
            errors.append(("page_not_found", f"no page {name!r}, the app showed its default"))
        elif kind == "session_event" and errors is not None:
            exc = msg.session_event.script_compilation_exception
            if msg.session_event.HasField("script_compilation_exception"):
                errors.append(("compile_error", f"{exc.type}: {exc.message}"))
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "exception" and errors is not None:
                exc = element.exception
                first_line = exc.message.strip().split("\n")[0]
                errors.append(
                    ("warning_box" if exc.is_warning else "exception", f"{exc.type}: {first_line}")
                )
            else:
                widget = widget_from_element(element, self.widgets)
                if widget is not None:
                    widgets[widget.id] = widget
        return msg

    def _age_cache(self) -> None:
        self.run_count += 1
        for key, (_, used) in list(self.cache.items()):
            if self.run_count - used > self.max_cache_age:
                del self.cache[key]

    async def rerun(self, widgets: dict[str, Widget], timeout: float, kind: str) -> RunOutcome:
        """Send one rerun_script and read until its script_finished (or timeout).

        With reconnect on, a socket that closes before or during the run is opened again and
        the run sent again, as the frontend does; the outcome's latency then counts from the
        first send and `reconnected` is set.
        """
        start = time.perf_counter()
        outcome = await self._rerun_once(widgets, timeout, kind)
        if not (self.closed and self.reconnect_on_close):
            return outcome
        if not await self.reopen(timeout):
            return outcome
        outcome = await self._rerun_once(widgets, timeout, kind)
        if outcome.status is not None:
            outcome = RunOutcome(outcome.status, (time.perf_counter() - start) * 1000,
                                 outcome.payload, outcome.widgets, reconnected=True)  # fmt: skip
            self.result.reconnect_ms.append(outcome.latency_ms)
            self.reconnections += 1
        return outcome

    async def _rerun_once(
        self, widgets: dict[str, Widget], timeout: float, kind: str
    ) -> RunOutcome:
        assert self.ws is not None
        self._drain_idle()
        if self.closed_seen and self.reconnect_on_close:
            self.closed = True  # the socket died while idle: reconnect before this move
            return RunOutcome(None, 0.0, 0, {})
        self.widgets = dict(widgets)  # what the tab now shows: the moved control included
        payload = 0
        seen: dict[str, Widget] = {}
        errors: list[tuple[str, str]] = []
        start = time.perf_counter()
        deadline = start + timeout
        try:
            await self.ws.send(self._rerun_msg(widgets))
        except ConnectionClosed as exc:
            if not self.reconnect_on_close:
                self.result.error("disconnect", f"student {self.index} on send: {exc!r}")
            self.closed = True
            return RunOutcome(None, 0.0, 0, {})
        status: int | None = None
        finished_at = start
        while True:
            remaining = deadline - time.perf_counter()
            try:
                item = await asyncio.wait_for(self.inbox.get(), max(remaining, 0.001))
            except TimeoutError:
                self.result.error(
                    kind, f"no script_finished in {timeout:g} s\n{self.where(widgets)}"
                )
                status = None
                break
            if item is None:
                if not self.reconnect_on_close:
                    self.result.error(
                        "disconnect", f"student {self.index}: server closed the socket"
                    )
                self.closed = True
                break
            finished_at, data = item
            payload += len(data)
            msg = self._parse(data, seen, errors)
            if msg.WhichOneof("type") != "script_finished":
                continue
            status = msg.script_finished
            self.result.statuses[Status.Name(status)] += 1
            if status == Status.FINISHED_EARLY_FOR_RERUN:
                continue  # a newer run of ours is on its way: keep waiting for it
            self._age_cache()
            break
        if status is not None and status not in OK_STATUSES:
            errors.append(("compile_error", Status.Name(status)))
        where = self.where(widgets)
        for err_kind, message in dict.fromkeys(errors):  # once per rerun is enough
            self.result.error(err_kind, f"{message}\n{where}")
        if status in OK_STATUSES and not self.closed:
            self.widgets = seen  # the frontend drops widgets the run did not show
        elif seen:
            self.widgets.update(seen)
        return RunOutcome(status, (finished_at - start) * 1000, payload, seen)

    async def wait_stale_run(self, timeout: float) -> bool:
        """After a timeout: let the late run finish before moving again. False: give up."""
        deadline = time.perf_counter() + timeout
        while not self.closed:
            try:
                item = await asyncio.wait_for(
                    self.inbox.get(), max(deadline - time.perf_counter(), 0.001)
                )
            except TimeoutError:
                return False
            if item is None:
                self.closed = True
                return False
            msg = self._parse(item[1], {}, None)
            if (
                msg.WhichOneof("type") == "script_finished"
                and msg.script_finished != Status.FINISHED_EARLY_FOR_RERUN
            ):
                self._age_cache()
                return True
        return False

    def where(self, widgets: dict[str, Widget]) -> str:
        """Enough context to reproduce a failure by hand."""
        state = "; ".join(w.describe() for w in widgets.values())
        query = f"?{self.query}" if self.query else "(none)"
        return f"student {self.index}, after {self.last_move}; query {query}; widgets: {state}"

    def move(self) -> dict[str, Widget] | None:
        """The widget states after moving one random control, or None if nothing can move.

        A control bound to a query parameter also rewrites the query string, as the frontend
        does: the parameter is dropped at the default value and set otherwise.
        """
        movable = [w for w in self.widgets.values() if w.movable]
        if self.only:
            movable = [w for w in movable if w.label in self.only]
        if not movable:
            return None
        target = self.rng.choice(movable)
        moved = Widget(**{**target.__dict__, "value": target.random_value(self.rng)})
        self.last_move = f"moving {moved.describe()}"
        if moved.param_key:
            pairs = list(parse_qsl(self.query, keep_blank_values=True))
            pairs = [(k, v) for k, v in pairs if k != moved.param_key]
            pairs += [(moved.param_key, v) for v in moved.url_value() or []]
            self.query = urlencode(sorted(pairs, key=lambda kv: kv[0]))
        widgets = dict(self.widgets)
        widgets[moved.id] = moved
        return widgets


# --------------------------------------------------------------------------------------------
# The class
# --------------------------------------------------------------------------------------------


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


async def _student_session(student: Student, gate: Gate, cfg: LoadConfig) -> None:
    """Load the page, wait for the class, then move on schedule until the window closes."""
    result = student.result
    try:
        if not await student.open(cfg.load_timeout):
            return
        outcome = await student.rerun({}, cfg.load_timeout, "load_timeout")
        if outcome.status is not None:
            result.load_latencies_ms.append(outcome.latency_ms)
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


async def _sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(tree_rss_mib(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), RSS_PERIOD_S)


async def _run_class(server: Server | None, base: str, result: LoadResult, cfg: LoadConfig) -> None:
    """The class against base; the server's memory and exit are watched when it is ours."""
    pid = server.proc.pid if server is not None and server.proc is not None else None
    rng = random.Random(cfg.seed)
    students = [
        Student(
            i,
            base,
            cfg.page,
            cfg.query,
            random.Random(rng.getrandbits(64)),
            result,
            use_cache=cfg.use_cache,
            only=cfg.only,
            reconnect=cfg.reconnect,
        )
        for i in range(cfg.students)
    ]
    gate = Gate(len(students))
    samples: list[float] = []
    stop_sampling = asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(pid, samples, stop_sampling)) if pid else None
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
        gate.open()
        if cfg.moves is not None:
            bound = cfg.moves * (cfg.interval + 3 * cfg.timeout) + 10
        else:
            bound = cfg.duration + 3 * cfg.timeout + 10
        done, pending = await asyncio.wait(tasks, timeout=bound)
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


def run_load(
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
) -> LoadResult:
    """Start the app, run the class against it, stop the app, return what was measured.

    `url`: drive the server or balancer already listening there (e.g. `deploy/serve`'s
    http://127.0.0.1:8501) instead of starting one; `app`, `port` and `server_args` are then
    unused and the result has the sessions per worker. `reconnect`: a student whose socket
    closes reconnects and reloads (as the frontend does) instead of leaving with an error.

    `moves`: each student makes exactly this many moves, `interval` apart (0: back to back),
    and `duration` is ignored. `ramp`: spread the students' arrivals over this many seconds.
    `only`: the labels of the controls students move (empty: any). `server_args`: extra
    `streamlit run` flags, e.g. ("--runner.postScriptGC", "true") to measure a setting.
    """
    app_path = Path(app).resolve()
    if not url and not app_path.is_file():
        raise FileNotFoundError(app_path)
    if url and urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"--url must start with http:// or https://, got {url!r}")
    result = LoadResult(
        app=url or str(app_path), page=page, target=url, students=students, duration_s=duration,
        interval_s=interval, sync=sync, moves_per_student=moves,
    )  # fmt: skip
    cfg = LoadConfig(
        students=students, duration=duration, interval=interval, page=page, query=query,
        seed=seed, sync=sync, timeout=timeout, load_timeout=load_timeout, settle=settle,
        ramp=ramp, moves=moves, use_cache=use_cache, only=tuple(only), reconnect=reconnect,
    )  # fmt: skip
    began = time.perf_counter()
    if url:
        cpu0 = time.process_time()
        asyncio.run(_run_class(None, url, result, cfg))
        result.client_cpu_s = time.process_time() - cpu0
        result.wall_s = time.perf_counter() - began
        return result
    server = Server(app_path, port or free_port(), tuple(server_args))
    try:
        server.start()
        server.wait_healthy()
        time.sleep(1.0)  # let the server finish settling before the baseline
        assert server.proc is not None
        result.rss_baseline_mib = tree_rss_mib(server.proc.pid)
        cpu0 = time.process_time()
        asyncio.run(_run_class(server, f"http://127.0.0.1:{server.port}", result, cfg))
        result.client_cpu_s = time.process_time() - cpu0
    finally:
        server.stop()
    result.wall_s = time.perf_counter() - began
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of moving")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between moves")
    parser.add_argument("--page", default="step_by_step", help='url path of the page, "" = main')
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
        "--only", action="append", default=[], metavar="LABEL",
        help="move only the control with this label (repeat for several)",
    )  # fmt: skip
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="FLAG",
        help="extra `streamlit run` flag, e.g. --server-arg=--runner.postScriptGC=true",
    )  # fmt: skip
    args = parser.parse_args(argv)
    single = args.single is not None
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
        server_args=tuple(args.server_arg),
        url=args.url,
        reconnect=args.reconnect,
    )
    print(result.table())
    return 1 if result.error_count else 0


if __name__ == "__main__":
    sys.exit(main())
