"""Streamlit's frontend files kept in memory, the compressible ones gzip-compressed once
(`dashboard.frontend_files.FrontendFiles`): the same bytes as Streamlit's files, its headers
(less those of the uncompressed file on a compressed one), read once however many ask at once
and however the query reads; everything else is Streamlit's own answer. In-process against
Streamlit's real static handler over its real files, then through a real server of the app."""

from __future__ import annotations

import asyncio
import gzip
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from streamlit.web.server.starlette.starlette_static_routes import (
    create_streamlit_static_handler,
)

from dashboard.frontend_files import STATIC, FrontendFiles, accepts_gzip, frontend_names

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import StreamlitServer  # noqa: E402

SCRIPT = min((STATIC / "static" / "js").glob("*.js"), key=lambda p: -p.stat().st_size)
SCRIPT_PATH = "/" + SCRIPT.relative_to(STATIC).as_posix()
FONT = sorted((STATIC / "static").rglob("*.woff2"))[0]
FONT_PATH = "/" + FONT.relative_to(STATIC).as_posix()


@pytest.mark.parametrize(
    ("header", "gzip_ok"),
    [
        ("gzip, deflate, br, zstd", True),
        ("GZIP;Q=0.5", True),
        ("*", True),
        ("*;q=0, gzip", True),
        ("", False),
        ("identity", False),
        ("gzip;q=0", False),
        ("gzip; q=0.000", False),
        ("br, *;q=0", False),
        ("gzip;q=0, *", False),
        ("gzip;q=high", False),
    ],
)
def test_gzip_is_sent_only_where_the_client_admits_it(header, gzip_ok):
    assert accepts_gzip(header) is gzip_ok


SPELLINGS = [
    SCRIPT_PATH.replace("/static/", "/static//"),
    SCRIPT_PATH.replace("/js/", "/js/../js/"),
    SCRIPT_PATH.replace("/js/", "/./js/"),
    SCRIPT_PATH.upper(),
    SCRIPT_PATH + "/",
    SCRIPT_PATH.replace("/static/", "/app/static/"),
]


def test_the_frontend_is_listed_once_by_its_files_names():
    names = frontend_names()
    assert SCRIPT_PATH[1:] in names and FONT_PATH[1:] in names
    assert len(names) == sum(1 for p in (STATIC / "static").rglob("*") if p.is_file())
    assert all(name.startswith("static/") for name in names)


def test_a_link_in_the_frontend_is_never_listed(tmp_path):
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "static" / "js" / "a.js").write_text("let a = 1;")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.js").write_text("let b = 2;")
    (tmp_path / "static" / "js" / "b.js").symlink_to(tmp_path / "elsewhere" / "b.js")
    (tmp_path / "static" / "more").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert frontend_names(tmp_path) == {"static/js/a.js"}


@pytest.mark.parametrize("path", SPELLINGS)
def test_another_spelling_of_a_files_name_is_never_kept(path):
    inner, app, answers = in_turn(path, 2)
    assert app.kept == {} and inner.calls == {path: 2}  # Streamlit's own answer, each time
    assert all("content-encoding" not in headers for _, headers, _ in answers)


class Counted:
    """Streamlit's static handler, counting the requests that reach it, by path, and noting
    the cookies they bring."""

    def __init__(self) -> None:
        self.handler = create_streamlit_static_handler(str(STATIC), None)
        self.calls: dict[str, int] = {}
        self.cookies: list[bytes | None] = []  # the Cookie header of each request, in turn

    async def __call__(self, scope, receive, send) -> None:
        self.calls[scope["path"]] = self.calls.get(scope["path"], 0) + 1
        self.cookies.append(dict(scope["headers"]).get(b"cookie"))
        await self.handler(scope, receive, send)


async def get(app, path: str, method: str = "GET", **headers: str | list[str]):
    """One request through the ASGI app, as uvicorn makes it (ASGI 2.3: Starlette's file answer
    then watches for the client leaving): (status, headers by lower-case name, body). A header
    given as a list is sent as that many lines."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": method, "scheme": "http", "path": raw_path, "raw_path": raw_path.encode(),
        "query_string": query.encode(), "root_path": "", "server": ("127.0.0.1", 8501),
        "client": ("127.0.0.1", 5000),
        "headers": [
            (k.replace("_", "-").lower().encode(), line.encode())
            for k, v in headers.items() for line in ([v] if isinstance(v, str) else v)
        ],
    }  # fmt: skip
    answer: dict = {"body": b""}
    asked = False

    async def receive():
        nonlocal asked
        if asked:
            await asyncio.Future()
        asked = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


def in_turn(path: str, times: int):
    """A fresh middleware over Streamlit's handler asked for `path` `times` times in turn, with
    gzip: (the handler, the middleware, the answers)."""

    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        answers = [await get(app, path, accept_encoding="gzip") for _ in range(times)]
        return inner, app, answers

    return asyncio.run(scenario())


def test_a_class_asking_at_once_gets_one_compression_of_streamlits_file():
    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        answers = await asyncio.gather(
            *(get(app, f"{SCRIPT_PATH}?v={i % 3}", accept_encoding="gzip") for i in range(20))
        )
        return inner, app, answers

    inner, app, answers = asyncio.run(scenario())
    assert inner.calls == {SCRIPT_PATH: 1}  # one read through Streamlit, for all twenty
    assert list(app.kept) == [SCRIPT_PATH[1:]]  # one copy, whatever the query
    on_disk = SCRIPT.read_bytes()
    for status, headers, body in answers:
        assert status == 200 and headers["content-encoding"] == "gzip"
        assert gzip.decompress(body) == on_disk and len(body) < len(on_disk) / 2
        assert int(headers["content-length"]) == len(body)
        assert headers["vary"] == "Accept-Encoding"
        assert "immutable" in headers["cache-control"]  # Streamlit's headers, kept
        assert "javascript" in headers["content-type"]
        # those of the file on disk are untrue of its compressed form
        assert not {"etag", "last-modified", "accept-ranges"} & headers.keys()


def test_a_request_that_leaves_does_not_cancel_the_read_the_others_wait_for():
    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        first = asyncio.create_task(get(app, SCRIPT_PATH, accept_encoding="gzip"))
        await asyncio.sleep(0.01)  # it has started the one read (which takes longer)
        assert SCRIPT_PATH[1:] in app.kept and not app.kept[SCRIPT_PATH[1:]].done()
        first.cancel()
        later = await get(app, SCRIPT_PATH, accept_encoding="gzip")
        return inner, first, later

    inner, first, later = asyncio.run(scenario())
    assert first.cancelled() and inner.calls == {SCRIPT_PATH: 1}
    assert later[0] == 200 and gzip.decompress(later[2]) == SCRIPT.read_bytes()


def test_what_it_does_not_keep_is_streamlits_answer_marked_as_one_of_two_forms():
    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        plain = await get(app, SCRIPT_PATH)
        refused = await get(app, SCRIPT_PATH, accept_encoding="gzip;q=0, br")
        part = await get(app, SCRIPT_PATH, accept_encoding="gzip", range="bytes=0-9")
        same = await get(app, SCRIPT_PATH, accept_encoding="gzip", if_none_match=plain[1]["etag"])
        head = await get(app, SCRIPT_PATH, "HEAD", accept_encoding="gzip")
        lines = await get(app, SCRIPT_PATH, accept_encoding=["gzip;q=0", "*"])  # one header
        missing = await get(app, "/static/js/no-such-file.js", accept_encoding="gzip")
        odd = await get(app, SCRIPT_PATH.replace("/js/", "/js/../js/"), accept_encoding="gzip")
        return inner, app, plain, refused, part, same, head, lines, missing, odd

    inner, app, plain, refused, part, same, head, lines, missing, odd = asyncio.run(scenario())
    on_disk = SCRIPT.read_bytes()
    for status, headers, body in (plain, refused, lines):
        assert status == 200 and "content-encoding" not in headers and body == on_disk
        assert headers["vary"] == "Accept-Encoding" and "etag" in headers
    assert part[0] == 206 and part[2] == on_disk[:10] and "content-encoding" not in part[1]
    assert same[0] == 304 and same[2] == b""
    assert head[0] == 200 and "content-encoding" not in head[1] and head[2] == b""
    assert head[1]["vary"] == "Accept-Encoding"
    assert missing[0] in (200, 404) and "content-encoding" not in missing[1]
    assert odd[0] in (200, 400) and "content-encoding" not in odd[1]
    assert app.kept == {}  # nothing kept: each of these is Streamlit's own answer
    assert inner.calls[SCRIPT_PATH] == 6


def test_a_file_compressed_already_is_kept_as_streamlit_sent_it():
    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        whole = await asyncio.gather(*(get(app, FONT_PATH) for _ in range(5)))
        part = await get(app, FONT_PATH, range="bytes=0-9")
        return inner, app, whole, part

    inner, app, whole, part = asyncio.run(scenario())
    assert inner.calls == {FONT_PATH: 2}  # one read kept for five; the range went to Streamlit
    assert list(app.kept) == [FONT_PATH[1:]]
    for status, headers, body in whole:
        assert status == 200 and body == FONT.read_bytes()
        assert int(headers["content-length"]) == len(body) and "etag" in headers
        assert "content-encoding" not in headers and "vary" not in headers  # one form only
    assert part[0] == 206 and part[2] == FONT.read_bytes()[:10]


def test_a_file_gzip_would_not_shrink_is_kept_as_it_is():
    tiny = min((STATIC / "static" / "js").glob("*.js"), key=lambda p: p.stat().st_size)
    path = "/" + tiny.relative_to(STATIC).as_posix()
    assert len(gzip.compress(tiny.read_bytes(), 9)) >= tiny.stat().st_size  # the case itself

    inner, app, answers = in_turn(path, 3)
    assert inner.calls == {path: 1} and list(app.kept) == [path[1:]]
    for status, headers, body in answers:
        assert status == 200 and body == tiny.read_bytes() and "content-encoding" not in headers
        assert headers["vary"] == "Accept-Encoding" and "etag" in headers  # true of these bytes


def test_one_clients_cookie_never_reaches_what_is_kept_for_the_others():
    """The kept answer is read without the client's cookies (Streamlit's session middleware
    could answer a request that brings a session with its cookie, which would then go to all)."""

    async def scenario():
        inner = Counted()
        app = FrontendFiles(inner)
        kept = await get(app, SCRIPT_PATH, accept_encoding="gzip", cookie="session=a")
        plain = await get(app, SCRIPT_PATH, cookie="session=a")
        return inner, kept, plain

    inner, kept, plain = asyncio.run(scenario())
    assert kept[0] == plain[0] == 200 and "set-cookie" not in kept[1]
    assert inner.cookies == [None, b"session=a"]  # the kept read had none; Streamlit's its own


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_the_served_app_sends_its_frontend_compressed():
    """Through `streamlit run streamlit_app.py`: the middleware is on the app a class meets."""
    server = StreamlitServer(env={"ATTENTION_DRAW_AT_START": "0"})
    server.start()
    try:
        status, _, page = fetch(server.url + "/")
        assert status == 200
        scripts = re.findall(rb'src="\.?(/static/js/[^"]+\.js)"', page)
        assert scripts, page[:500]
        path = scripts[0].decode()
        on_disk = (STATIC / path.lstrip("/")).read_bytes()
        for _ in range(2):
            status, headers, body = fetch(server.url + path, **{"Accept-Encoding": "gzip"})
            assert status == 200 and headers["content-encoding"] == "gzip"
            assert gzip.decompress(body) == on_disk
        status, headers, body = fetch(server.url + path)
        assert status == 200 and "content-encoding" not in headers and body == on_disk
        status, headers, body = fetch(server.url + FONT_PATH, Range="bytes=0-9")
        assert status == 206 and body == FONT.read_bytes()[:10]
    finally:
        server.kill()
