"""Presenter mode (?present=1): every lesson one section at a time, the section in the URL,
the teacher's notes off by default."""

import json

import pytest
from conftest import no_exception, open_page

from dashboard.frame import LESSONS
from dashboard.render import charts
from dashboard.views import kv_cache, why_sqrt_dk


def nav_count(at) -> str:
    """The "k / n" of the navigation row."""
    return next(m.value for m in at.markdown if m.value.startswith("**") and " / " in m.value)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path)
def test_presenter_every_lesson_has_sections_and_notes_off(lesson):
    at = open_page(lesson.path, present="1")
    no_exception(at)
    assert not at.title  # the page's own title block is not drawn
    count = int(nav_count(at).strip("*").split(" / ")[1])
    assert at.query_params.get("section") == "1"
    assert at.toggle(key="present_notes").value is False
    keys = []  # each section's key: named, and unique in its lesson (course plan links use it)
    for number in range(1, count + 1):
        at.query_params["section"] = str(number)
        at.run()
        keys.append(at.session_state["presenter_section_key"])
    unmet = lesson.unmet_on_page(section_keys=keys)  # 3 to 11 of them (dashboard/spec.py)
    assert unmet == [], "\n".join(unmet)
    at.query_params["section"] = "1"
    at.run()
    assert not [i for i in at.info if i.icon == ":material/record_voice_over:"]
    at.toggle(key="present_notes").set_value(True).run()
    assert [i for i in at.info if i.icon == ":material/record_voice_over:"]


def test_presenter_next_and_previous_step_and_name_the_section_in_the_url():
    at = open_page("pages/step_by_step.py", present="1")
    assert nav_count(at) == "**1 / 11**"
    assert at.button(key="present_prev").disabled
    at.button(key="present_next").click().run()
    assert nav_count(at) == "**2 / 11**"
    assert at.query_params.get("section") == "2"
    assert "### Queries Q" in [m.value for m in at.markdown]
    at.button(key="present_prev").click().run()
    assert at.query_params.get("section") == "1"


def test_presenter_link_opens_its_section_clamped():
    at = open_page("pages/masking.py", present="1", section="3")
    assert nav_count(at) == "**3 / 4**"
    at = open_page("pages/masking.py", present="1", section="99")
    assert nav_count(at) == "**4 / 4**" and at.query_params.get("section") == "4"
    at = open_page("pages/masking.py", present="1", section="x")
    assert nav_count(at) == "**1 / 4**"


def test_presenter_link_is_not_called_unknown_and_stays_in_the_address():
    at = open_page("pages/step_by_step.py", present="1", section="2")
    assert not [w for w in at.sidebar.warning if "present" in w.value or "section" in w.value]
    assert at.query_params.get("present") == "1"


def test_presenter_charts_print_numbers_with_readable_axes():
    at = open_page("pages/step_by_step.py", present="1")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    axis = spec["config"]["axis"]
    assert axis["labelFontSize"] == charts.PRESENT_FONT > charts.FONT_SIZE
    assert axis["labelColor"] == charts.INK["light"]  # not the theme's 3.6:1 grey
    assert any(layer["encoding"].get("text") for layer in spec["layer"])  # numbers in cells


def test_presenter_leaving_restores_every_stage():
    at = open_page("pages/worked_example.py", present="1")
    assert len(at.get("vega_lite_chart")) == 1
    at.button(key="present_leave").click().run()
    assert len(at.get("vega_lite_chart")) == 9
    assert "section" not in at.query_params


def test_without_presenter_every_stage_is_shown():
    at = open_page("pages/step_by_step.py")
    assert len([m for m in at.markdown if m.value.startswith("### ")]) == 11
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["config"]["axis"]["labelFontSize"] == charts.FONT_SIZE


def test_presenter_sections_use_the_lessons_linked_controls():
    """A presenter link carries the lesson's own controls too (their widgets are not drawn in
    presenter mode, so the sections read the link): lesson 4's d_k, lesson 1's head, lesson 6's
    knocked-out head, lesson 11's block sizes; a value the lesson cannot take gives its default."""
    at = open_page("pages/why_sqrt_dk.py", present="1", section="3", dk="64")
    no_exception(at)
    assert "### Large scores saturate the softmax (d_k = 64)" in [m.value for m in at.markdown]
    at = open_page("pages/why_sqrt_dk.py", present="1", section="3", dk="3")
    assert "### Large scores saturate the softmax (d_k = 512)" in [m.value for m in at.markdown]
    at = open_page("pages/step_by_step.py", present="1", section="2", heads="2", head="1")
    no_exception(at)
    assert any("(head 1)" in m.value for m in at.markdown), [m.value for m in at.markdown]
    at = open_page(
        "pages/what_heads_learn.py", present="1", section="4", learn="induction",
        learn_off="layer 1 · head 0 (induction head)",
    )  # fmt: skip
    no_exception(at)
    assert at.pills(key="learn_off").value == [(1, 0)]
    assert at.metric[0].delta.startswith("-")
    small = open_page("pages/at_scale.py", present="1", section="3", T="8")
    large = open_page("pages/at_scale.py", present="1", section="3", T="8", block_q="4")
    no_exception(large)
    assert small.metric[0].value != large.metric[0].value


def test_presenter_histograms_have_a_width_of_their_own():
    """Presenter mode lays a section out at several widths while it fits it to the screen, and
    a chart as wide as its column was drawn again at each (why √d_k's Page Down took 246 ms to
    repaint, and the charts ended cut off at the right). There its two histograms have a width
    of their own, their legend two groups a row, so that it fits over them; on the page they
    fill their columns, the legend one row."""
    at = open_page("pages/why_sqrt_dk.py", present="1", section="2")
    no_exception(at)
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    assert len(specs) == 2
    for spec in specs:
        assert spec["width"] == why_sqrt_dk.PRESENT_HISTOGRAM_WIDTH
        assert spec["encoding"]["color"]["legend"]["columns"] == 2
    page = open_page("pages/why_sqrt_dk.py")
    histograms = [json.loads(chart.proto.spec) for chart in page.get("vega_lite_chart")][:2]
    assert all(spec["mark"]["interpolate"] == "step-after" for spec in histograms)
    assert all("width" not in spec for spec in histograms)
    assert all("columns" not in spec["encoding"]["color"]["legend"] for spec in histograms)


@pytest.mark.parametrize(
    ("page", "section", "count", "width"),
    [
        ("why_sqrt_dk", "3", 3, why_sqrt_dk.PRESENT_BARS_WIDTH),
        ("kv_cache", "3", 2, kv_cache.PRESENT_STEPS_WIDTH),
    ],
)
def test_presenter_charts_side_by_side_have_a_width_of_their_own(page, section, count, width):
    """The same for the other sections with charts side by side: why √d_k's three softmax rows
    (their Page Down took 230-290 ms, 170 ms of it redrawing after the script) and the KV
    cache's work and memory (its legends were cut off at the right edge, 2026-11-26). The step
    charts' legends go on top, a group a row, and both are as tall as each other."""
    at = open_page(f"pages/{page}.py", present="1", section=section)
    no_exception(at)
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    assert len(specs) == count and all(spec["width"] == width for spec in specs)
    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema import core

    schema = core.load_schema()  # sent unvalidated (elements.show_chart): valid all the same
    for spec in specs:
        validate_jsonschema({"data": {"name": "data"}} | spec, schema)
    titles = [spec["title"] for spec in specs]
    whole = open_page(f"pages/{page}.py")
    on_page = [json.loads(chart.proto.spec) for chart in whole.get("vega_lite_chart")]
    on_page = [spec for spec in on_page if spec.get("title") in titles]  # the same charts
    assert len(on_page) == count and not [spec for spec in on_page if "width" in spec]
    if page == "kv_cache":
        assert {spec["height"] for spec in specs} == {kv_cache.PRESENT_STEPS_HEIGHT}
        for spec, whole_spec in zip(specs, on_page, strict=True):
            legend = spec["layer"][0]["encoding"]["color"]["legend"]
            assert legend["orient"] == "top" and legend["columns"] == 1
            assert whole_spec["layer"][0]["encoding"]["color"]["legend"]["orient"] == "right"
