"""deploy/serve: the HAProxy config it renders, its message when HAProxy is missing, and a short
class through `deploy/serve --workers 2` (about 20 s: two workers start, ten students move for
eight seconds, then SIGTERM must leave no process behind). LOAD_SMOKE=0 skips the class."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVE = REPO / "deploy" / "serve"
sys.path.insert(0, str(REPO))
from benchmarks.load import children, free_port, run_load  # noqa: E402


def load_serve():
    """deploy/serve as a module (it has no .py suffix: it is a command)."""
    loader = importlib.machinery.SourceFileLoader("deploy_serve", str(SERVE))
    spec = importlib.util.spec_from_loader("deploy_serve", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["deploy_serve"] = module  # its dataclasses look their module up there
    loader.exec_module(module)
    return module


def backend_lines(config: str) -> list[str]:
    """The directive lines of the `backend workers` section, comments dropped."""
    section = config.split("backend workers", 1)[1]
    lines = [line.split("#", 1)[0].strip() for line in section.splitlines()]
    return [line for line in lines if line]


def test_serve_is_an_executable_script() -> None:
    assert os.access(SERVE, os.X_OK)
    assert SERVE.read_text().startswith("#!/usr/bin/env python3\n")


def test_serve_config_renders_stickiness_health_and_websocket_timeouts() -> None:
    serve = load_serve()
    config = serve.render_config([41001, 41002, 41003], 8080, bind="127.0.0.1")
    assert "${" not in config and "$" not in config.replace("$$", "")
    assert "bind 127.0.0.1:8080" in config
    lines = backend_lines(config)
    assert "balance leastconn" in lines
    assert "cookie SERVERID insert indirect nocache httponly" in lines
    assert "option httpchk GET /_stcore/health" in lines
    assert "http-check expect string ok" in lines
    assert "http-response set-header X-Worker %s" in lines
    assert [line for line in lines if line.startswith("server ")] == [
        "server w1 127.0.0.1:41001 check cookie w1",
        "server w2 127.0.0.1:41002 check cookie w2",
        "server w3 127.0.0.1:41003 check cookie w3",
    ]
    assert not any(word in line for line in lines for word in ("source", "hdr(x-forwarded"))
    assert "timeout tunnel 1h" in config  # the websocket on /_stcore/stream may idle an hour
    assert "option redispatch" in config  # a dead worker's cookie falls back to a live one
    assert "on-marked-down shutdown-sessions" in config
    assert "stats socket /tmp/deploy-serve-haproxy.sock mode 600 level admin" in config


def test_serve_config_rejects_no_workers() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        load_serve().render_config([], 8080)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy not installed")
def test_serve_config_is_valid_for_haproxy(tmp_path: Path) -> None:
    path = tmp_path / "haproxy.cfg"
    path.write_text(load_serve().render_config([41001, 41002], 8080))
    check = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_serve_defaults_to_one_worker_per_core() -> None:
    args = load_serve().parse_args([])
    assert args.workers == (os.cpu_count() or 1)
    assert args.port == 8501


def test_serve_print_config_names_every_worker() -> None:
    out = subprocess.run(
        [sys.executable, str(SERVE), "--workers", "3", "--port", "9999", "--print-config"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out.count("check cookie w") == 3 and "bind 0.0.0.0:9999" in out


def test_serve_without_haproxy_says_which_package_to_install() -> None:
    done = subprocess.run(
        [sys.executable, str(SERVE), "--workers", "1", "--port", str(free_port())],
        capture_output=True, text=True, timeout=30, env={**os.environ, "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 2
    assert "apt-get install haproxy" in done.stderr
    assert "Traceback" not in done.stderr
    assert "worker" not in done.stdout  # it stopped before starting anything


def test_serve_says_ready_only_once_the_balancer_accepts_connections() -> None:
    """CI once saw "ready:" and then "connection refused": HAProxy binds its port a moment
    after it starts. `_wait_listening` must not return before the port accepts, and must say
    so when HAProxy dies instead."""
    serve = load_serve()
    port = free_port()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    server = socket.socket()
    try:
        timer = threading.Timer(1.0, lambda: (server.bind(("127.0.0.1", port)), server.listen()))
        start = time.monotonic()
        timer.start()
        serve._wait_listening(sleeper, "127.0.0.1", port, timeout=10.0)
        assert time.monotonic() - start >= 0.9
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            pass
    finally:
        timer.cancel()
        server.close()
        sleeper.kill()
        sleeper.wait()
    with pytest.raises(TimeoutError, match="HAProxy exited with"):
        serve._wait_listening(sleeper, "127.0.0.1", free_port(), timeout=5.0)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(TimeoutError, match="not listening"):
            serve._wait_listening(alive, "127.0.0.1", free_port(), timeout=0.5)
    finally:
        alive.kill()
        alive.wait()


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for kid in children(todo.pop()):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_ready(url: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"deploy/serve exited with {proc.returncode}"
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"{url} not healthy within {timeout:g} s")


@pytest.mark.skipif(os.environ.get("LOAD_SMOKE") == "0", reason="LOAD_SMOKE=0: slow smoke off")
@pytest.mark.skipif(
    shutil.which("haproxy") is None and os.environ.get("CI") != "true",
    reason="haproxy not installed (apt-get install haproxy); CI must run this",
)
def test_serve_two_workers_share_a_class_and_stop_cleanly() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, str(SERVE), "--workers", "2", "--port", str(port),
         "--address", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_ready(url, proc)
        family = _descendants(proc.pid)
        assert len(family) >= 3  # HAProxy and two workers
        result = run_load(url=url, students=10, duration=8.0, interval=2.0, seed=1, settle=0.0)
        report = "\n" + result.table()
        assert result.error_count == 0, report
        assert result.achieved >= 10 and result.achieved == result.sent, report
        assert set(result.workers) == {"w1", "w2"}, report  # both workers got students
        assert sum(result.workers.values()) == 10, report
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        time.sleep(0.5)
        left = sorted(pid for pid in family if _alive(pid))
        assert not left, f"processes left after SIGTERM: {left}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
