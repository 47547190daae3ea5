"""Every control inside a lesson is in the URL (issue 18): a link with the control's parameter
reopens the lesson with that value, a value the lesson cannot use gets a message naming what it
uses instead, and Reset this lesson returns the lesson's own controls to their defaults.

AppTest does not copy a bound widget's moves into `at.query_params` (the browser writes the URL,
tests/browser/test_browser_lesson_urls.py checks that), so each control is checked the other
way round: the link sets it, and the widget and the page follow."""

import pytest
from conftest import as_read, elements, no_exception, open_page

from dashboard.frame import LESSON_PARAMS, LESSONS
from dashboard.links import check_link, lesson_link_message

# (page, widget kind, key, a value from a link, the value the widget then holds, its default)
CONTROLS = [
    ("pages/step_by_step.py", "segmented_control", "head", "1", 1, 0),
    ("pages/step_by_step.py", "selectbox", "cell_i", "4", 4, 1),
    ("pages/step_by_step.py", "selectbox", "cell_j", "3", 3, 0),
    ("pages/masking.py", "select_slider", "pad", "2", 2, 0),
    ("pages/masking.py", "segmented_control", "mask_head", "1", 1, 0),
    ("pages/why_sqrt_dk.py", "select_slider", "dk", "16", 16, 512),
    ("pages/why_sqrt_dk.py", "select_slider", "tau", "0.5", 0.5, 1.0),
    ("pages/what_heads_learn.py", "select_slider", "learn_step", "0", 0, None),
    ("pages/what_heads_learn.py", "number_input", "learn_seed", "7", 7, 1),
    ("pages/bug_hunt.py", "segmented_control", "bug_head", "1", 1, 0),
    ("pages/bug_hunt.py", "segmented_control", "bug_task", "previous_token", "previous_token",
     "induction"),
    ("pages/drills.py", "number_input", "drill_set", "5", 5, 0),
    ("pages/kv_cache.py", "select_slider", "decode_step", "3", 3, 0),
    ("pages/kv_cache.py", "select_slider", "window", "2", 2, 3),
    ("pages/at_scale.py", "select_slider", "block_q", "3", 3, 2),
    ("pages/at_scale.py", "select_slider", "block_k", "4", 4, 2),
    ("pages/at_scale.py", "select_slider", "tile_step", "2", 2, 0),
    ("pages/bug_hunt.py", "selectbox", "bug", "no_scaling", "no_scaling", "softmax_over_queries"),
    ("pages/kv_cache.py", "select_slider", "kv_heads", "2", 2, 1),
    ("pages/step_by_step.py", "toggle", "show_weights", "true", True, False),
    ("pages/real_model.py", "segmented_control", "rm_layer", "1", 1, 0),
    ("pages/real_model.py", "segmented_control", "rm_head", "2", 2, 0),
    ("pages/real_model.py", "select_slider", "rm_temp", "1.5", 1.5, 0.8),
    ("pages/real_model.py", "select_slider", "rm_topk", "3", 3, 10),
    ("pages/real_model.py", "select_slider", "rm_topp", "0.9", 0.9, 1.0),
    ("pages/real_model.py", "select_slider", "rm_pos", "5", 5, None),
    ("pages/real_model.py", "text_area", "rm_text", "to be or not", "to be or not", None),
    ("pages/block.py", "text_area", "blk_text", "to be or not", "to be or not", None),
    ("pages/block.py", "select_slider", "blk_pos", "5", 5, None),
    ("pages/block.py", "selectbox", "blk_char", "e", "e", "its final guess"),
    ("pages/block.py", "segmented_control", "blk_stage", "attention 0", "attention 0", "MLP 1"),
    ("pages/block.py", "selectbox", "blk_ln", "final LayerNorm", "final LayerNorm",
     "LN1 of layer 0"),
    ("pages/block.py", "segmented_control", "blk_mlp", "1", 1, 0),
]  # fmt: skip


def widget(at, kind: str, key: str):
    return getattr(at, kind)(key=key)


def lesson_warnings(at) -> list[str]:
    return [as_read(w.value) for w in at.main.warning]


@pytest.mark.parametrize("page, kind, key, raw, value, default", CONTROLS)
def test_link_reopens_the_control(page, kind, key, raw, value, default):
    plain = open_page(page)
    no_exception(plain)
    if default is not None:
        assert widget(plain, kind, key).value == default
    linked = open_page(page, **{key: raw})
    no_exception(linked)
    assert widget(linked, kind, key).value == value
    assert lesson_warnings(linked) == []
    declared = next(lesson for lesson in LESSONS if lesson.path == page)
    assert key in declared.params  # the lesson declares it (dashboard/spec.py)
    assert check_link({key: raw}, lesson_params=LESSON_PARAMS) == ([], [])  # not "unknown"
    assert check_link({key: raw})[1] == [key]  # without the declarations it would be


def test_link_moves_the_page():
    """The linked value is the one the page shows, not only the widget's."""
    at = open_page("pages/step_by_step.py", cell_i="4", cell_j="3")
    assert "i = 4: t4" in [as_read(c.value) for c in at.caption]
    at = open_page("pages/kv_cache.py", decode_step="3")
    before = open_page("pages/kv_cache.py")
    assert [m.value for m in at.markdown] != [m.value for m in before.markdown]


def test_link_knocked_out_heads_and_stage():
    at = open_page("pages/what_heads_learn.py", learn_off="layer 0 · head 1 (previous-token head)")
    no_exception(at)
    assert at.pills(key="learn_off").value == [(0, 1)]
    at = open_page("pages/bug_hunt.py", bug="softmax_over_queries", bug_stage="Attention weights")
    no_exception(at)
    assert lesson_warnings(at) == []


@pytest.mark.parametrize(
    "page, params, words",
    [
        (
            "pages/step_by_step.py",
            {"head": "7"},
            "The link's head=7 is not a head of this layer (0 to 1): using 0.",
        ),
        (
            "pages/step_by_step.py",
            {"cell_i": "x"},
            "cell_i=x is not a position from 0 to 5: using 1.",
        ),
        (
            "pages/masking.py",
            {"pad": "9"},
            "The link's pad=9 is not a whole number from 0 to 5: using 0.",
        ),
        ("pages/why_sqrt_dk.py", {"dk": "3"}, "The link's dk=3 is not one of 1, 2, 4"),
        ("pages/why_sqrt_dk.py", {"tau": "hot"}, "tau=hot is not one of 0.01"),
        (
            "pages/drills.py",
            {"drill_set": "-1"},
            "drill_set=-1 is not a whole number from 0 to 99999: using 0.",
        ),
        (
            "pages/kv_cache.py",
            {"decode_step": "60"},
            "decode_step=60 is not a whole number from 0 to 5: using 0.",
        ),
        (
            "pages/what_heads_learn.py",
            {"learn_seed": "abc"},
            "learn_seed=abc is not a whole number",
        ),
        (
            "pages/bug_hunt.py",
            {"bug_task": "chess"},
            "bug_task=chess is not one of induction, previous_token: using induction.",
        ),
        (
            "pages/at_scale.py",
            {"block_q": "0"},
            "block_q=0 is not a whole number from 1 to 6: using 2.",
        ),
    ],
)
def test_bad_lesson_link_says_what_is_used(page, params, words):
    at = open_page(page, **params)
    no_exception(at)
    assert any(words in w for w in lesson_warnings(at)), lesson_warnings(at)


def test_message_is_none_for_a_used_value():
    assert lesson_link_message("pad", "2.0", 2, "x") is None
    assert lesson_link_message("learn_off", ["a", "b"], ["a", "b"], "x") is None
    assert lesson_link_message("learn_off", ["a", "zz"], ["a"], "heads") == (
        "The link's learn_off=a, zz is not heads: using a."
    )


def test_range_shrunk_by_the_sidebar():
    """A decode step past a shorter sequence: the control returns to its default without an
    error (a slider raised StreamlitValueAboveMaxError here), and the link, reopened, shows the
    same page (its step 5 is past T = 4, so it opens at 0 as well)."""
    at = open_page("pages/kv_cache.py", decode_step="5")
    at.sidebar.slider(key="T").set_value(4).run()
    no_exception(at)
    assert at.select_slider(key="decode_step").value == 0
    assert any("after step 0" in c.value for c in at.caption)
    reopened = open_page("pages/kv_cache.py", decode_step="5", T="4")
    no_exception(reopened)
    assert reopened.select_slider(key="decode_step").value == 0


@pytest.mark.parametrize(
    "page, params, kind, key, default",
    [
        ("pages/masking.py", {"pad": "2", "mask_head": "1"}, "select_slider", "pad", 0),
        ("pages/why_sqrt_dk.py", {"dk": "16", "tau": "0.5"}, "select_slider", "tau", 1.0),
        ("pages/kv_cache.py", {"decode_step": "3", "window": "2"}, "select_slider", "window", 3),
        ("pages/step_by_step.py", {"head": "1", "cell_i": "4"}, "selectbox", "cell_i", 1),
    ],
)
def test_reset_this_lesson(page, params, kind, key, default):
    at = open_page(page, **params)
    assert widget(at, kind, key).value != default
    at.button(key="reset_lesson").click().run()
    no_exception(at)
    assert widget(at, kind, key).value == default
    for other in params:  # every linked control is back at its default, and out of the URL
        assert other not in at.query_params


def own_widgets(at, params) -> dict:
    """The page's widgets whose keys the lesson declares, by key."""
    return {
        element.key: element
        for element in elements(at.main)
        if getattr(element, "key", None) in params
    }


def move_each(widgets: dict) -> dict:
    """Each slider, number box, text box (its text backwards) and toggle among `widgets` set
    to another value it allows (by its own bounds); the keys moved."""
    moved = {}
    for key, w in widgets.items():
        kind = type(w).__name__
        if kind == "Slider":
            w.set_value(w.max if w.value != w.max else w.min)
        elif kind in ("Toggle", "Checkbox"):
            w.set_value(not w.value)
        elif kind == "TextInput" and w.value:
            w.set_value(w.value[::-1])
        elif kind == "NumberInput":
            w.set_value(w.value + (w.step or 1) if w.max is None or w.value < w.max else w.min)
        else:
            continue
        moved[key] = w
    return moved


@pytest.mark.parametrize(
    "lesson", [lesson for lesson in LESSONS if lesson.params], ids=lambda lesson: lesson.path
)
def test_reset_returns_every_declared_control_to_the_default_its_widget_declares(lesson):
    """Issue 25: Reset's defaults were dicts written by hand in each page, beside the widgets'
    own. Each control now declares its default once (layout.remember_default, where the widget
    is drawn), and Reset reads them for the keys the lesson declares: every control the page
    shows is registered, and after Reset equals a fresh page's."""
    fresh = open_page(lesson.path)
    no_exception(fresh)
    shown = own_widgets(fresh, lesson.params)
    registered = fresh.session_state["lesson_defaults"]
    assert shown and set(shown) <= set(registered), set(shown) - set(registered)
    moved = {key: raw for page, _, key, raw, _, _ in CONTROLS if page == lesson.path}
    at = open_page(lesson.path, **moved)
    no_exception(at)
    if not moved:  # a lesson CONTROLS has no link for: its controls moved by hand
        moved = move_each(own_widgets(at, lesson.params))
        at.run()
        no_exception(at)
    assert any(
        own_widgets(at, lesson.params)[key].value != shown[key].value
        for key in moved
        if key in shown
    ), lesson.path
    at.button(key="reset_lesson").click().run()
    no_exception(at)
    after = own_widgets(at, lesson.params)
    assert {key: after[key].value for key in shown} == {
        key: widget.value for key, widget in shown.items()
    }
