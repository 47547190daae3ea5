"""A file made when its download button is clicked (every lesson's *Take it home*, *Save the class
to a file*) is still there when the browser asks for it, however many other runs end meanwhile
(`dashboard.server.keep_made_downloads`).

Streamlit 1.67 holds such a file in no session, and deletes unheld files at the end of the
second script run after it was made, in any session: in a class that is tens of milliseconds."""

import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from websockets.sync.client import connect

from dashboard import server

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import streamlit_server  # noqa: E402

APP = TESTS / "dashboard" / "apps" / "made_download_app.py"


def made_file(manager: MediaFileManager) -> str:
    """A download button's file, made as a click makes it; its id."""
    placeholder = manager.add_deferred(lambda: b"made", "application/json", "0", "made.json")
    return manager.execute_deferred(placeholder).rsplit("/", 1)[-1].split(".")[0]


def there(manager: MediaFileManager, file_id: str) -> bool:
    try:
        manager._storage.get_file(file_id)
        return True
    except MediaFileStorageError:
        return False


@pytest.fixture
def manager(monkeypatch):
    import streamlit.runtime.media_file_manager as media

    monkeypatch.setattr(media, "_get_session_id", lambda: "a student")
    return MediaFileManager(MemoryMediaFileStorage("/media"))


def test_streamlit_deletes_a_made_file_after_two_runs_end(manager):
    """What the keep is for: if Streamlit changes this, the keep may go."""
    file_id = made_file(manager)
    manager.remove_orphaned_files()  # one script run ends, in any session
    assert there(manager, file_id)
    manager.remove_orphaned_files()  # and another
    assert not there(manager, file_id)


def test_a_kept_file_outlives_the_runs_for_its_minute_then_goes(manager):
    now = [100.0]
    server.keep_made_files(manager, 60.0, clock=lambda: now[0])
    file_id = made_file(manager)
    for _ in range(50):
        manager.remove_orphaned_files()
    assert there(manager, file_id)
    now[0] += 61.0
    manager.remove_orphaned_files()  # marked
    manager.remove_orphaned_files()  # deleted, as Streamlit would have
    assert not there(manager, file_id)


def run_once(ws) -> list[ForwardMsg]:
    """Rerun the script on this websocket; its messages until it finished."""
    msg = BackMsg()
    msg.rerun_script.query_string = ""
    ws.send(msg.SerializeToString())
    return until(ws, lambda m: m.WhichOneof("type") == "script_finished")


def until(ws, done, timeout: float = 30.0) -> list[ForwardMsg]:
    got, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = ForwardMsg()
        m.ParseFromString(ws.recv(timeout=deadline - time.monotonic()))
        got.append(m)
        if done(m):
            return got
    raise TimeoutError("the server did not answer")


def clicked(url: str, other_runs: int) -> tuple[int, str]:
    """A student clicks the download while another student's page ends `other_runs` runs; the
    browser then asks for the file: its status and Content-Disposition."""
    stream = url.replace("http", "ws") + "/_stcore/stream"
    with connect(stream, subprotocols=["streamlit"]) as student, \
            connect(stream, subprotocols=["streamlit"]) as other:  # fmt: skip
        page = run_once(student)
        session = next(
            m.new_session.initialize.session_id for m in page if m.HasField("new_session")
        )
        button = next(
            m.delta.new_element.download_button
            for m in page
            if m.WhichOneof("type") == "delta" and m.delta.new_element.HasField("download_button")
        )
        request = BackMsg()
        request.backend_operation_request.request_id = "click"
        request.backend_operation_request.session_id = session
        request.backend_operation_request.deferred_file.file_id = button.deferred_file_id
        student.send(request.SerializeToString())
        answer = until(student, lambda m: m.WhichOneof("type") == "backend_operation_response")
        path = answer[-1].backend_operation_response.deferred_file.url
        assert path, answer[-1]
        for _ in range(other_runs):
            run_once(other)
        try:
            with urllib.request.urlopen(url + path, timeout=30) as response:
                return response.status, response.headers.get("Content-Disposition", "")
        except urllib.error.HTTPError as error:
            return error.code, ""


def test_a_real_server_serves_a_made_file_after_other_runs_end(monkeypatch):
    monkeypatch.setenv("MADE_KEEP", "1")
    with streamlit_server(app=APP) as url:
        assert clicked(url, other_runs=3) == (200, 'attachment; filename="made.json"')


def test_without_the_keep_a_real_server_loses_it(monkeypatch):
    """The same click on a server without the keep: the browser's request finds nothing."""
    monkeypatch.setenv("MADE_KEEP", "0")
    with streamlit_server(app=APP) as url:
        assert clicked(url, other_runs=3)[0] == 404
