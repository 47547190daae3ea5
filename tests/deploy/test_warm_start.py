"""`streamlit run streamlit_app.py` serves the entry file's `app` (an st.App) whose lifespan
(`dashboard.server.warm_start`) loads torch and every page's modules before the server answers
its health check: a class that opens the link on a server just started (Community Cloud wakes a
sleeping app so) does not queue behind the first student's imports."""

import re
import sys
from pathlib import Path

from streamlit.web.server.app_discovery import discover_asgi_app

from benchmarks.load.crowd import run_load
from benchmarks.load.server import tree_cpu_s

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import ROOT, StreamlitServer  # noqa: E402

from dashboard.frame import LESSONS  # noqa: E402


def test_streamlit_run_serves_the_entry_files_app():
    found = discover_asgi_app(ROOT / "streamlit_app.py")
    assert found.is_asgi_app and found.import_string == "streamlit_app:app"


def test_torch_is_loaded_before_the_first_student_and_the_page_draws():
    server = StreamlitServer()
    server.start()  # returns once the health check answers "ok"
    try:
        maps = Path(f"/proc/{server.process.pid}/maps").read_text()
        assert "libtorch" in maps, "the server answered its health check without torch"
        # served through uvloop (requirements.txt): Streamlit takes it when it is installed
        assert "/uvloop/loop." in maps, "uvloop is not loaded in the server"
        result = run_load(
            students=2, duration=0.0, interval=60.0, page="step_by_step", url=server.url,
            seed=0, load_timeout=120.0, settle=0.2,
        )  # fmt: skip
        assert result.error_count == 0, result.errors
        assert len(result.load_latencies_ms) == 2
    finally:
        server.kill()


def first_page_cpu_s(server: StreamlitServer, page: str) -> float:
    """The server's CPU seconds while one student opens `page` (its first visit there)."""
    before = tree_cpu_s(server.process.pid)
    result = run_load(
        students=1, duration=0.0, interval=60.0, page=page, url=server.url, seed=0,
        load_timeout=120.0, settle=0.2,
    )  # fmt: skip
    assert result.error_count == 0 and len(result.load_latencies_ms) == 1, result.errors
    return tree_cpu_s(server.process.pid) - before


def test_the_server_draws_every_lesson_before_the_first_student():
    """Started as a deployment starts it, the server draws the home page and every lesson once
    before it answers: what the first student of a lesson made for everyone (lesson 6's tiny
    models, its charts) is there when a class opens the link. Its first lesson-6 page then
    costs the server a small part of what it costs a server started without drawing (0.65 s
    of CPU against 0.03 here); the margin asked, a third, holds on a machine of any speed."""
    drawing = StreamlitServer(env={"ATTENTION_DRAW_AT_START": "1"})
    plain = StreamlitServer(env={"ATTENTION_DRAW_AT_START": "0"})
    costs = {}
    for name, server in (("drawn", drawing), ("plain", plain)):
        server.start()
        try:
            costs[name] = first_page_cpu_s(server, "what_heads_learn")
        finally:
            server.kill()
    said = drawing.log.read_text()
    assert f"Drew {len(LESSONS) + 1} of {len(LESSONS) + 1} pages" in said, said[-2000:]
    assert "Drew" not in plain.log.read_text()
    assert costs["drawn"] < costs["plain"] / 3, costs
    # and then what the start made is out of the garbage collector's walks (server.py,
    # freeze_the_start): torch, pandas, Streamlit and the drawn pages are 300,000 objects or more
    for server in (drawing, plain):
        frozen = re.search(r"Set the start's (\d+) objects aside", server.log.read_text())
        assert frozen and int(frozen[1]) > 100_000, server.log.read_text()[-2000:]


def test_a_drawn_page_counts_only_when_its_whole_run_finished_without_an_error():
    """What the server's own session (`server.Unseen`) makes of the messages a page sends: a
    whole run's end finishes it (not a fragment's, nor a run cut short by a rerun); an error
    shown, or no page of that name (Streamlit then draws the home page), fails it, so the
    start's "Drew N of N" counts only pages drawn as a student would see them."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from dashboard.server import Unseen

    def finished(status) -> ForwardMsg:
        msg = ForwardMsg()
        msg.script_finished = status
        return msg

    client = Unseen()
    cut_short = (ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, ForwardMsg.FINISHED_EARLY_FOR_RERUN)
    for status in cut_short:
        client.write_forward_msg(finished(status))
    warning = ForwardMsg()
    warning.delta.new_element.exception.is_warning = True  # st.warning-like: not an error
    client.write_forward_msg(warning)
    assert not client.finished.is_set() and not client.failed
    client.write_forward_msg(finished(ForwardMsg.FINISHED_SUCCESSFULLY))
    assert client.finished.is_set() and not client.failed

    raised, missing = ForwardMsg(), ForwardMsg()
    raised.delta.new_element.exception.message = "division by zero"
    missing.page_not_found.page_name = "nowhere"
    for shown in (raised, missing):
        client = Unseen()
        client.write_forward_msg(shown)
        assert client.failed


def test_a_page_run_outside_the_frame_runs_the_frame_whatever_streamlit_says(monkeypatch):
    """A deep link that Streamlit starts as a legacy `pages/` page runs the entry file, even
    after another student's run turned Streamlit's process-wide pages-directory flag off (a
    class arriving at once: that page drew without its sidebar); inside `run_page` it runs."""
    from streamlit.runtime.pages_manager import PagesManager

    from dashboard import frame

    ran = []
    monkeypatch.setattr(frame.runpy, "run_path", lambda path, run_name: ran.append(run_name))
    monkeypatch.setattr(frame.st, "stop", lambda: ran.append("stop"))
    monkeypatch.setattr(PagesManager, "uses_pages_directory", False)
    frame.require_frame()
    assert ran == ["__main__", "stop"]
    ran.clear()
    frame.FRAMED.page = True  # as server.run_page sets it around the page
    try:
        frame.require_frame()
    finally:
        frame.FRAMED.page = False
    assert ran == []
