"""benchmarks/floor_app.py, the bare page `browser_timing.py --floor` measures the lesson
against: it must draw what the lesson draws at the defaults (11 heatmaps, and 11 tables with
?tables=1) and follow the same "Sequence length T" slider, or the floor it reports means
nothing."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

FLOOR_APP = Path(__file__).resolve().parents[2] / "benchmarks" / "floor_app.py"


def test_floor_app_draws_the_lessons_charts_and_follows_its_slider() -> None:
    at = AppTest.from_file(str(FLOOR_APP), default_timeout=30).run()
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 11 and len(at.dataframe) == 0
    slider = next(s for s in at.sidebar.slider if s.label == "Sequence length T")
    assert slider.value == 6  # the lesson's default
    slider.set_value(7).run()
    assert not at.exception


def test_floor_app_with_tables_adds_one_beside_each_chart() -> None:
    at = AppTest.from_file(str(FLOOR_APP), default_timeout=30)
    at.query_params["tables"] = "1"
    at.run()
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 11 and len(at.dataframe) == 11
    assert all(frame.value.shape[0] == 6 for frame in at.dataframe)
    next(s for s in at.sidebar.slider if s.label == "Sequence length T").set_value(7).run()
    assert all(frame.value.shape[0] == 7 for frame in at.dataframe)
