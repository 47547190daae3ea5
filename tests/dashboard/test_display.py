"""Tables, charts and controls: labelled frames, heatmap specs, link checking, the cache."""

import base64
import io
import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from attention import seeded_layer, worked_example
from dashboard import state
from dashboard.controls import Settings, head_options, nearest_heads
from dashboard.lessons import Variant, canonical, computed
from dashboard.links import check_link
from dashboard.render import charts
from dashboard.render.matrices import build_view, matrix_view
from dashboard.render.matrices import heatmap_spec as titled_spec
from dashboard.render.tables import (
    column_px,
    corner_title,
    format_array,
    format_number,
    long_form,
    number_table,
    texts_px,
    widest_printed,
)
from dashboard.text import unique_labels


def test_tables_unique_labels_number_repeats():
    assert unique_labels(["the", "cat", "the"]) == ["the#1", "cat", "the#2"]
    assert unique_labels(["a", "b"]) == ["a", "b"]


@pytest.mark.parametrize(
    "value, text",
    [
        (0.60379999, "0.6038"),
        (-0.00001, "0.0000"),
        (-1e9, "-1.000e+09"),
        (float("-inf"), "-inf"),
        (float("nan"), "NaN"),
        (3.0, "3.0000"),
    ],
)
def test_tables_format_number(value, text):
    assert format_number(value) == text


def test_tables_number_table_carries_numbers_at_full_precision():
    values = np.array([[0.123456789, 10.0, -2.5], [1e-7, 3.0, 100.0]])
    table = number_table(values, ["a", "b"], ["x", "y", "z"], corner_title("row", "col", ["x"]))
    assert table.column_names == ["row", "x", "y", "z"]
    assert all(pa.types.is_float64(table.schema.field(c).type) for c in ["x", "y", "z"])
    frame = table.to_pandas().set_index("row")
    assert frame.loc["a", "x"] == 0.123456789  # not '0.1235'
    assert frame.sort_values("z")["z"].tolist() == [-2.5, 100.0]  # sorts as numbers
    with pytest.raises(ValueError, match="does not fit"):
        build_view(torch.zeros(2, 2), ["a"], ["x", "y"], kind="score", row_title="query",
                   col_title="key")  # fmt: skip


def test_tables_number_table_keeps_minus_inf_and_a_csv_reads_it_back():
    """Only NaN is null: -inf is a number, which a CSV writes as -Infinity (as the grid's own
    export does) and pandas reads back."""
    values = np.array([[1.0, float("-inf")], [0.25, float("nan")]])
    table = number_table(values, ["a", "b"], ["a", "b"], corner_title("query", "key", ["a", "b"]))
    assert table.column("b").to_pylist() == [-math.inf, None]
    back = pd.read_csv(io.StringIO("query \\ key,a,b\na,1.0,-Infinity\nb,0.25,\n"), index_col=0)
    assert back.dtypes.tolist() == [np.float64, np.float64]
    assert back.loc["a", "b"] == -math.inf and math.isnan(back.loc["b", "b"])


def test_views_stage_tables_hold_the_true_numbers_and_grey_the_masked_ones():
    settings = Settings()
    view = build_view(
        torch.tensor([[0.5, float("-inf")], [0.1, 0.2]]), ["t0", "t1"], ["t0", "t1"],
        kind="score", row_title="query", col_title="key",
        blocked=torch.tensor([[False, True], [False, False]]), mark_table=True,
    )  # fmt: skip
    assert view.greyed.tolist() == [[False, True], [False, False]]
    table, config = view.arrow()
    assert table.column_names[0] == "query \\ key"  # no arrow, no clash with a token
    assert table.column("t1").to_pylist() == [-math.inf, pytest.approx(0.2)]
    assert config["t0"]["type_config"].get("format") is None  # the Styler prints
    plain = build_view(torch.tensor([[0.5, 0.25]]), ["t0"], ["t0", "t1"], kind="score",
                       row_title="query", col_title="key")  # fmt: skip
    assert plain.greyed is None and plain.arrow()[1]["t0"]["type_config"]["format"] == "%.4f"
    assert settings == Settings()  # unchanged


def test_views_every_table_prints_4_decimals_however_wide():
    """One rule: X, concat and output at d_model 256 print 4 decimals as the 6 x 6 tables do
    (they kept Streamlit's own display, which drops trailing zeros: 0.125 for 0.1250)."""
    torch.manual_seed(0)
    wide = build_view(torch.randn(64, 256), [f"t{i}" for i in range(64)],
                      [f"d{i}" for i in range(256)], kind="projection", row_title="token",
                      col_title="feature")  # fmt: skip
    config = wide.arrow()[1]
    formats = {config[f"d{i}"]["type_config"].get("format") for i in range(256)}
    assert formats == {"%.4f"}


def test_views_columns_fit_the_text_they_show():
    """Widths from the drawn text, glyph by glyph: "masked" (cut to "nasked") and Python's None
    (cut to "lone") are wider than six or four digits."""
    from dashboard.render.matrices import arrow_table
    from dashboard.render.tables import column_px, text_px

    assert text_px("masked") > text_px("0.1234") and text_px("None") > text_px("0.12")
    numbers = np.array([[np.nan, 0.5], [np.nan, 0.75]])  # a drill's blocked key: all None
    _, config = arrow_table(numbers, ["a", "b"], ["k0", "k1"], "row", "key")
    assert config["k0"]["width"] == column_px(["None"]) > column_px(["NaN", "k0"])
    assert config["k1"]["width"] == column_px(["0.7500"])
    assert column_px(["-0.6579"]) >= 42.6 + 8.5 + 5  # 42.6 px of text, measured in Chromium


def test_tables_long_form_keeps_masked_cells_off_the_scale():
    values = torch.tensor([[1.0, float("-inf")]]).double().numpy()
    long = long_form(values, ["q"], ["k0", "k1"], torch.tensor([[False, True]]))
    assert long["masked"].to_pylist() == [False, True]
    assert long["printed"].to_pylist() == ["1.0000", "masked: -inf"]
    assert all(math.isfinite(v) for v in long["value"].to_pylist())


def heatmap_spec(kind="score", numbers=False, size=3, shape=None):
    shape = shape or charts.layout(size, size)
    chart = charts.heatmap(
        kind=kind, row_title="query", col_title="key", shape=shape, numbers=numbers
    )
    return charts.to_spec(chart)


def test_charts_heatmap_tooltip_names_query_key_value():
    spec = heatmap_spec()
    tooltip = spec["layer"][0]["encoding"]["tooltip"]
    assert [t["title"] for t in tooltip] == ["query", "key", "value"]


def test_charts_heatmap_holds_no_data_and_sorts_by_the_numbers_the_data_carries():
    """The axes' order is the data's row and column numbers, not the order the browser holds
    the rows in (issue 42, item 9; tests/browser/test_browser_map_labels.py)."""
    spec = heatmap_spec()
    assert "datasets" not in spec and "data" not in spec
    y = spec["layer"][0]["encoding"]["y"]
    x = spec["layer"][0]["encoding"]["x"]
    assert y["field"] == "query" and y["sort"] == {"field": "row number", "op": "min"}
    assert x["sort"] == {"field": "column number", "op": "min"}


def test_charts_scores_diverge_around_zero_and_weights_are_fixed():
    scores = heatmap_spec("score")["layer"][0]["encoding"]["color"]["scale"]
    assert scores["domain"] == {"expr": "[-scale_extent[1], scale_extent[1]]"}
    assert scores["scheme"] == "blueorange"
    weights = heatmap_spec("weight")["layer"][0]["encoding"]["color"]["scale"]
    assert weights["domain"] == [0, 1] and weights["scheme"] == "blues"


def test_charts_masked_cells_are_grey_with_a_cross():
    spec = heatmap_spec()
    assert spec["layer"][0]["encoding"]["color"]["condition"]["value"] == charts.MASKED_COLOUR
    assert any(layer["mark"].get("text") == "×" for layer in spec["layer"])


def test_charts_numbers_in_cells_only_when_asked_and_small():
    def text_layers(spec):
        return [layer for layer in spec["layer"] if layer["encoding"].get("text")]

    assert len(text_layers(heatmap_spec(numbers=True))) == 1
    assert text_layers(heatmap_spec(numbers=False)) == []
    assert text_layers(heatmap_spec(numbers=True, size=11)) == []


def test_tables_heatmap_data_has_no_fake_rows_and_readable_columns():
    long = long_form(np.array([[0.5, -2.0]]), ["q"], ["k0", "k1"], bound=3.0,
                     names=("query", "key"))  # fmt: skip
    assert long.num_rows == 2  # one row per cell, nothing else: "Show data" lists these
    assert long.column_names == [
        "query", "key", "value", "printed", "masked", "row number", "column number",
        "colour scale ±",
    ]  # fmt: skip
    assert long["column number"].to_pylist() == [0, 1]  # the axes sort by these
    assert long["query"].to_pylist() == ["q", "q"] and long["key"].to_pylist() == ["k0", "k1"]
    assert long["colour scale ±"].to_pylist() == [3.0, 3.0]
    assert pa.types.is_dictionary(long.schema.field("colour scale ±").type)  # one byte per cell


def test_charts_symmetric_scale_comes_from_the_data_extent():
    spec = heatmap_spec("score")
    assert {"extent": "colour scale ±", "param": "scale_extent"} in spec["layer"][0]["transform"]
    assert "extent" not in json.dumps(heatmap_spec("weight"))


def test_charts_square_cells_for_small_grids_and_wide_matrices_stretch():
    small = charts.layout(6, 6)
    assert small.square and small.step == 34
    wide = charts.layout(64, 256)
    assert not wide.square and wide.step == 8
    spec = charts.to_spec(
        charts.heatmap(kind="projection", row_title="token", col_title="feature", shape=wide)
    )
    assert spec["width"] == "container" and spec["height"] == {"step": 8}


@pytest.mark.parametrize("T", [24, 40, 64])
def test_charts_every_t_by_t_map_is_square(T):
    shape = charts.layout(T, T)
    assert shape.square and shape.step * T <= charts.SQUARE_MAX


def test_charts_long_column_labels_turn_and_are_capped():
    words = charts.layout(8, 8, col_chars=len("extraordinarily"))
    assert not words.upright_x
    spec = charts.to_spec(charts.heatmap(kind="score", row_title="query", col_title="key",
                                         shape=words))  # fmt: skip
    x_axis = spec["layer"][0]["encoding"]["x"]["axis"]
    y_axis = spec["layer"][0]["encoding"]["y"]["axis"]
    assert x_axis["labelAngle"] == -90 and x_axis["labelLimit"] == charts.LABEL_LIMIT
    assert y_axis["labelLimit"] == charts.LABEL_LIMIT
    assert x_axis["labelOverlap"] is y_axis["labelOverlap"] is False  # each fits its 34 px cell
    assert charts.layout(6, 6, col_chars=2).upright_x  # t0 … t5 fit their cells


def axes_of(shape):
    encoding = charts.to_spec(
        charts.heatmap(kind="score", row_title="query", col_title="key", shape=shape)
    )["layer"][0]["encoding"]
    return encoding["x"]["axis"], encoding["y"]["axis"]


def test_charts_labels_that_fit_their_cells_are_all_drawn():
    """Presenter mode's 20 px labels in 28 px rows: Vega's greedy thinning dropped every other
    token (t1, t3, t5 unnamed on the projector). A label smaller than its cell is always drawn;
    only labels as large as their cells (T = 40) are thinned."""
    for shape in (charts.layout(6, 4, present="light", numbers=True), charts.layout(6, 6)):
        x_axis, y_axis = axes_of(shape)
        assert y_axis["labelFontSize"] < shape.step and y_axis["labelOverlap"] is False
        assert x_axis["labelOverlap"] is False
    x_axis, y_axis = axes_of(charts.layout(40, 40))  # 8 px labels (the least) in 8 px cells
    assert y_axis["labelFontSize"] >= charts.layout(40, 40).step
    assert x_axis["labelOverlap"] == y_axis["labelOverlap"] == "greedy"  # thinned, no overprint


def test_charts_first_row_label_is_centred_on_its_row():
    y_axis = heatmap_spec()["layer"][0]["encoding"]["y"]["axis"]
    assert y_axis["labelFlush"] is False and y_axis["labelBaseline"] == "middle"


def test_charts_small_cells_have_no_border():
    def stroke(shape):
        spec = charts.to_spec(charts.heatmap(kind="projection", row_title="token",
                                             col_title="feature", shape=shape))  # fmt: skip
        mark = spec["layer"][0]["mark"]
        return mark.get("strokeWidth", 0) if isinstance(mark, dict) else 0

    assert stroke(charts.layout(6, 6)) == 0.5
    assert stroke(charts.layout(64, 256)) == 0  # 3 px cells: a border would hide them
    assert stroke(charts.layout(64, 64)) == 0


def test_views_a_long_word_does_not_widen_the_label_column():
    word = "a" * 80
    view = build_view(torch.zeros(2, 2), [word, "b"], ["d0", "d1"], kind="projection",
                      row_title="token", col_title="feature")  # fmt: skip
    assert view.arrow()[1]["token"]["width"] <= 160


def test_views_a_long_word_widens_only_its_own_column():
    """A long token as a key widens its column (to a cap), not all sixteen: a 16 x 16 table
    with one long word stays narrow enough to fit a classroom screen."""
    keys = [f"t{i}" for i in range(15)] + ["extraordinarily_long_word"]
    view = build_view(torch.full((16, 16), -0.5), keys, keys, kind="score",
                      row_title="query", col_title="key")  # fmt: skip
    config = view.arrow()[1]
    widths = {k: config[k]["width"] for k in keys}
    assert widths["extraordinarily_long_word"] == 120
    assert set(widths[k] for k in keys[:15]) == {column_px(["-0.5000"])}


def test_charts_one_spec_serves_many_sizes():
    assert charts.layout(5, 6) == charts.layout(6, 7)


def test_tables_long_form_has_every_cell_of_a_large_matrix():
    labels = [f"t{i}" for i in range(64)]
    features = [f"d{i}" for i in range(256)]
    long = long_form(np.zeros((64, 256)), labels, features)
    assert long.num_rows == 64 * 256
    row = long.slice(257, 1).to_pylist()[0]
    assert [row["row"], row["column"]] == ["t1", "d1"]
    assert pa.types.is_dictionary(long.schema.field("row").type)  # each label sent once
    json.dumps(long.slice(0, 10).to_pylist())  # plain values, serialisable


def test_charts_dark_cells_get_white_numbers():
    weights = heatmap_spec("weight", numbers=True)["layer"][-1]["encoding"]["color"]
    assert weights["condition"]["test"] == "datum.value > 0.6"
    scores = heatmap_spec("score", numbers=True)["layer"][-1]["encoding"]["color"]
    assert scores["condition"]["test"] == "abs(datum.value) > 0.6 * scale_extent[1]"


def test_controls_head_options_are_divisors_up_to_16():
    assert head_options(8) == [1, 2, 4, 8]
    assert head_options(7) == [1, 7]
    assert head_options(17) == [1]
    assert head_options(256) == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("d_model, heads, fitted", [(8, 3, 2), (12, 5, 4), (12, 6, 6), (9, 2, 1)])
def test_controls_nearest_heads(d_model, heads, fitted):
    assert nearest_heads(d_model, heads) == fitted


def test_controls_check_link_accepts_good_values():
    good = {
        "T": "12",
        "d_model": "6",
        "heads": "3",
        "causal": "false",
        "seed": "5",
        "src": "sentence",
        "text": "hello",
        "pos": "true",
    }
    assert check_link(good) == ([], [])


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"T": "65"}, "T=65"),
        ({"T": "2.5"}, "T=2.5"),
        ({"d_model": "1"}, "d_model=1"),
        ({"d_model": "6", "heads": "4.5"}, "heads=4.5 is not a whole number from 1 to 16"),
        ({"seed": "-1"}, "seed=-1"),
        ({"text": "x" * 1001}, "only the first 1000"),
        ({"pos": "1"}, "must be true or false"),
    ],
)
def test_controls_check_link_explains_bad_values(params, fragment):
    messages, unknown = check_link(params)
    assert unknown == []
    assert any(fragment in m for m in messages), messages


def test_controls_check_link_reads_booleans_as_streamlit_does():
    assert check_link({"causal": "False", "pos": "TRUE"}) == ([], [])


def test_controls_check_link_says_which_heads_it_uses():
    # a count that does not divide d_model is no link problem: the sidebar says what is used
    assert check_link({"d_model": "7", "heads": "2"}) == ([], [])
    messages, _ = check_link({"heads": "0"}, used={"heads": 2})
    assert messages == ["The link's heads=0 is not a whole number from 1 to 16: using 2."]
    messages, _ = check_link({"T": "3.5"}, used={"T": 3})  # what the widget made of it
    assert messages == ["The link's T=3.5 is not a whole number from 1 to 64: using 3."]
    messages, _ = check_link({"T": "3"}, used={"T": 6}, repeated={"T": 2})
    assert messages == ["The link gives T 2 times: using 6."]


def test_controls_check_link_drops_unknown_keys():
    _, unknown = check_link({"utm_source": "mail"})
    assert unknown == ["utm_source"]


def test_controls_canonical_shares_cache_entries():
    a = Settings(source="worked", seq_len=10, d_model=64, seed=3)
    b = Settings(source="worked", seq_len=20, d_model=8, seed=9)
    assert canonical(a) == canonical(b)
    assert canonical(Settings(text="x")) == canonical(Settings(text="y"))


def test_controls_lesson_matches_the_package():
    result = computed(Settings(seq_len=5, d_model=12, n_heads=3, seed=4))
    from attention import random_embeddings

    with torch.no_grad():
        expected = seeded_layer(4, 12, 3)(random_embeddings(5, 12, 4).x, "causal")
    torch.testing.assert_close(result.trace.output, expected.output)
    assert result.labels == ["t0", "t1", "t2", "t3", "t4"]


def test_controls_lesson_is_cached_and_read_only():
    first = computed(Settings(seed=11))
    assert computed(Settings(seed=11)) is first
    with pytest.raises(RuntimeError, match=r"[Ii]nplace"):
        first.trace.weights.add_(1)


def test_controls_lesson_reports_bad_sentence_as_an_error():
    result = computed(Settings(source="sentence", text="  "))
    assert result.trace is None and "no tokens" in result.error


def test_controls_worked_example_with_edited_encodings():
    edited = ((1.0, 0.0), (0.0, 1.0), (2.0, -1.0))
    result = computed(Settings(source="worked"), Variant(encodings=edited))
    ex = worked_example(torch.tensor(edited))
    with torch.no_grad():
        expected = ex.layer(ex.embedded.x, "causal", mask_value=-1e9)
    torch.testing.assert_close(result.trace.output, expected.output)
    assert result.trace.mask_value == -1e9


def test_controls_padding_variant_blocks_trailing_keys():
    result = computed(Settings(seq_len=5, causal=False), Variant(n_padding=2))
    assert (result.trace.weights[..., 3:] == 0).all()
    torch.testing.assert_close(result.trace.weights.sum(-1), torch.ones(2, 5))


# Large heatmaps are one picture (issue 11 item 18: a 64 x 256 map was 16,384 marks to lay out)


def test_charts_scheme_colours_are_vegas_stops_interpolated_in_rgb():
    # blueorange's first, middle and last stops, and halfway between the first two
    at = charts.scheme_colours("score", np.array([0.0, 0.5, 1.0, 0.05]))
    assert at[:3].tolist() == [[0x13, 0x4B, 0x85], [0xF2, 0xF0, 0xEB], [0x99, 0x4A, 0x07]]
    assert at[3].tolist() == [round((0x13 + 0x2F) / 2), round((0x4B + 0x78) / 2), 0x9C]
    assert charts.scheme_colours("weight", np.array([1.0])).tolist() == [[0x0A, 0x4A, 0x90]]
    assert charts.scheme_colours("embedding", np.array([0.0])).tolist() == [[0x5B, 0x16, 0x67]]


def test_charts_cell_colours_use_the_symmetric_scale_and_grey_for_masked():
    values = np.array([[-2.0, 0.0], [2.0, 5.0]])
    masked = np.array([[False, False], [False, True]])
    rgb = charts.cell_colours(values, "score", 2.0, masked)
    assert rgb[0, 0].tolist() == [0x13, 0x4B, 0x85] and rgb[1, 0].tolist() == [0x99, 0x4A, 0x07]
    assert rgb[0, 1].tolist() == [0xF2, 0xF0, 0xEB]
    assert rgb[1, 1].tolist() == [0xA3, 0xA3, 0xA3]


def test_charts_only_large_grids_become_pictures():
    assert not charts.layout(32, 64).image and not charts.layout(6, 6).image
    assert charts.layout(64, 64).image and charts.layout(64, 256).image
    spec = heatmap_spec("weight", shape=charts.layout(64, 64))
    picture = spec["layer"][0]
    assert picture["mark"]["type"] == "image" and picture["mark"]["smooth"] is False
    assert "tooltip" not in json.dumps(spec)  # one picture: no per-cell marks to hover


def test_views_large_heatmap_is_a_png_of_every_cell_in_place():
    from PIL import Image

    T = 64
    torch.manual_seed(0)
    weights = torch.softmax(torch.randn(T, T), dim=-1)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
    labels = [f"t{i}" for i in range(T)]
    view = build_view(weights.masked_fill(blocked, 0.0), labels, labels, kind="weight",
                      row_title="query", col_title="key", blocked=blocked)  # fmt: skip
    data = view.cells.to_pydict()
    assert data["query"] == labels and data["key"] == labels  # the axes, in order
    url = data["image"][0]
    assert url.startswith("data:image/png;base64,") and data["image"][1:] == [None] * (T - 1)
    png = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    size = charts.layout(T, T).step  # px a side per cell, as drawn: row i is query i
    assert png.shape == (T * size, T * size, 3)
    expected = charts.cell_colours(view.values, "weight", None, blocked.numpy())
    assert (png[size // 2 :: size, 0::size] == expected).all()  # each cell's left edge
    centre = png[size // 2 :: size, size // 2 :: size]  # on the cross where masked
    assert (centre[blocked.numpy()] == 255).all()  # masked: crossed out in white
    corner = png[0::size, 1::size]  # beside the cross: the masked cells' flat grey
    assert (corner[blocked.numpy()] == [0xA3, 0xA3, 0xA3]).all()
    plain = build_view(weights, labels, labels, kind="weight", row_title="query",
                       col_title="key")  # fmt: skip
    url = plain.cells.to_pydict()["image"][0]  # nothing masked: one pixel per cell
    assert np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))).shape == (
        T, T, 3)  # fmt: skip
    assert view.cells.nbytes < 40_000  # a 64 x 64 long form was ~120 KB


@pytest.mark.parametrize("kind", ["score", "weight", "projection", "embedding"])
def test_charts_every_heatmap_layout_is_a_valid_vega_lite_spec(kind):
    """The app skips Altair's schema validation (to_spec's default); here every kind of layout
    is validated: small with numbers, square, wide, a picture, presenter mode."""
    shapes = [
        charts.layout(3, 3, cell=56),
        charts.layout(6, 6),
        charts.layout(40, 40),
        charts.layout(64, 256),
        charts.layout(64, 64),
        charts.layout(6, 6, present="dark"),
    ]
    for shape in shapes:
        chart = charts.heatmap(kind=kind, row_title="query", col_title="key", shape=shape,
                               numbers=True, title="t")  # fmt: skip
        assert charts.to_spec(chart, validate=True) == charts.to_spec(chart)


def test_matrix_view_is_keyed_on_the_numbers_not_a_name():
    """Two matrices with the same labels and options are two pictures (drill 3's heatmap once
    showed drill 1's numbers: both rows were named "s′ row 3" and the cache trusted the name)."""
    first = torch.tensor([[0.25, -0.5]])
    second = torch.tensor([[1.0, 2.0]])
    options = dict(kind="score", row_title="row", col_title="key")
    a = matrix_view(("s′ row 3",), ("t0", "t1"), _matrix=first, **options)
    b = matrix_view(("s′ row 3",), ("t0", "t1"), _matrix=second, **options)
    assert a.values.tolist() == [[0.25, -0.5]] and b.values.tolist() == [[1.0, 2.0]]
    blocked = matrix_view(
        ("s′ row 3",), ("t0", "t1"), _matrix=second, _blocked=torch.tensor([[False, True]]),
        **options,
    )  # fmt: skip
    assert blocked is not b  # the same numbers, other cells blocked: another picture


def test_shape_text_names_kv_heads_h_unless_grouped():
    """Lesson 1 showed K as (H_kv, T, d_k) though no head is shared; a grouped trace says H_kv."""
    from attention import STAGES, random_embeddings, seeded_layer
    from dashboard.render.matrices import shape_text

    k_stage = next(s for s in STAGES if s.name == "k")
    x = random_embeddings(5, 8, seed=0).x
    plain = seeded_layer(0, d_model=8, n_heads=4)(x)
    assert shape_text(k_stage, plain) == "(H, T, d_k) = (4, 5, 2)"
    grouped = seeded_layer(0, d_model=8, n_heads=4, n_kv_heads=2)(x)
    assert shape_text(k_stage, grouped) == "(H_kv, T, d_k) = (2, 5, 2)"


def test_charts_a_map_fitted_to_the_screen_resizes_its_labels():
    """Presenter mode shrinks a map's cells to fit the screen (lesson 10's caches: 11 px cells):
    the labels follow the drawn cells, not the layout's (20 px labels overprinted there)."""
    shape = charts.layout(6, 4, present="light", numbers=True)
    spec = charts.to_spec(
        charts.heatmap(
            kind="projection", row_title="cached token", col_title="feature", shape=shape
        )
    )
    fitted = charts.refit_labels(spec, 11)["layer"][0]["encoding"]
    assert (
        fitted["y"]["axis"]["labelFontSize"] == 10 and fitted["y"]["axis"]["labelOverlap"] is False
    )
    assert fitted["x"]["axis"]["labelOverlap"] == "greedy"  # upright: its width is not known here
    tiny = charts.refit_labels(spec, 8)["layer"][0]["encoding"]
    assert tiny["y"]["axis"]["labelFontSize"] == 8 and tiny["y"]["axis"]["labelOverlap"] == "greedy"


def test_charts_whole_number_steps_get_whole_number_ticks():
    """Lesson 10's work per decode step showed ticks 0.2, 0.4, ... of a step."""
    steps = pd.DataFrame({"step": [0, 1, 2, 0, 1, 2], "work": [1.0, 2, 3, 1, 4, 9],
                          "decoding": ["cached"] * 3 + ["recomputed"] * 3})  # fmt: skip
    x = charts.to_spec(charts.lines(steps, x="step", y="work", group="decoding", title="t"))
    x_axis = x["layer"][0]["encoding"]["x"]["axis"]
    assert x_axis["tickMinStep"] == 1 and x_axis["format"] == "d"
    scales = pd.DataFrame({"scale": [0.5, 1.0], "work": [1.0, 2], "decoding": ["a", "a"]})
    x = charts.to_spec(charts.lines(scales, x="scale", y="work", group="decoding", title="t"))
    assert "axis" not in x["layer"][0]["encoding"]["x"]  # a real-valued x keeps Vega's ticks


def test_special_numbers_print_and_measure_as_each_alone_in_a_causal_map():
    """format_array prints each distinct special value once for all its cells (half a causal
    score map is -inf) and widest_printed measures them once: both as if each number were
    printed and measured alone."""
    rng = np.random.default_rng(3)
    values = rng.standard_normal((12, 9)) * 10.0 ** rng.integers(-5, 7, size=(12, 9))
    values[np.triu_indices(12, 1, 9)] = -math.inf
    values[0, :5] = [math.nan, -0.0, -1e-5, 3e6, math.inf]
    printed = format_array(values)
    assert printed.tolist() == [[format_number(v) for v in row] for row in values.tolist()]
    alone = [[texts_px(np.array([format_number(v)]))[0] for v in row] for row in values.tolist()]
    assert widest_printed(values).tolist() == np.max(alone, axis=0).tolist()


def test_a_stage_view_keeps_its_numbers_not_its_table_or_heatmap_data():
    """A cached view is its numbers and what to make the rest from: the table, its column
    settings and the heatmap's data are made when asked for (blocks records them once)."""
    view = matrix_view(
        tuple(f"t{i}" for i in range(64)), tuple(f"d{i}" for i in range(256)),
        _matrix=torch.randn(64, 256), kind="projection", row_title="token", col_title="feature",
    )  # fmt: skip
    table, config = view.arrow()
    assert table.num_rows == 64 and len(config) == 257
    assert view.picture and "image" in view.cells.column_names  # 16,384 cells: a picture
    assert state.nbytes(view) < 1.25 * view.values.nbytes  # 131 KB of float64, 320 labels


def test_views_a_pictures_show_data_lists_the_matrix_it_paints():
    """Issue 42, item 11: the chart toolbar's "Show data" on a large heatmap listed the query,
    the key and the picture's "data:image/png…" address. Its data now carries the numbers as the
    table has them: a row per query, a column per key, masked cells empty."""
    T = 64
    torch.manual_seed(1)
    scores = torch.randn(T, T)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
    labels = [f"{i}:t" for i in range(T)]
    view = build_view(scores.masked_fill(blocked, float("-inf")), labels, labels, kind="score",
                      row_title="query", col_title="key", blocked=blocked)  # fmt: skip
    assert view.picture
    data = view.cells.to_pydict()
    assert data["query"] == labels
    matrix = np.array([data[label] for label in labels], dtype=np.float64).T  # rows: queries
    shown = ~blocked.numpy()
    np.testing.assert_allclose(matrix[shown], scores.numpy()[shown], rtol=1e-6)
    assert np.isnan(matrix[blocked.numpy()]).all()  # None: masked, left empty
    assert view.cells.nbytes < 60_000


@pytest.mark.parametrize("T", [1, 7, 24, 64])
def test_charts_a_wide_matrix_thins_its_column_labels(T):
    """Lesson 14's stream, T x 128 as wide as the page (6 px a column): every feature's label
    drawn overprinted into a smear at T = 1 and 7; its columns' width is not known in the spec,
    so Vega thins them."""
    shape = charts.layout(T, 128, col_chars=3)
    assert not shape.square
    spec = charts.to_spec(charts.heatmap(kind="projection", row_title="position",
                                         col_title="feature", shape=shape))  # fmt: skip
    x_axes = [layer["encoding"]["x"]["axis"] for layer in spec["layer"]
              if "axis" in layer.get("encoding", {}).get("x", {})]  # fmt: skip
    assert x_axes and all(axis["labelOverlap"] == "greedy" for axis in x_axes)


@pytest.mark.parametrize(
    ("kind", "numbers", "size", "present", "legend"),
    [("weight", False, 6, None, None), ("score", True, 3, None, "score"),
     ("weight", False, 64, None, None), ("weight", False, 8, "dark", None)],
)  # fmt: skip
def test_heatmap_spec_with_a_title_is_altairs_own_for_that_title(
    kind, numbers, size, present, legend
):
    """The titled spec is the untitled layout built once with its title set: what Altair builds
    for that title, at small, numbered, picture (64 x 64) and presenter layouts; two titles of
    one layout share the build and differ in the title alone."""
    shape = charts.layout(size, size, numbers=numbers, present=present)
    for title in ("Layer 0, head 1", "L1 H0: previous token (93 % of its best)", ""):
        built = charts.to_spec(
            charts.heatmap(
                kind=kind,
                row_title="query",
                col_title="key",
                shape=shape,
                numbers=numbers,
                title=title,
                legend=legend,
            )
        )
        ours = titled_spec(kind, "query", "key", shape, numbers, title, legend)
        assert ours == built
    first = titled_spec(kind, "query", "key", shape, numbers, "one", legend)
    second = titled_spec(kind, "query", "key", shape, numbers, "two", legend)
    assert {k for k in first if first[k] != second[k]} == {"title"}
    assert first["layer"] is second["layer"]  # one build, shared
