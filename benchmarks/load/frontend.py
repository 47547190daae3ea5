"""A browser's first visit: the files it fetches before and while its first page is drawn.

A student whose browser never opened the app fetches the page's document and Streamlit's
frontend (for lesson 6, 143 files, 5.5 MB uncompressed) from the same one process that runs
the class's scripts. `record` asks a real headless Chromium which paths those are, once per app
and page, on a server of its own (so the servers measured stay cold), in two groups: those
asked before the page's websocket opened, and those after (the chunks of the elements the
page draws). A simulated student (`benchmarks.load.crowd`) then fetches them as the browser
did: the first group (`fetch_all`: the document first, the rest over six keep-alive
connections, a browser's limit per host over HTTP/1.1, accepting gzip), then opens its socket
while it fetches the second. h11 speaks HTTP/1.1 for it.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import h11

REPO = Path(__file__).resolve().parents[2]
CONNECTIONS = 6  # a browser's connections to one host over HTTP/1.1
ACCEPT_ENCODING = b"gzip, deflate, br, zstd"  # Chromium's


@dataclass(frozen=True)
class FirstVisit:
    """The paths a browser that never opened the app fetches for a page, the query kept."""

    before: tuple[str, ...]  # before its websocket opens, the document first
    after: tuple[str, ...]  # after: what the page's elements need, while its script runs


def record(app: Path, pages: list[str], timeout_ms: int = 120_000) -> dict[str, FirstVisit]:
    """The same-origin paths a headless Chromium fetches for each page of `app` until the page
    is drawn and the network idle; a server of its own, started and stopped here."""
    sys.path.insert(0, str(REPO / "tests"))
    from chromium import CHROMIUM_FLAGS, FINISHED, StreamlitServer, chromium_path
    from playwright.sync_api import sync_playwright

    server = StreamlitServer(app=app)
    server.start()
    origin = urlsplit(server.url).netloc
    found: dict[str, FirstVisit] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_FLAGS
            )
            for page_name in pages:
                context = browser.new_context()  # a browser that never opened the app
                page = context.new_page()
                asked: list[str] = []
                opened: list[int] = []  # how many paths were asked when the socket opened

                def note(request, asked=asked) -> None:
                    parts = urlsplit(request.url)
                    if parts.scheme == "http" and parts.netloc == origin:
                        asked.append(parts.path + (f"?{parts.query}" if parts.query else ""))

                page.on("request", note)
                page.on("websocket", lambda _, a=asked, o=opened: o.append(len(a)))
                page.goto(f"{server.url}/{page_name}", timeout=timeout_ms)
                page.wait_for_selector(FINISHED, timeout=timeout_ms)
                page.wait_for_load_state("networkidle", timeout=timeout_ms)
                page.wait_for_timeout(1000)
                page.wait_for_load_state("networkidle", timeout=timeout_ms)
                cut = opened[0] if opened else len(asked)
                before, after = (files_of(part) for part in (asked[:cut], asked[cut:]))
                found[page_name] = FirstVisit(before, tuple(p for p in after if p not in before))
                context.close()
            browser.close()
    finally:
        server.kill()
    return found


def files_of(paths: list[str]) -> tuple[str, ...]:
    """The paths once each, in order, less the socket and the page's own media (its icon, a PNG
    chart: they exist only once its run made them)."""
    kept = (p for p in paths if not p.startswith("/media/") and not p.endswith("_stcore/stream"))
    return tuple(dict.fromkeys(kept))


async def get_each(host: str, port: int, paths: asyncio.Queue[str], timeout: float) -> int:
    """GET the queued paths one after another over one keep-alive connection: bytes read."""
    reader, writer = await asyncio.open_connection(host, port)
    conn, read = h11.Connection(h11.CLIENT), 0
    try:
        while not paths.empty():
            path = paths.get_nowait()
            headers = [(b"host", f"{host}:{port}".encode()), (b"accept-encoding", ACCEPT_ENCODING)]
            writer.write(conn.send(h11.Request(method="GET", target=path, headers=headers)))
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await asyncio.wait_for(reader.read(65536), timeout))
                    continue
                # a 404 is a browser's too (the frontend asks for its health under the page)
                if isinstance(event, h11.Response) and event.status_code >= 500:
                    raise OSError(f"GET {path}: {event.status_code}")
                if isinstance(event, h11.Data):
                    read += len(event.data)
                if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
            conn.start_next_cycle()
    finally:
        writer.close()
    return read


async def fetch_all(base: str, paths: tuple[str, ...], timeout: float, document: bool) -> int:
    """Fetch the paths over six connections, the first alone before the rest when it is the
    page's `document`; the bytes read (compressed where the server compressed them)."""
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    first: asyncio.Queue[str] = asyncio.Queue()
    rest: asyncio.Queue[str] = asyncio.Queue()
    for index, path in enumerate(paths):
        (first if index == 0 and document else rest).put_nowait(path)
    read = await get_each(host, port, first, timeout) if document else 0
    lanes = min(CONNECTIONS, rest.qsize())
    reads = await asyncio.gather(*(get_each(host, port, rest, timeout) for _ in range(lanes)))
    return read + sum(reads)
