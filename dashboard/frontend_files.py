"""Streamlit's frontend files, kept in memory, the compressible ones gzip-compressed once.

A browser that never opened the app fetches Streamlit's frontend with its first page: for
lesson 6, 143 files under `/static/`, 5.5 MB. Streamlit reads them from disk and sends them
uncompressed on every request, leaving compression to a proxy in front (its
`starlette_gzip_middleware` says why: compressing on every request costs more than it saves).
On one process that serves them itself, a real browser's first visit to lesson 6 cost the
server 170-255 ms of CPU, its page included; kept and compressed, 70-101 ms, and a third of the
bytes (docs/performance.md, "2026-11-30, morning").

`FrontendFiles` is ASGI middleware (streamlit_app.py's `st.App`). It answers only a GET of a
file of Streamlit's frontend by its exact name (`/static/js/x.js`, as the files are listed
once at the start: no other spelling, no link), asking for no range and carrying no
precondition (`If-...`):
- a kind worth compressing (`.js`, `.css`, `.json`, `.svg`, `.map`), for a client that accepts
  gzip: compressed, with Streamlit's headers less the ETag, Last-Modified and Accept-Ranges of
  the uncompressed file, and `Vary: Accept-Encoding`;
- any other kind (fonts, pictures): Streamlit's answer as it was, headers and all; a file gzip
  would not shrink, the same with `Vary: Accept-Encoding` added. Neither keeps a cookie: the
  answer kept is asked without the client's.

Everything else goes to Streamlit as before (a HEAD, a range, another path; every path when
`server.baseUrlPath` is set); the compressible files get `Vary: Accept-Encoding` there too, so a
cache in front keeps the two forms apart. The query string is not part of a file's name (one
copy a file, however it is asked for). A file is read the first time through Streamlit's own
route (its checks, its headers), then compressed once in a thread, off the event loop, while
the other requests for it wait for that one result. At most the whole frontend is kept: 24 MiB
of files, 8.8 MiB with the compressible ones compressed (0.8 s of CPU to compress them all).
The first visitor to a page after the server starts pays for its files' compression: lesson
6's, 0.14 s."""

from __future__ import annotations

import asyncio
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

STATIC = Path(st.__file__).parent / "static"  # what Streamlit serves at the app's root
COMPRESSIBLE = (".js", ".css", ".json", ".svg", ".map")  # the rest is compressed already
ASKS_PART_OR_CONDITION = (
    b"range", b"if-none-match", b"if-modified-since", b"if-range", b"if-match",
    b"if-unmodified-since",
)  # fmt: skip
# headers of the file on disk, untrue of its compressed form (a different representation)
UNCOMPRESSED_ONLY = (b"content-length", b"etag", b"last-modified", b"accept-ranges")
READ_TIMEOUT_S = 30.0  # the first read through Streamlit, which every request for it awaits


def frontend_names(root: Path = STATIC) -> frozenset[str]:
    """The names (`static/js/x.js`) of Streamlit's frontend files: real files under `static/`,
    reached through no link. Only these are ever kept: at most the frontend, once."""
    names = set()
    for folder, _, files in os.walk(root / "static"):  # never into a linked folder
        for file in files:
            path = Path(folder) / file
            if path.is_file() and not path.is_symlink():
                names.add(path.relative_to(root).as_posix())
    return frozenset(names)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header admits gzip (RFC 9110 12.5.3): named with a q above 0,
    or not named and `*` above 0. A q that does not parse counts as 0."""
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        if not coding:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        weights[coding.lower()] = q
    return weights.get("gzip", weights.get("*", 0.0)) > 0


def header(headers, name: bytes) -> bytes | None:
    """A header's value, its repeated lines joined with commas (RFC 9110 5.3); None: absent."""
    values = [value for key, value in headers if key.lower() == name]
    return b", ".join(values) if values else None


def with_vary(headers) -> list[tuple[bytes, bytes]]:
    """The headers with Accept-Encoding added to their Vary (one Vary line)."""
    vary = header(headers, b"vary")
    if vary and b"accept-encoding" in vary.lower():
        return list(headers)
    kept = [(key, value) for key, value in headers if key.lower() != b"vary"]
    return [*kept, (b"vary", vary + b", Accept-Encoding" if vary else b"Accept-Encoding")]


@dataclass(frozen=True)
class Kept:
    """A file's answer as kept: its headers and its bytes (gzip-compressed, or as they were)."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


async def streamlit_answer(app, scope) -> tuple[int, list, bytes]:
    """What Streamlit answers a plain GET of the path, asked without the client's cookies:
    status, headers, body."""
    plain = dict(scope, headers=[
        (name, value) for name, value in scope["headers"]
        if name.lower() not in (*ASKS_PART_OR_CONDITION, b"accept-encoding", b"cookie")
    ], extensions={
        key: value for key, value in (scope.get("extensions") or {}).items()
        if key != "http.response.pathsend"  # the body itself, not a path to send
    })  # fmt: skip
    answer: dict = {"status": 0, "headers": [], "body": bytearray()}
    asked = asyncio.Event()  # the request is read once; then the client stays, never leaving

    async def receive() -> dict:
        if asked.is_set():
            await asyncio.Future()  # Starlette's disconnect watch waits here until cancelled
        asked.set()
        return {"type": "http.request", "body": b"", "more_body": False}

    async def take(message) -> None:
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], list(message["headers"])
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(plain, receive, take)
    return answer["status"], answer["headers"], bytes(answer["body"])


async def answer_to_keep(app, scope, compress: bool) -> Kept | None:
    """A file's answer to keep, from Streamlit's answer to a plain GET, compressed where asked
    and smaller (None: not a whole 200 answer, or one already encoded: Streamlit answers)."""
    status, headers, body = await asyncio.wait_for(streamlit_answer(app, scope), READ_TIMEOUT_S)
    if status != 200 or header(headers, b"content-encoding") is not None:
        return None
    headers = [(n, v) for n, v in headers if n.lower() != b"set-cookie"]  # one client's, never kept
    if not compress:
        return Kept(tuple(headers), body)
    packed = await asyncio.to_thread(gzip.compress, body, 9, mtime=0)
    if len(packed) >= len(body):  # a few tiny files: as they are, still one of two forms
        return Kept(tuple(with_vary(headers)), body)
    kept = [(n, v) for n, v in headers if n.lower() not in UNCOMPRESSED_ONLY]
    kept += [(b"content-encoding", b"gzip"), (b"content-length", str(len(packed)).encode())]
    return Kept(tuple(with_vary(kept)), packed)


class FrontendFiles:
    """ASGI middleware: Streamlit's frontend files from memory, the compressible ones
    gzip-compressed once (the module's docstring says which requests, and why)."""

    def __init__(self, app) -> None:
        self.app = app
        self.names = frontend_names()
        self.kept: dict[str, asyncio.Task[Kept | None]] = {}  # by name: at most self.names

    async def __call__(self, scope, receive, send) -> None:
        name = scope["path"][1:] if scope["type"] == "http" else ""
        if name not in self.names:
            await self.app(scope, receive, send)
            return
        compress = name.endswith(COMPRESSIBLE)
        accepted = header(scope["headers"], b"accept-encoding") or b""
        asked = {key.lower() for key, _ in scope["headers"]}
        kept = None
        if (
            scope["method"] == "GET"
            and (not compress or accepts_gzip(accepted.decode("latin-1")))
            and asked.isdisjoint(ASKS_PART_OR_CONDITION)
        ):
            kept = await self.keep(name, scope, compress)
        if kept is None:  # Streamlit's answer, marked as one of two forms where there are two
            await self.app(scope, receive, varied(send) if compress else send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": list(kept.headers)})
        await send({"type": "http.response.body", "body": kept.body})

    async def keep(self, name: str, scope, compress: bool) -> Kept | None:
        """The file's answer: made by the first request for it, awaited by the rest (a request
        that leaves does not cancel it); one that failed, or was not kept, is tried again."""
        task = self.kept.get(name)
        if task is None:
            answer = answer_to_keep(self.app, scope, compress)
            task = self.kept[name] = asyncio.ensure_future(answer)
        try:
            kept = await asyncio.shield(task)
        except Exception:
            kept = None
        if kept is None and self.kept.get(name) is task:
            del self.kept[name]
        return kept


def varied(send):
    """`send` with Accept-Encoding added to the answer's Vary."""

    async def send_varied(message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": with_vary(message.get("headers", []))}
        await send(message)

    return send_varied
