"""Sticky sessions through `deploy/serve --workers 2` (HAProxy) in a real browser.

Two browser contexts land on different workers; a context's page, websocket and download all
reach its worker (the X-Worker header HAProxy adds, seen on the document, on the websocket
handshake through the DevTools protocol, and on the downloaded file's response); moving a slider
keeps the same websocket session; and when its worker is killed the page reconnects by itself,
keeps its settings (they are in the URL) and works, while the other context's session is
untouched.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from chromium import deploy_serve, open_section, page_report, wait_until_drawn

pytestmark = pytest.mark.browser

CHARTS = 11  # the step-by-step lesson's charts at its defaults
METRIC_T = "() => document.querySelector('[data-testid=\"stMetricValue\"]')?.innerText.trim()"


@dataclass
class Balancer:
    url: str
    proc: subprocess.Popen
    log: Path

    def worker_pid(self, name: str) -> int:
        """The pid deploy/serve last reported for a worker (it logs each start)."""
        pids = re.findall(rf"worker {name} \(pid (\d+)\) on", self.log.read_text())
        assert pids, self.log.read_text()
        return int(pids[-1])


@pytest.fixture(scope="module")
def balancer(tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with deploy_serve(log, workers=2) as (url, proc):
        yield Balancer(url, proc, log)


@dataclass
class Tab:
    """One browser context on the lesson, with the workers its requests and sockets reached."""

    context: object
    page: object
    document_worker: str = ""
    socket_workers: list[str] = field(default_factory=list)  # one per websocket handshake
    response_workers: set[str] = field(default_factory=set)

    @property
    def cookie(self) -> str:
        cookies = {c["name"]: c["value"] for c in self.context.cookies()}
        return cookies.get("SERVERID", "")


def open_tab(browser, url: str, path: str = "step_by_step") -> Tab:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    tab = Tab(context, page)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on(
        "Network.webSocketHandshakeResponseReceived",
        lambda event: tab.socket_workers.append(
            {k.lower(): v for k, v in event["response"]["headers"].items()}.get("x-worker", "?")
        ),
    )
    page.on(
        "response",
        lambda response: tab.response_workers.add(response.headers.get("x-worker", "?")),
    )
    response = page.goto(f"{url}/{path}")
    tab.document_worker = response.headers.get("x-worker", "")
    wait_until_drawn(page, min_charts=CHARTS)
    return tab


def move_length(page, presses: int, expected: int) -> None:
    """Move the 'Sequence length T' slider with the keyboard; wait for the rerun to show it."""
    slider = page.get_by_role("slider", name="Sequence length T")
    slider.focus()
    for _ in range(presses):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => new URLSearchParams(location.search).get('T') === '{expected}'", timeout=30_000
    )
    page.wait_for_function(f"() => ({METRIC_T})() === '{expected}'", timeout=30_000)
    wait_until_drawn(page, min_charts=CHARTS)


def assert_clean(page) -> None:
    report = page_report(page)
    assert report["exceptions"] == 0 and report["errors"] == [], report
    assert report["drawn"] == report["embeds"] == CHARTS, report


def test_browser_serve_contexts_split_downloads_and_reruns_stay_on_their_worker(browser, balancer):
    first = open_tab(browser, balancer.url)
    second = open_tab(browser, balancer.url)
    try:
        # Least connections: the first browser's websocket holds its worker, so the second
        # browser's first request goes to the other one, and each keeps its own from then on.
        assert {first.document_worker, second.document_worker} == {"w1", "w2"}
        for tab in (first, second):
            assert tab.cookie == tab.document_worker
            assert tab.socket_workers == [tab.document_worker]
            assert tab.response_workers == {tab.document_worker}
            assert_clean(tab.page)

        # The download is kept in the memory of the worker that ran the script: it must come
        # from that worker, and be the trace of what this browser sees.
        open_section(first.page, "Take it home")
        with first.page.expect_download(timeout=30_000) as info:
            first.page.get_by_role("button", name="The whole trace (JSON)").click()
        download = info.value
        assert download.suggested_filename == "step_by_step_trace.json"  # named after its lesson
        trace = json.loads(Path(download.path()).read_text())
        assert len(trace["tokens"]) == int(first.page.evaluate(METRIC_T))
        assert set(trace["stages"]) >= {"scores", "weights", "output"}
        assert first.response_workers == {first.document_worker}

        # Reruns keep the session: same websocket, same worker, the new value shown.
        move_length(first.page, 3, expected=9)
        assert_clean(first.page)
        assert first.socket_workers == [first.document_worker]
        assert first.response_workers == {first.document_worker}
    finally:
        first.context.close()
        second.context.close()


def test_browser_serve_killed_worker_page_reconnects_and_works(browser, balancer):
    victim = open_tab(browser, balancer.url, "step_by_step?T=7")
    other = open_tab(browser, balancer.url)
    try:
        assert victim.document_worker != other.document_worker
        move_length(victim.page, 2, expected=9)
        dead = victim.document_worker
        os.kill(balancer.worker_pid(dead), signal.SIGKILL)

        # Streamlit's frontend reconnects by itself; HAProxy sends the dead worker's cookie to
        # a live worker (or to the restarted one), and the page reruns with its settings.
        killed = time.monotonic()
        while len(victim.socket_workers) < 2:
            assert time.monotonic() < killed + 90, (
                f"no reconnection in 90 s: sockets {victim.socket_workers}\n"
                + balancer.log.read_text()[-3000:]
            )
            victim.page.wait_for_timeout(250)
        victim.page.wait_for_function(f"() => ({METRIC_T})() === '9'", timeout=30_000)
        wait_until_drawn(victim.page, min_charts=CHARTS)
        assert_clean(victim.page)
        assert "T=9" in victim.page.url
        move_length(victim.page, 1, expected=10)  # and it works on its new worker
        assert_clean(victim.page)

        # deploy/serve restarted the dead worker; HAProxy took it out and put it back.
        while not re.search(rf"workers/{dead} is UP", balancer.log.read_text()):
            assert time.monotonic() < killed + 90, (
                f"{dead} not back in 90 s\n" + balancer.log.read_text()[-3000:]
            )
            time.sleep(0.5)
        log = balancer.log.read_text()
        assert re.search(rf"workers/{dead} is (going )?DOWN", log), log[-3000:]
        assert len(re.findall(rf"worker {dead} \(pid \d+\) on", log)) == 2, log[-3000:]

        # The other browser saw nothing: same socket, and it still reruns.
        assert other.socket_workers == [other.document_worker]
        move_length(other.page, 1, expected=7)
        assert_clean(other.page)
        assert other.socket_workers == [other.document_worker]
    finally:
        victim.context.close()
        other.context.close()
