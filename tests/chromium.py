"""Shared helpers for the browser tests: a `streamlit run` server and headless Chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
FINISHED = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def chromium_path() -> str:
    """Debian's Chromium; skip (or, under CI=true, fail) when it is missing."""
    path = (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if path:
        return path
    reason = "Chromium not found: apt-get install -y chromium (or set CHROMIUM=/path/to/it)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + "; CI must run the browser tests")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """`streamlit run streamlit_app.py` (or app) on a loopback port with its own environment
    (added to this process's), its output in a log file; `kill` stops it as a host does
    (SIGKILL: no shutdown runs) or politely, and `start` starts it again on the same port (a
    browser's cookies belong to host:port)."""

    def __init__(self, port: int | None = None, env: dict[str, str] | None = None,
                 extra: tuple[str, ...] = (), app: Path = ROOT / "streamlit_app.py",
                 log: Path | None = None) -> None:  # fmt: skip
        self.port, self.env, self.extra, self.app = port or free_port(), env or {}, extra, app
        self.log = log or Path(tempfile.mkstemp(prefix="streamlit-", suffix=".log")[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            sys.executable, "-m", "streamlit", "run", str(self.app),
            "--server.headless", "true", "--server.port", str(self.port),
            "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", *self.extra,
        ]  # fmt: skip
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, env={**os.environ, **self.env},
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"streamlit did not start:\n{said}")
            time.sleep(0.3)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """The whole process group, at once."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, sig)
        self.process.wait(timeout=20)


@contextmanager
def streamlit_server(*extra: str, app: Path = ROOT / "streamlit_app.py", port: int | None = None):
    """`streamlit run streamlit_app.py` (or app) on a loopback port (a free one unless given);
    yields the base URL."""
    server = StreamlitServer(port, extra=extra, app=app)
    server.start()
    try:
        yield server.url
    finally:
        server.kill(signal.SIGTERM)


def wait_until_drawn(page, min_charts: int = 0, timeout_ms: int = 60_000) -> None:
    """Wait until the script finished (and stayed finished for half a second) with at least
    min_charts Vega embeds, every one holding a drawn canvas or svg."""
    page.wait_for_selector("h1", timeout=timeout_ms)
    page.wait_for_function(
        """([selector, minCharts]) => {
            const embeds = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'));
            const ready = document.querySelector(selector) !== null
                && embeds.length >= minCharts
                && embeds.every(e => e.querySelector('canvas, svg'));
            if (!ready) { window.__drawnSince = undefined; return false; }
            window.__drawnSince = window.__drawnSince || performance.now();
            return performance.now() - window.__drawnSince > 500;
        }""",
        arg=[FINISHED, min_charts],
        timeout=timeout_ms,
        polling=100,
    )


def download(page, button, timeout_ms: int = 60_000, again_after_ms: int = 20_000):
    """The download a click on `button` gives, pressed as a person presses it: once the page's
    script is idle and the button, scrolled to, holds still (HELD_STILL). Under the whole
    suite's load a first press after the restart gave nothing, twice at one place (CI and here,
    2026-11-29: the report's CSV, just drawn in an expander still growing). If nothing has come
    `again_after_ms` after a press, a second press, as a person presses again, with a warning
    in the suite's summary. A download that came and failed (the file gone: a 404 gives
    Chromium a failed download) fails at once, never pressed again; so do a press that could
    not be made, and two presses with nothing."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if timeout_ms <= again_after_ms:
        raise ValueError(f"timeout_ms {timeout_ms} must exceed again_after_ms {again_after_ms}")
    ready_to_press(page, button, timeout_ms)
    for press, wait_ms in ((1, again_after_ms), (2, timeout_ms - again_after_ms)):
        pressed = False
        try:
            with page.expect_download(timeout=wait_ms) as arrived:
                button.click(timeout=wait_ms)
                pressed = True
        except PlaywrightTimeout as timeout:
            seen = page.evaluate(DOWNLOAD_SEEN)
            if not pressed or press == 2:  # what the page showed instead, for the log
                SHOTS.mkdir(parents=True, exist_ok=True)
                shot = SHOTS / "no_download.png"
                page.screenshot(path=str(shot), full_page=True)
                what = "could not be pressed" if not pressed else "gave nothing, twice"
                raise AssertionError(f"{what}: {seen} (screenshot: {shot})") from timeout
            warnings.warn(f"no download {wait_ms} ms after a press ({seen}); pressed again",
                          stacklevel=2)  # fmt: skip
            continue
        failure = arrived.value.failure()
        assert failure is None, f"the download came and failed ({failure}): the file was gone"
        return arrived.value
    raise AssertionError("unreachable")  # the second press returns or raises


def ready_to_press(page, button, timeout_ms: int) -> None:
    """Wait, as a person does before a press, until the page's script is idle and the button,
    scrolled to, holds still (a section that just opened grows for ~0.4 s: not mid-way)."""
    button.wait_for(timeout=timeout_ms)
    page.wait_for_selector(FINISHED, timeout=timeout_ms)
    button.scroll_into_view_if_needed(timeout=timeout_ms)
    button.evaluate(HELD_STILL, 8)


def press(page, button, shown, timeout_ms: int = 60_000, again_after_ms: int = 20_000) -> None:
    """Press `button` as a person does, once the page's script is idle and the button, scrolled
    to, holds still (HELD_STILL), and wait for the locator `shown`, what the press brings. If
    it has not come `again_after_ms` after the press, a second press, as a person presses
    again, with a warning in the suite's summary; nothing after that fails, with a screenshot.
    A concept check's *Keep my answers* pressed after its section was closed and opened twice
    was lost under the whole suite's load in three suites of six here (2026-11-30: the form
    still shown 30 s later, its button enabled, nothing counted), never alone: the same
    pattern as a download's first press (`download`)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if timeout_ms <= again_after_ms:
        raise ValueError(f"timeout_ms {timeout_ms} must exceed again_after_ms {again_after_ms}")
    for attempt, wait_ms in ((1, again_after_ms), (2, timeout_ms - again_after_ms)):
        ready_to_press(page, button, wait_ms)
        button.click(timeout=wait_ms)
        try:
            shown.first.wait_for(timeout=wait_ms)
            return
        except PlaywrightTimeout as timeout:
            if attempt == 2:
                SHOTS.mkdir(parents=True, exist_ok=True)
                shot = SHOTS / "press_lost.png"
                page.screenshot(path=str(shot), full_page=True)
                raise AssertionError(
                    f"pressed twice, nothing came (screenshot: {shot})"
                ) from timeout
            warnings.warn(f"nothing {wait_ms} ms after a press; pressed again", stacklevel=2)
    raise AssertionError("unreachable")  # the second attempt returns or raises


# An element held still: its box unchanged over `frames` animation frames in a row (at most
# 120 frames). A download button under a table just drawn moved 250 px in the 0.3 s after it
# appeared, the expander around it growing to its new height (2026-11-29); a press then can
# land where the button was a moment before.
HELD_STILL = """async (el, frames) => {
    const frame = () => new Promise(done => requestAnimationFrame(() => done()));
    const box = () => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.width,
                                                                        b.height].join(); };
    let last = box(), still = 0;
    for (let n = 0; n < 120 && still < frames; n++) {
        await frame();
        const now = box();
        still = now === last ? still + 1 : 0;
        last = now;
    }
    return still >= frames;
}"""


# What a page shows when a press gave no download: the script's state, the buttons disabled
DOWNLOAD_SEEN = """() => ({
    script: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState,
    buttons: document.querySelectorAll('[data-testid="stDownloadButton"] button').length,
    disabled: [...document.querySelectorAll('[data-testid="stDownloadButton"] button')]
        .filter(b => b.disabled).map(b => b.innerText),
})"""


def open_section(page, title: str) -> None:
    """Open a lesson's closed section (Take it home, Check yourself) as a learner does, by
    clicking its label; what is in it is drawn by the rerun that follows (wait for that)."""
    label = page.locator('[data-testid="stExpander"] summary', has_text=title)
    label.scroll_into_view_if_needed()
    label.click()


def page_report(page) -> dict:
    """What a user would see wrong: exceptions, error boxes, undrawn charts."""
    return page.evaluate(
        """() => ({
            embeds: document.querySelectorAll('[data-testid="stVegaLiteChart"]').length,
            drawn: Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
                .filter(e => e.querySelector('canvas, svg')).length,
            // a chart's accessible name: Vega writes its description as the aria-label
            unnamed: Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
                .map(e => e.getAttribute('aria-label') || '')
                .filter(n => !n || n === 'Vega visualization'),
            exceptions: document.querySelectorAll('[data-testid="stException"]').length,
            errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
                .map(e => e.innerText),
            scrollWidth: document.querySelector('[data-testid="stMain"]').scrollWidth,
            clientWidth: document.querySelector('[data-testid="stMain"]').clientWidth,
        })"""
    )


def full_screenshot(page, path: Path, width: int = 1280) -> None:
    """The whole lesson, for a person to look at (tests/screenshots/): Streamlit scrolls inside
    its main container, so grow the viewport. Not under CI=true, which keeps no files (a 10,000
    px page drawn and encoded is seconds a page): nothing is asserted of it."""
    if os.environ.get("CI") == "true":
        return
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(max(height, 900), 16_000)})
    page.wait_for_timeout(600)  # let Vega re-lay out to the new size
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": width, "height": 900})


@contextmanager
def deploy_serve(log: Path, workers: int = 2, env: dict[str, str] | None = None):
    """`deploy/serve --workers N` (HAProxy in front of N workers) on a free loopback port, its
    output in `log`; yields the balancer's URL and the launcher's process once it says ready and
    answers its health check (skipped, or failed under
    CI=true, without HAProxy). Stopped with its whole process group."""
    if shutil.which("haproxy") is None:
        reason = "haproxy not installed: apt-get install -y haproxy"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must run the balancer tests")
        pytest.skip(reason)
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "deploy" / "serve"), "--workers", str(workers),
             "--port", str(port), "--address", "127.0.0.1"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while "ready:" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as response:
            assert response.read() == b"ok"
        yield url, proc
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
