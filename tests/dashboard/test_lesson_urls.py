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


def lesson_warnings(at) -> list[str]:
    return [as_read(w.value) for w in at.main.warning]


def own_widgets(at, params) -> dict:
    """The page's widgets whose keys the lesson declares, by key."""
    return {
        element.key: element
        for element in elements(at.main)
        if getattr(element, "key", None) in params
    }


def widget_keys(at) -> set[str]:
    """The keys of every widget in the page's main area."""
    return {element.key for element in elements(at.main) if getattr(element, "key", None)}


def bound_keys(at) -> set[str]:
    """The link keys of the widgets in the page's main area bound to the URL."""
    return {
        element.proto.query_param_key
        for element in elements(at.main)
        if getattr(getattr(element, "proto", None), "query_param_key", "")
    }


def number_text(value) -> str:
    """A number as a link writes it (5.0 as 5)."""
    return str(int(value)) if isinstance(value, float) and value == int(value) else str(value)


# The kinds of control the lessons draw, read through AppTest's element API (Streamlit 1.67):
# what the link says of the widget's value (its options as shown, one per value chosen)
OPTIONS = ("ButtonGroup", "Multiselect", "Selectbox", "Radio", "SelectSlider")  # shown options


def link_text(widget) -> tuple[str, ...]:
    """A widget's value as its link parameter carries it: the options shown (a segmented
    control's, a select slider's: their format_func's text), a number, true or false, text."""
    kind = type(widget).__name__
    if kind == "ButtonGroup":  # segmented control, pills
        return tuple(widget.formatted_values)
    if kind == "Multiselect":
        return tuple(widget.values)
    if kind in ("Selectbox", "Radio"):
        return () if widget.index is None else (widget.options[widget.index],)
    if kind == "SelectSlider":
        return (str(widget.format_func(widget.value)),)
    if kind in ("Toggle", "Checkbox"):
        return (str(widget.value).lower(),)
    if kind in ("Slider", "NumberInput"):
        return (number_text(widget.value),)
    if kind in ("TextInput", "TextArea"):
        return (widget.value or "",)
    raise AssertionError(f"{widget.key}: a {kind}, which this test cannot read yet: add it here")


def another(widget) -> str:
    """The link text of another value the widget allows (by its own options or bounds): the
    last option or the upper bound, or where it holds that one, the one below or the lower."""
    kind, now = type(widget).__name__, link_text(widget)
    if kind in OPTIONS:
        others = [option for option in reversed(widget.options) if (option,) != now]
        assert others, f"{widget.key}: one option, nothing to move it to"
        return others[0]
    if kind in ("Toggle", "Checkbox"):
        return "false" if widget.value else "true"
    if kind == "Slider":
        return number_text(widget.max if widget.value != widget.max else widget.min)
    if kind == "NumberInput":
        up = widget.max is None or widget.value < widget.max
        return number_text(widget.value + (widget.step or 1) if up else widget.min)
    if kind in ("TextInput", "TextArea"):
        text = widget.value or ""
        return text[::-1] if text[::-1] != text else f"{text}x"  # the text backwards
    raise AssertionError(f"{widget.key}: a {kind}, which this test cannot move yet: add it here")


def opened(lesson) -> tuple[dict, dict]:
    """The lesson's own controls at its defaults, by key, and the defaults they declare."""
    fresh = open_page(lesson.path)
    no_exception(fresh)
    registered = fresh.session_state["lesson_defaults"] if lesson.params else {}
    unmet = lesson.unmet_on_page(
        controls=widget_keys(fresh), bound=bound_keys(fresh), defaults=registered
    )
    assert unmet == [], "\n".join(unmet)  # each control declared, bound, with its default
    return own_widgets(fresh, lesson.params), registered


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path)
def test_link_reopens_the_control(lesson):
    """Each of the lesson's controls opens at the default its widget declares, and a link that
    gives it another value it allows reopens the page with the control at that value, no
    warning, and the sidebar's link check takes the key (the lesson declares it)."""
    shown, registered = opened(lesson)
    for key, widget in shown.items():
        assert widget.value == registered[key], key
        raw = another(widget)
        linked = open_page(lesson.path, **{key: raw})
        no_exception(linked)
        assert link_text(own_widgets(linked, (key,))[key]) == (raw,), key
        assert lesson_warnings(linked) == [], key
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
    assert getattr(at, kind)(key=key).value != default
    at.button(key="reset_lesson").click().run()
    no_exception(at)
    assert getattr(at, kind)(key=key).value == default
    for other in params:  # every linked control is back at its default, and out of the URL
        assert other not in at.query_params


@pytest.mark.parametrize(
    "lesson", [lesson for lesson in LESSONS if lesson.params], ids=lambda lesson: lesson.path
)
def test_reset_returns_every_declared_control_to_the_default_its_widget_declares(lesson):
    """Issue 25: Reset's defaults were dicts written by hand in each page, beside the widgets'
    own. Each control now declares its default once (layout.remember_default, where the widget
    is drawn), and Reset reads them for the keys the lesson declares: each control the page
    shows, moved by a link and then by hand (to the value the link gave it), is back after
    Reset at a fresh page's value, and out of the URL."""
    shown, _ = opened(lesson)
    fresh = {key: widget.value for key, widget in shown.items()}
    for key, widget in shown.items():
        at = open_page(lesson.path, **{key: another(widget)})
        no_exception(at)
        moved = own_widgets(at, (key,))[key].value
        assert moved != widget.value, key
        for how in ("by a link", "by hand"):
            if how == "by hand":
                own_widgets(at, (key,))[key].set_value(moved).run()
                no_exception(at)
                assert own_widgets(at, (key,))[key].value == moved, (key, how)
            at.button(key="reset_lesson").click().run()
            no_exception(at)
            after = own_widgets(at, lesson.params)
            assert {name: after[name].value for name in shown} == fresh, (key, how)
            assert key not in at.query_params, (key, how)
