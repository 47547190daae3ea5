"""Lesson 4's charts: histograms on a number line, series told apart without colour, τ marked."""

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.render import charts
from dashboard.views.why_sqrt_dk import histogram_counts, mark_words, scale_marks


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


# Machado, Oliveira and Fernandes (2009): full dichromacy as a matrix on linear RGB.
DICHROMACY = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}  # fmt: skip


def seen_as_lab(colour: str, vision: str) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour as someone with `vision` sees it."""
    srgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(np.array(DICHROMACY[vision]) @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ linear / [0.95047, 1.0, 1.08883]  # fmt: skip
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def smallest_difference(colours: list[str], vision: str) -> float:
    """The smallest colour difference (CIE ΔE 1976) between any two of the colours."""
    seen = [seen_as_lab(c, vision) for c in colours]
    return min(
        float(np.linalg.norm(seen[a] - seen[b]))
        for a in range(len(seen))
        for b in range(a + 1, len(seen))
    )


@pytest.mark.parametrize("vision", DICHROMACY)
def test_lesson4_series_colours_stay_apart_for_colour_blind_eyes(vision):
    """Every pair of series colours differs by ΔE >= 15 even to a dichromat (Vega's default
    category10 fails this: its orange and green are 4.6 apart under protanopia)."""
    assert smallest_difference(charts.SERIES_COLOURS, vision) >= 15
    assert smallest_difference(["#1f77b4", "#ff7f0e", "#2ca02c"], "protanopia") < 15


def test_lesson4_series_colours_are_not_near_black():
    """Black (or nearly) vanishes in the dark theme: every colour keeps a lightness >= 40."""
    assert all(seen_as_lab(c, vision)[0] >= 40 for c in charts.SERIES_COLOURS
               for vision in DICHROMACY)  # fmt: skip


def test_lesson4_histograms_of_four_d_k_each_have_their_colour_and_dash():
    rng = np.random.default_rng(0)
    groups = {f"d_k = {d}": rng.normal(0, d**0.5, 400) for d in (1, 16, 64, 256)}
    spec = charts.histogram(histogram_counts(groups, "q·k"), x="q·k", group="d_k",
                            title="q·k").to_dict()  # fmt: skip
    colours = spec["encoding"]["color"]["scale"]["range"]
    dashes = spec["encoding"]["strokeDash"]["scale"]["range"]
    assert colours == charts.SERIES_COLOURS and len({tuple(d) for d in dashes}) == 4


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


def test_lesson4_chosen_temperature_is_drawn_on_the_curves():
    """The chosen τ's scale is a rule on the across-scales chart, labelled, at 1/(τ√d_k)."""
    from dashboard.views.why_sqrt_dk import saturation_frames

    _, _, curves = saturation_frames(8, 64, 0.5, 0)
    spec = charts.lines(curves, x="scale", y="value", group="quantity", title="t",
                        marks=scale_marks(64, 0.5)).to_dict()  # fmt: skip
    rules = [layer for layer in spec["layer"] if "rule" in str(layer.get("mark"))]
    drawn = {
        row["mark"]: row["at"] for rule in rules for row in spec["datasets"][rule["data"]["name"]]
    }
    assert drawn["τ = 0.5"] == pytest.approx(0.25)
    assert drawn["× 1/√d_k"] == pytest.approx(1 / 8)


def test_lesson4_chosen_temperature_is_marked():
    marks = scale_marks(64, 0.5)
    assert marks["τ = 0.5"] == pytest.approx(0.25)
    assert list(scale_marks(64, 1.0)) == ["× 1", "× 1/√d_k"]  # τ = 1 is the usual scale
    assert "your τ = 1" in mark_words(64, 1.0) and "τ = 0.5 is your choice" in mark_words(64, 0.5)


def test_lesson4_rule_labels_are_short_enough_not_to_run_into_the_next_rule():
    """The labels sit beside their rules on the across-scales chart; a long one ('× 1/√d_k =
    chosen (τ = 1)', 25 characters, about 170 px) ran across the 'no scaling' rule and its label.
    Each label is at most 12 characters (about 80 px of 12 px text); the legend under the chart
    says what each one is."""
    for d_k in (1, 4, 64, 512, 1024):
        for temperature in (0.01, 0.5, 1.0, 10.0):
            marks = scale_marks(d_k, temperature)
            assert all(len(label) <= 12 for label in marks), list(marks)
            assert len(set(marks)) == len(marks)


def test_lesson4_entropy_is_normalised_by_the_number_of_keys_not_the_sidebar_t():
    from dashboard.views.why_sqrt_dk import saturation_frames

    _, _, curves = saturation_frames(8, 64, 1.0, 0)
    names = set(curves["quantity"])
    assert not any("log T" in name for name in names)
    assert any("log 8" in name and "8 keys" in name for name in names)


def test_lesson4_rule_labels_sit_above_the_plot_not_over_the_curves():
    """Issue 17 item 17: the rule labels were drawn inside the plot, over the curves; each now
    has its own line above the plot area (a negative y in pixels)."""
    from dashboard.render import charts

    frame = pd.DataFrame({"scale": [0.01, 1.0], "value": [0.0, 1.0], "quantity": ["a", "a"]})
    spec = charts.lines(
        frame, x="scale", y="value", group="quantity", title="t",
        marks={"× 1": 1.0, "× 1/√d_k": 0.1},
    ).to_dict()  # fmt: skip
    (text,) = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "text"]
    y = text["encoding"]["y"]
    assert (y["field"], y["scale"], y["axis"]) == ("above", None, None)  # pixels, no axis
    rows = spec["datasets"][text["data"]["name"]]
    ys = [row["above"] for row in rows]
    assert [row["mark"] for row in rows] == ["× 1", "× 1/√d_k"]
    assert len(ys) == 2 and all(y < 0 for y in ys) and len(set(ys)) == 2


def test_lesson4_saturation_specs_built_once_equal_a_fresh_build():
    """The across-scales chart and the softmax rows' bars are built once by Altair and take
    each setting's title, curves and marks with charts.with_data: the spec a student gets
    equals the one Altair builds for that setting (data names aside)."""
    from dashboard.views.why_sqrt_dk import bars_spec, curves_spec, saturation_frames

    weights, _, curves = saturation_frames(8, 64, 0.5, 0)
    title, marks = "Across scales (1/√d_k = 0.125)", scale_marks(64, 0.5)
    fresh = charts.to_spec(charts.lines(curves, x="scale", y="value", group="quantity",
                                        log_x=True, title=title, marks=marks))  # fmt: skip
    kept = charts.with_data(curves_spec(tuple(dict.fromkeys(curves["quantity"]))), title,
                            curves=curves, marks=charts.mark_rows(marks))  # fmt: skip
    assert (kept["title"], kept["description"]) == (fresh["title"], fresh["description"])
    assert charts.TITLE not in json.dumps(kept, default=str)
    assert [(layer["mark"], layer["encoding"]) for layer in kept["layer"]] == [
        (layer["mark"], layer["encoding"]) for layer in fresh["layer"]
    ]
    rules = next(layer for layer in fresh["layer"] if layer["mark"]["type"] == "rule")
    assert kept["datasets"]["marks"] == fresh["datasets"][rules["data"]["name"]]
    assert kept["datasets"]["curves"] is curves and kept["data"] == {"name": "curves"}
    # the curves' layer takes the top level's data: Altair's placeholder "empty" is gone
    assert "data" not in kept["layer"][0] and "empty" not in kept["datasets"]

    case = "× 1/√d_k"
    rows = weights[weights["case"] == case].reset_index(drop=True)
    fresh = charts.to_spec(charts.bars(rows, x="key", y="weight", title=case, y_domain=[0, 1]))
    kept = charts.with_data(bars_spec(None, None), case)
    assert (kept["title"], kept["description"]) == (fresh["title"], fresh["description"])
    assert kept["mark"] == fresh["mark"]
    assert kept["encoding"]["y"] == fresh["encoding"]["y"]
    assert list(rows["key"]) == sorted(rows["key"], key=lambda k: int(k[1:]))  # sent in order
