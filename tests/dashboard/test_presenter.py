"""Presenter mode (?present=1): one stage at a time, large charts with their numbers, dark text."""

import json

from conftest import no_exception, open_page

from dashboard.render import charts


def stage_headings(at) -> list[str]:
    return [m.value.split("\n")[0] for m in at.markdown if m.value.startswith("### ")]


def test_presenter_shows_one_stage_and_steps_through_them():
    at = open_page("pages/step_by_step.py", present="1")
    no_exception(at)
    assert len(at.get("vega_lite_chart")) == 1
    assert stage_headings(at) == ["### 1. Input X"]
    at.button(key="stage_step_next").click().run()
    assert stage_headings(at)[0].startswith("### 2. Queries Q")
    at.button(key="stage_step_prev").click().run()
    assert stage_headings(at) == ["### 1. Input X"]
    assert at.button(key="stage_step_prev").disabled


def test_presenter_link_is_not_called_unknown_and_stays_in_the_address():
    at = open_page("pages/step_by_step.py", present="1")
    assert not [w for w in at.sidebar.warning if "present" in w.value]
    assert at.query_params.get("present") == "1"


def test_presenter_charts_print_numbers_in_large_cells_with_readable_axes():
    at = open_page("pages/step_by_step.py", present="1")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    axis = spec["config"]["axis"]
    assert axis["labelFontSize"] == charts.PRESENT_FONT > charts.FONT_SIZE
    assert axis["labelColor"] == charts.INK["light"]  # not the theme's 3.6:1 grey
    assert any(layer["encoding"].get("text") for layer in spec["layer"])  # numbers in cells
    assert spec["height"]["step"] >= 56


def test_presenter_worked_example_steps_and_leaving_restores_every_stage():
    at = open_page("pages/worked_example.py", present="1")
    no_exception(at)
    assert len(at.get("vega_lite_chart")) == 1
    at.button(key="stage_worked_leave").click().run()
    assert len(at.get("vega_lite_chart")) == 9


def test_without_presenter_every_stage_is_shown():
    at = open_page("pages/step_by_step.py")
    assert len(stage_headings(at)) == 11
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["config"]["axis"]["labelFontSize"] == charts.FONT_SIZE
