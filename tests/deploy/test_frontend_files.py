"""Streamlit's frontend files served from memory, gzip-compressed once
(`dashboard.server.FrontendFromMemory`): the same bytes as Streamlit's own files, its headers,
compressed only for a browser that accepts it; anything it does not keep goes to Streamlit."""

import gzip
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import streamlit

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import StreamlitServer  # noqa: E402

STATIC = Path(streamlit.__file__).parent / "static"


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


@pytest.fixture(scope="module")
def server():
    served = StreamlitServer()
    served.start()
    try:
        yield served
    finally:
        served.kill()


def test_frontend_files_are_streamlits_own_compressed_for_a_browser_that_accepts_it(server):
    status, _, page = fetch(server.url + "/")
    assert status == 200
    scripts = re.findall(rb'src="\.?(/static/js/[^"]+\.js)"', page)
    assert scripts, page[:500]
    path = scripts[0].decode()
    on_disk = (STATIC / path.lstrip("/")).read_bytes()
    for _ in range(2):  # the first through Streamlit's route, the second from memory
        status, headers, body = fetch(server.url + path, **{"Accept-Encoding": "gzip"})
        assert status == 200
        assert headers["content-encoding"] == "gzip"
        assert "immutable" in headers["cache-control"]  # Streamlit's headers, kept
        assert "javascript" in headers["content-type"]
        assert int(headers["content-length"]) == len(body) < len(on_disk) / 2
        assert gzip.decompress(body) == on_disk
    status, headers, body = fetch(server.url + path)  # a client that takes no gzip
    assert status == 200 and "content-encoding" not in headers
    assert body == on_disk and int(headers["content-length"]) == len(on_disk)


def test_what_it_does_not_keep_is_streamlits_answer(server):
    status, headers, _ = fetch(
        server.url + "/static/js/no-such-file.js", **{"Accept-Encoding": "gzip"}
    )
    assert "content-encoding" not in headers  # not a file of the frontend: Streamlit's answer
    assert status in (200, 404)
    fonts = sorted((STATIC / "static").rglob("*.woff2"))
    assert fonts
    path = "/" + fonts[0].relative_to(STATIC).as_posix()
    status, headers, body = fetch(server.url + path, **{"Accept-Encoding": "gzip"})
    assert status == 200 and "content-encoding" not in headers  # already compressed: as it is
    assert body == fonts[0].read_bytes()
    status, headers, body = fetch(server.url + path, Range="bytes=0-9")  # Streamlit's range
    assert status == 206 and body == fonts[0].read_bytes()[:10]
