"""A browser that reconnects to a fresh worker (a restarted server, a worker that died under
deploy/serve) sends its widgets' values and nothing else: every lesson must rebuild the session
state it derives across reruns (issue 17 item 15: lesson 5's editor raised
KeyError: 'encodings_base' on screen for every edit)."""

import pytest
from conftest import APP, LESSON_PAGES, no_exception
from streamlit.testing.v1 import AppTest


def widget_values(at: AppTest) -> dict:
    """The values the browser holds: the session's keyed widgets, without derived state."""
    state = at.session_state._state._state  # SessionState
    widget_keys = set(state._key_id_mapper._key_id_mapping)
    values = {key: at.session_state[key] for key in widget_keys if key in at.session_state}
    # buttons and download buttons are events: the browser does not resend them
    return {key: value for key, value in values.items() if not isinstance(value, bool)
            or key in ("causal", "pos")}  # fmt: skip


def fresh_worker(page: str, values: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in values.items():
        at.session_state[key] = value
    at.switch_page(page)
    return at.run()


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_a_fresh_worker_rebuilds_the_session(page):
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(page).run()
    no_exception(at)
    values = widget_values(at)
    assert values, "the page has keyed widgets"
    again = fresh_worker(page, values)
    no_exception(again)
    assert [t.value for t in again.title] == [t.value for t in at.title]


def test_lesson5_editor_after_a_reconnect():
    """The student had edited x2 before the server restarted: the edit still applies."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/worked_example.py").run()
    edit = {
        "edited_rows": {1: {"dim 0": "1", "dim 1": "0.5"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.session_state["encodings_0"] = edit
    at.run()
    no_exception(at)
    again = fresh_worker("pages/worked_example.py", {**widget_values(at), "encodings_0": edit})
    no_exception(again)
    assert any("x2 = (1.0000, 0.5000)" in c.value for c in again.caption)
