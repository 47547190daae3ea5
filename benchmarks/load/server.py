"""The server under test: `streamlit run` on a free loopback port, and its memory.

Starts `python -m streamlit run <app>` (the repo's streamlit_app.py unless --app) in its own
process group, waits for /_stcore/health, and always kills the whole group at the end. Its
resident memory is the VmRSS of the server process and all its descendants, read from /proc.
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
        todo.extend(children(p))
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


async def sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    """Append the tree RSS of pid to samples every RSS_PERIOD_S until stop is set."""
    while not stop.is_set():
        samples.append(tree_rss_mib(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), RSS_PERIOD_S)
