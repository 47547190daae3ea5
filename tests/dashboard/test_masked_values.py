"""Masked cells show and export their true values (issue 17, items 3 and 5): a masked weight is
0.0000 (greyed, crossed out in the heatmap), a masked score -inf; every export writes the same
numbers, so weights @ V from any of them is the page's output, never NaN."""

import base64
import io
import json
import math
import re
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch
from conftest import no_exception, open_page, table
from PIL import Image

from dashboard.controls import Settings
from dashboard.exports import tables_zip, trace_json
from dashboard.lessons import computed
from dashboard.render.blocks import PICTURE_NOTE, TABLE_NOTE
from dashboard.render.matrices import GREYED_TEXT


def display_text(element) -> pd.DataFrame:
    """What a styled table prints in each cell (its pandas Styler's display values), indexed by
    its row labels."""
    styler = element.proto.arrow_data.styler
    assert styler.display_values, "not a styled table"
    frame = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    return frame.set_index(frame.columns[0])


def greyed_cells(element) -> set[tuple[int, int]]:
    """The (row, column) of every cell the table's CSS greys (column 0 is the first number)."""
    styles = element.proto.arrow_data.styler.styles
    greyed = set()
    for rule in styles.split("}"):
        if GREYED_TEXT in rule:
            for row, col in re.findall(r"row(\d+)_col(\d+)", rule):
                greyed.add((int(row), int(col) - 1))
    return greyed


@pytest.fixture(scope="module")
def step_page():
    at = open_page("pages/step_by_step.py")
    no_exception(at)
    return at


def test_masked_weights_table_holds_and_prints_0_in_grey(step_page):
    weights = step_page.dataframe[7]
    values, text = table(weights), display_text(weights)
    causal = np.triu(np.ones((6, 6), dtype=bool), 1)
    assert (values.to_numpy()[causal] == 0.0).all()  # the softmax's own exact 0
    assert (text.to_numpy()[causal] == "0.0000").all()
    assert not values.isna().any().any()
    assert greyed_cells(weights) == set(map(tuple, np.argwhere(causal).tolist()))
    assert text.iloc[5, 0] == f"{values.iloc[5, 0]:.4f}"  # the others print as before


def test_masked_scores_table_holds_minus_inf_and_prints_it(step_page):
    masked = step_page.dataframe[6]
    values, text = table(masked), display_text(masked)
    assert values.iloc[0, 1] == -math.inf and text.iloc[0, 1] == "-inf"
    assert (0, 1) in greyed_cells(masked) and (1, 0) not in greyed_cells(masked)


def test_masked_table_columns_fit_what_they_print(step_page):
    """A styled table's columns carry no format of their own (the grid lets a column format
    win over the Styler's text) and are as wide as their widest printed text."""
    from dashboard.render.tables import column_px

    weights = step_page.dataframe[7]
    config = json.loads(weights.proto.columns)
    text = display_text(weights)
    for column in text.columns:
        assert "format" not in config[column].get("type_config", {})
        assert config[column]["width"] >= column_px([column, *text[column]])


def test_masked_weights_times_v_from_the_tables_is_the_page_output(step_page):
    """What the grid's CSV export writes is what the table holds: weights @ V from the shown
    tables (head 0) equals the page's own per-head output, with no NaN (lesson 3's failure)."""
    weights = table(step_page.dataframe[7]).to_numpy()
    v = table(step_page.dataframe[3]).to_numpy()
    heads = table(step_page.dataframe[8]).to_numpy()
    assert not np.isnan(weights @ v).any()
    np.testing.assert_allclose(weights @ v, heads, rtol=1e-5, atol=1e-6)


def test_masked_worked_example_weights_print_0_0000_in_the_masked_triangle():
    """Lesson 5 reproduces StatQuest's printed table: 0.0000 where the mask blocks (the -1e9
    fill gives an exact 0), as every tutorial prints it, not a word."""
    at = open_page("pages/worked_example.py")
    no_exception(at)
    shown = [e for e in at.dataframe if e.proto.arrow_data.styler.display_values]
    weights = [e for e in shown if (table(e).to_numpy() <= 1.0).all()]
    assert weights, "no styled weights table on lesson 5"
    text = display_text(weights[0]).to_numpy()
    assert text.shape == (3, 3)
    blocked = np.triu(np.ones((3, 3), dtype=bool), 1)
    assert (text[blocked] == "0.0000").all(), text
    assert (table(weights[0]).to_numpy()[blocked] == 0.0).all()


def test_masked_exports_share_one_convention():
    """The zip's CSVs and the JSON trace: weights 0.0, masked scores -Infinity, which pandas
    reads as -inf from the CSV and float() from the JSON's string; A @ V from the CSVs is the
    per-head output."""
    trace_lesson = computed(Settings(causal=True))
    trace = trace_lesson.trace
    archive = zipfile.ZipFile(io.BytesIO(tables_zip(trace_lesson)))
    raw = archive.read("masked_head0.csv").decode()
    assert "-Infinity" in raw and "-inf" not in raw and "nan" not in raw.lower()
    masked = pd.read_csv(io.StringIO(raw), index_col=0)
    assert masked.iloc[0, 1] == -math.inf
    read = {name: pd.read_csv(io.BytesIO(archive.read(f"{name}_head0.csv")), index_col=0)
            for name in ("weights", "v", "heads")}  # fmt: skip
    assert read["weights"].iloc[0, 1] == 0.0
    product = read["weights"].to_numpy() @ read["v"].to_numpy()
    np.testing.assert_allclose(product, read["heads"].to_numpy(), rtol=1e-5, atol=1e-6)
    assert "README.txt" in archive.namelist()
    data = json.loads(trace_json(trace_lesson), parse_constant=lambda t: 1 / 0)  # strict
    assert data["stages"]["masked"][0][0][1] == "-Infinity" and data["mask_value"] == "-Infinity"
    assert data["stages"]["weights"][0][0][1] == 0.0
    back = torch.tensor(np.array(data["stages"]["masked"], dtype=float))
    assert torch.equal(back, trace.masked.double())
    assert "JSON.parse" in data["schema"]["infinity"]


def test_masked_json_refuses_a_nan_it_would_hide():
    from dashboard.exports import json_numbers

    assert json_numbers(torch.tensor([0.5, -math.inf])) == [0.5, "-Infinity"]
    with pytest.raises(ValueError, match="nan"):
        json_numbers(torch.tensor([math.nan]))


def picture(spec_element) -> np.ndarray:
    """A picture heatmap's PNG, as an (h, w, 3) array."""
    data = pa.ipc.open_stream(spec_element.proto.data.data).read_all().to_pydict()
    url = data["image"][0]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))


def chart(at, words: str):
    """The chart whose accessible name has `words`."""
    return next(
        c for c in at.get("vega_lite_chart") if words in json.loads(c.proto.spec)["description"]
    )


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


@pytest.mark.parametrize(
    "page, start",
    [("pages/kv_cache.py", "under a window"), ("pages/at_scale.py", "FlashAttention's tiles")],
)
def test_masked_picture_without_a_table_does_not_point_to_one(page, start):
    at = open_page(page, T="64")
    no_exception(at)
    assert "image" in json.dumps(json.loads(chart(at, start).proto.spec)["layer"][0]["mark"])
    notes = [c for c in captions(at) if PICTURE_NOTE in c]
    assert notes, captions(at)
    assert not any(TABLE_NOTE in c for c in captions(at))


def test_masked_picture_beside_its_table_says_the_table_has_the_numbers():
    at = open_page("pages/step_by_step.py", T="64")
    no_exception(at)
    assert sum(TABLE_NOTE in c for c in captions(at)) >= 4  # the four T x T stages at least


@pytest.mark.parametrize(
    "page, start",
    [("pages/kv_cache.py", "under a window"), ("pages/at_scale.py", "FlashAttention's tiles")],
)
def test_masked_picture_crosses_out_the_masked_cells(page, start):
    """Lessons 10 and 11 at T = 64 (pictures, causal): a masked cell is a grey square crossed by
    white diagonals, as the small maps mark them with "×"; an allowed cell has no white."""
    at = open_page(page, T="64")
    no_exception(at)
    png = picture(chart(at, start))
    T = 64
    size = png.shape[0] // T
    assert png.shape == (T * size, T * size, 3) and size >= 3
    cell = png[0:size, size : 2 * size]  # query 0, key 1: masked under the causal mask
    white = (cell == 255).all(axis=-1)
    diagonal = np.eye(size, dtype=bool)
    assert white[diagonal].all() and white[diagonal[:, ::-1]].all()
    grey = cell[~(diagonal | diagonal[:, ::-1])]
    assert (grey == [0xA3, 0xA3, 0xA3]).all()
    allowed = png[size : 2 * size, 0:size]  # query 1, key 0
    assert not (allowed == 255).all(axis=-1).any()
