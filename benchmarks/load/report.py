"""What one run measured (`LoadResult`) and the report printed from it.

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
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

MAX_MESSAGES_KEPT = 5  # first messages kept per error kind


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
    load_messages: list[int] = field(default_factory=list)  # ForwardMsgs of each first page
    frontend_bytes: list[int] = field(default_factory=list)  # a first visit's files, as sent
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
    cpu_loads_s: float = float("nan")  # the server's CPU seconds while the class loaded
    cpu_moves_s: float = float("nan")  # ... and while it moved
    cpu: str = "all cores"  # the server's CPU share (CpuShare.describe)
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
            ("server CPU", self.cpu),
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
                f"p95 {_percentile(load, 0.95):.0f} ms, "
                f"max {max(load, default=float('nan')):.0f} ms",
            ),
            ("payload per rerun", f"median {self.payload_median_kib:.1f} KiB"),
            (
                "server CPU",
                f"{1000 * self.cpu_loads_s / max(len(load), 1):.1f} ms a first page "
                f"({self.cpu_loads_s:.1f} s for {len(load)}), "
                f"{1000 * self.cpu_moves_s / max(self.achieved, 1):.1f} ms a rerun "
                f"({self.cpu_moves_s:.1f} s for {self.achieved})",
            ),
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
