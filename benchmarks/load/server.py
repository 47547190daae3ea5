"""The server under test: `streamlit run` on a free loopback port, its CPU share and its memory.

Starts `python -m streamlit run <app>` (the repo's streamlit_app.py unless --app) in its own
process group, waits for /_stcore/health, and always kills the whole group at the end. Its
resident memory is the VmRSS of the server process and all its descendants, read from /proc.

Community Cloud gives an app 0.078 to 2 cores. `CpuShare` holds the server to fewer: `cores`
pins it to the first N cores (sched_setaffinity, inherited by its threads; the simulated class
then runs on the others), and `quota` caps it at a fraction of one core's time with a cgroup CPU
quota (cgroup v2's cpu.max, or v1's cpu.cfs_quota_us), where this machine lets root make one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_APP = REPO / "streamlit_app.py"

RSS_PERIOD_S = 0.5


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def children(pid: int) -> list[int]:
    """The direct child processes of pid, from /proc (empty where /proc is missing)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            kids.extend(int(k) for k in task.read_text().split())
    return kids


def tree(pid: int) -> list[int]:
    """pid and all its descendants, from /proc."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p not in found:
            found.append(p)
            todo.extend(children(p))
    return found


def tree_rss_mib(pid: int) -> float:
    """VmRSS of pid and all its descendants, in MiB (nan where /proc is missing)."""
    total_kib, found = 0, False
    for p in tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
                    found = True
    return total_kib / 1024 if found else float("nan")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by pid and all its descendants, from /proc (nan
    where /proc is missing): wall times swing with the neighbours on a shared machine, this
    does not."""
    ticks, found = 0, False
    for p in tree(pid):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (the 14th and 15th fields)
            found = True
    return ticks / os.sysconf("SC_CLK_TCK") if found else float("nan")


CGROUP_V2 = Path("/sys/fs/cgroup")
CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpu")
QUOTA_PERIOD_US = 100_000


@dataclass(frozen=True)
class CpuShare:
    """The server's CPU: `cores` (the first N, None: all) and `quota` (cores' worth of time)."""

    cores: int | None = None
    quota: float | None = None

    def __post_init__(self) -> None:
        available = len(os.sched_getaffinity(0))
        if self.cores is not None and not 1 <= self.cores <= available:
            raise ValueError(f"--server-cores must be 1..{available} here, got {self.cores}")
        if self.quota is not None and not 0.01 <= self.quota <= available:
            raise ValueError(f"--server-quota must be 0.01..{available} cores, got {self.quota}")

    @property
    def server_cpus(self) -> set[int]:
        return set(sorted(os.sched_getaffinity(0))[: self.cores or None])

    @property
    def client_cpus(self) -> set[int]:
        """The simulated class's cores: the ones the server does not hold (all when none left)."""
        rest = set(os.sched_getaffinity(0)) - self.server_cpus
        return rest or set(os.sched_getaffinity(0))

    def describe(self) -> str:
        cores = "all cores" if self.cores is None else f"{self.cores} core(s)"
        quota = "" if self.quota is None else f", a quota of {self.quota:g} core"
        return cores + quota


def make_cgroup(quota: float) -> Path:
    """A new cgroup whose tasks get `quota` cores' worth of CPU time; its cgroup.procs file.

    Raises RuntimeError with the reason where this machine has no writable CPU controller."""
    name = f"attention-load-{os.getpid()}-{time.monotonic_ns()}"
    limit = round(quota * QUOTA_PERIOD_US)
    try:
        if (CGROUP_V2 / "cgroup.controllers").exists():
            group = CGROUP_V2 / name
            group.mkdir()
            (group / "cpu.max").write_text(f"{limit} {QUOTA_PERIOD_US}")
        else:
            group = CGROUP_V1_CPU / name
            group.mkdir()
            (group / "cpu.cfs_period_us").write_text(str(QUOTA_PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(limit))
    except OSError as err:
        raise RuntimeError(f"no cgroup CPU quota on this machine ({err})") from err
    return group / "cgroup.procs"


class Server:
    """`streamlit run app` in its own process group, with its output in a temporary file."""

    def __init__(
        self, app: Path, port: int, extra: tuple[str, ...] = (), share: CpuShare | None = None
    ) -> None:
        self.app, self.port, self.extra = app, port, extra
        self.share = share or CpuShare()
        self.cgroup_procs: Path | None = None
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
        cpus = self.share.server_cpus if self.share.cores is not None else None
        if self.share.quota is not None:
            self.cgroup_procs = make_cgroup(self.share.quota)
        procs = self.cgroup_procs

        def hold() -> None:  # in the child, before exec: its threads and children inherit both
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
            if procs is not None:
                procs.write_text(str(os.getpid()))

        self.proc = subprocess.Popen(
            cmd,
            preexec_fn=hold if cpus is not None or procs is not None else None,
            # Streamlit reads .streamlit/config.toml from the working folder: the project's own
            # for any app of the repository (benchmarks/empty_app.py too, the floor every page
            # is read against: from benchmarks/ it ran with Streamlit's defaults, a polling file
            # watcher a session and a gc after every run, 70-125 ms a first page against 10).
            cwd=REPO if self.app.resolve().is_relative_to(REPO) else self.app.parent,
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
        if self.cgroup_procs is not None:
            with contextlib.suppress(OSError):
                self.cgroup_procs.parent.rmdir()  # empty once the group's processes are gone


async def sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    """Append the tree RSS of pid to samples every RSS_PERIOD_S until stop is set."""
    while not stop.is_set():
        samples.append(tree_rss_mib(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), RSS_PERIOD_S)
