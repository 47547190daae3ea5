"""A rerun's messages leave the server as they are written: TCP_NODELAY on every connection of a
real `streamlit run`, those open before its first script run and those that come after.

Without it (Streamlit 1.67 binds its socket with protocol 0, and asyncio then leaves Nagle's
algorithm on) a rerun's last messages waited for the browser's delayed ACK: 38 ms of every
rerun of lesson 1, measured with benchmarks/load (docs/performance.md)."""

import asyncio
import asyncio.base_events as base_events
import json
import os
import socket
import sys
import time
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from websockets.sync.client import connect

from dashboard import server, state

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import streamlit_server  # noqa: E402

APP = TESTS / "dashboard" / "apps" / "nodelay_app.py"
PYTHONPATH = os.environ.get("PYTHONPATH", "")


def nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_entry_file_sends_at_once():
    """The app's own first run makes the call (the probe app below makes its own)."""
    from conftest import no_exception, open_page

    no_exception(open_page("pages/step_by_step.py"))
    assert ("dashboard.server.disable_nagle", (), ()) in state.POOL.kept


def test_disable_nagle_sets_open_connections_and_the_listener_passes_it_on(monkeypatch):
    monkeypatch.setattr(base_events, "_set_nodelay", base_events._set_nodelay)  # put back after
    listener = socket.socket(socket.AF_INET)  # protocol 0, as Streamlit binds its own
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())
    early, _ = listener.accept()
    try:
        assert nodelay(early) == 0  # the kernel's default: Nagle on
        assert server.disable_nagle.__wrapped__() >= 3  # the listener and both ends above
        assert nodelay(early) == 1
        late_client = socket.create_connection(listener.getsockname())
        late, _ = listener.accept()
        assert nodelay(late) == 1  # accepted after: inherited from the listener
        late.close()
        late_client.close()
        made = socket.socket(socket.AF_INET)  # protocol 0: asyncio's own helper skipped these
        made.connect(listener.getsockname())
        assert nodelay(made) == 0
        base_events._set_nodelay(made)  # what asyncio calls on each connection it wraps
        assert nodelay(made) == 1
        made.close()
    finally:
        for sock in (early, client, listener):
            sock.close()


def rerun(url: str, out: Path) -> list[int]:
    """Connect, run the app's script once, and return what it wrote."""
    out.unlink(missing_ok=True)
    with connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"]) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        ws.send(msg.SerializeToString())
        deadline = time.monotonic() + 30
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        return json.loads(out.read_text())  # written whole (the app replaces it)


def test_a_real_server_on_asyncio_sends_without_delay_before_and_after_its_first_run(
    tmp_path, monkeypatch
):
    """The fallback where uvloop is missing (it has no Windows build): Streamlit then serves
    through asyncio, whose connections disable_nagle sets. uvloop is hidden from the server by
    a module of that name that cannot be imported (Streamlit and uvicorn then take asyncio)."""
    hidden = tmp_path / "hide_uvloop"
    hidden.mkdir()
    (hidden / "uvloop.py").write_text('raise ModuleNotFoundError("hidden by the test")\n')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hidden), PYTHONPATH])))
    out = tmp_path / "nodelay.json"
    monkeypatch.setenv("NODELAY_OUT", str(out))
    with streamlit_server(app=APP) as url:
        ws_url = url.replace("http", "ws") + "/_stcore/stream"
        with connect(ws_url, subprotocols=["streamlit"]):  # open before the first run
            first = rerun(url, out)
            assert len(first) >= 2 and set(first) == {1}, first
        later = rerun(url, out)  # a connection the server accepted after the first run
        assert later and set(later) == {1}, later


def test_uvloop_sets_it_on_every_connection_a_protocol_0_listener_accepts():
    """Where uvloop is installed (requirements.txt, on every platform but Windows) Streamlit
    serves through it, and its connections are not Python sockets that disable_nagle could
    find: uvloop sets TCP_NODELAY on each connection itself, on a listener bound with protocol
    0 as Streamlit binds its own. (tests/deploy/test_warm_start.py checks that the served app
    runs on uvloop.)"""
    import uvloop

    async def accept_one() -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                seen.set_result(nodelay(transport.get_extra_info("socket")))

        served = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname())
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            served.close()

    assert uvloop.run(accept_one()) == 1
