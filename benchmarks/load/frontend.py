"""A browser's first visit: the files it fetches before and while its first page is drawn.

A student whose browser never opened the app fetches the page's document and Streamlit's
frontend (for lesson 6, 143 files, 5.5 MB uncompressed) from the same one process that runs
the class's scripts. `record` asks a real headless Chromium which paths those are, once per app
and page, on a server of its own (so the servers measured stay cold); `fetch_all` then fetches
them as a browser does, the document first and the rest over six keep-alive connections (a
browser's limit per host over HTTP/1.1), accepting gzip. h11 (uvicorn's HTTP parser) speaks
the protocol.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from urllib.parse import urlsplit

import h11

REPO = Path(__file__).resolve().parents[2]
CONNECTIONS = 6  # a browser's connections to one host over HTTP/1.1
ACCEPT_ENCODING = b"gzip, deflate, br, zstd"  # Chromium's


def record(app: Path, pages: list[str], timeout_ms: int = 120_000) -> dict[str, tuple[str, ...]]:
    """The same-origin paths (the query kept) a headless Chromium fetches for each page of
    `app` until the page is drawn and the network idle, the document first; a server of its
    own, started and stopped here."""
    sys.path.insert(0, str(REPO / "tests"))
    from chromium import CHROMIUM_FLAGS, FINISHED, StreamlitServer, chromium_path
    from playwright.sync_api import sync_playwright

    server = StreamlitServer(app=app)
    server.start()
    origin = urlsplit(server.url).netloc
    found: dict[str, tuple[str, ...]] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_FLAGS
            )
            for page_name in pages:
                context = browser.new_context()  # a browser that never opened the app
                page = context.new_page()
                asked: list[str] = []

                def note(request, asked=asked) -> None:
                    parts = urlsplit(request.url)
                    if parts.scheme == "http" and parts.netloc == origin:
                        asked.append(parts.path + (f"?{parts.query}" if parts.query else ""))

                page.on("request", note)
                page.goto(f"{server.url}/{page_name}", timeout=timeout_ms)
                page.wait_for_selector(FINISHED, timeout=timeout_ms)
                page.wait_for_load_state("networkidle", timeout=timeout_ms)
                page.wait_for_timeout(1000)
                page.wait_for_load_state("networkidle", timeout=timeout_ms)
                # a page's own media (its icon, a PNG chart) exist only once its run made them
                files = [p for p in asked if not p.startswith("/media/") and "/stream" not in p]
                found[page_name] = tuple(dict.fromkeys(files))
                context.close()
            browser.close()
    finally:
        server.kill()
    return found


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


async def fetch_all(base: str, paths: tuple[str, ...], timeout: float) -> int:
    """A browser's first visit: the document, then the rest over six connections; the bytes
    read (compressed where the server compressed them)."""
    parts = urlsplit(base)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    first: asyncio.Queue[str] = asyncio.Queue()
    rest: asyncio.Queue[str] = asyncio.Queue()
    for index, path in enumerate(paths):
        (first if index == 0 else rest).put_nowait(path)
    read = await get_each(host, port, first, timeout)
    lanes = min(CONNECTIONS, rest.qsize())
    reads = await asyncio.gather(*(get_each(host, port, rest, timeout) for _ in range(lanes)))
    return read + sum(reads)
