"""Lesson 4's charts: histograms on a number line, series told apart without colour, τ marked."""

import numpy as np
import pytest

from attention.display import charts
from attention.display.scaling_views import histogram_counts, scale_marks


def counts():
    rng = np.random.default_rng(0)
    return histogram_counts(
        {"d_k = 4": rng.normal(0, 2, 500), "d_k = 16": rng.normal(0, 4, 500)}, "q·k"
    )


def test_lesson4_histogram_bins_are_symmetric_around_zero():
    frame = counts()
    edges = frame.loc[frame["d_k"] == "d_k = 4", "q·k"].to_numpy()
    assert edges[0] == -edges[-1]
    assert np.isclose(edges, 0.0).any()  # 0 is a bin edge, so no bin straddles it
    assert frame.loc[frame["d_k"] == "d_k = 4", "count"].iloc[:-1].sum() == 500


def test_lesson4_histogram_axis_is_a_number_line_not_bin_edges():
    spec = charts.histogram(counts(), x="q·k", group="d_k", title="q·k").to_dict()
    x = spec["encoding"]["x"]
    assert "bin" not in x and x["type"] == "quantitative"  # ticks at round values, 0 among them
    low, high = x["scale"]["domain"]
    assert low == -high and x["scale"]["nice"] is True


def test_lesson4_histograms_are_outlines_with_a_dash_per_d_k():
    spec = charts.histogram(counts(), x="q·k", group="d_k", title="q·k").to_dict()
    assert spec["mark"]["type"] == "line" and spec["mark"]["interpolate"] == "step-after"
    dashes = spec["encoding"]["strokeDash"]["scale"]["range"]
    assert len({tuple(d) for d in dashes}) == 2  # every d_k its own dash, not only a colour


def test_lesson4_series_colours_are_colour_blind_safe_and_not_black():
    assert charts.SERIES_COLOURS == ["#0072B2", "#E69F00", "#009E73", "#CC79A7"]  # Okabe-Ito


@pytest.fixture
def curves():
    import pandas as pd

    return pd.DataFrame(
        {"scale": [0.1, 1.0] * 2, "value": [0.2, 0.8, 0.9, 0.1],
         "quantity": ["max weight"] * 2 + ["gradient size"] * 2}
    )  # fmt: skip


def test_lesson4_across_scales_lines_differ_by_dash_and_shape(curves):
    spec = charts.lines(curves, x="scale", y="value", group="quantity", title="t").to_dict()
    encoding = spec["layer"][0]["encoding"]
    assert (
        encoding["strokeDash"]["scale"]["range"][0] != encoding["strokeDash"]["scale"]["range"][1]
    )
    assert encoding["shape"]["scale"]["range"] == ["circle", "square"]


def test_lesson4_chosen_temperature_is_marked():
    marks = scale_marks(64, 0.5)
    assert marks["chosen: × 1/(τ√d_k), τ = 0.5"] == pytest.approx(0.25)
    assert "× 1/√d_k = chosen (τ = 1)" in scale_marks(64, 1.0)
