"""`streamlit run streamlit_app.py` serves the entry file's `app` (an st.App) whose lifespan
(`dashboard.server.warm_start`) loads torch and every page's modules before the server answers
its health check: a class that opens the link on a server just started (Community Cloud wakes a
sleeping app so) does not queue behind the first student's imports."""

import sys
from pathlib import Path

from streamlit.web.server.app_discovery import discover_asgi_app

from benchmarks.load.crowd import run_load

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from chromium import ROOT, StreamlitServer  # noqa: E402


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
