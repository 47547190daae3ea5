"""A labelled matrix made ready to show: its Arrow table with column settings, its heatmap's
cells and its Vega-Lite spec (StageView).

The expensive part of a rerun is building tables and chart specs, so each stage view is cached
on the lesson's key (plain values) plus stage and head: moving the head selector or the cell
picker reruns the page but rebuilds nothing it has shown before.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import streamlit as st

from attention import STAGES, AttentionTrace, Stage
from attention.explain import allowed_matrix
from dashboard import state
from dashboard.lessons import Lesson
from dashboard.render import charts
from dashboard.render.presenter import presenter_theme
from dashboard.render.tables import (
    DIGITS,
    corner_title,
    feature_labels,
    format_array,
    format_number,
    image_form,
    long_form,
    number_table,
)

STAGE_BY_NAME = {stage.name: stage for stage in STAGES}


FORMATTED_COLUMNS = 64  # tables up to this wide get 4 fixed decimals (every T x T table)


LABEL_WIDTH = 160  # px: the pinned row labels (tokens) never take more


VECTOR_LABEL_WIDTH = 240  # px: a vector table's rows are short phrases ("q_1 (cat)")


MASKED_STAGES = ("masked", "weights")  # stages where blocked cells are shown as masked


@dataclass(frozen=True, eq=False)
class StageView:
    """One stage of one head, ready to show."""

    stage: Stage | None
    values: np.ndarray  # the numbers shown, float64
    table: pa.Table  # the numbers (float64, masked cells null), labels first, ready to send
    table_config: dict  # its column settings: 4 decimals on screen
    cells: pa.Table  # long form, one row per cell: the heatmap's data
    spec: dict  # the heatmap's Vega-Lite spec, shared by every matrix of its shape and kind
    shape: str  # "(H, T, T) = (2, 6, 6)"
    placeholder: str | None = None  # what the table shows in masked (null) cells
    name: str = ""  # what the matrix is ("Queries Q"), for its accessible name
    grid: str = ""  # "heatmap, query down, key across"


def shape_text(stage: Stage, trace: AttentionTrace) -> str:
    """The stage's shape with named dimensions and their sizes."""
    sizes = tuple(trace.stage(stage.name).shape)
    return f"({', '.join(stage.dims)}) = {sizes}"


def stage_matrix(lesson: Lesson, name: str, head: int):
    """The 2-D slice of a stage that a table shows, with axis labels and titles."""
    trace = lesson.trace
    tensor = trace.stage(name)
    stage = STAGE_BY_NAME[name]
    if name in ("scores", "scaled", "masked", "weights"):
        return tensor[head], lesson.labels, lesson.labels, "query", "key"
    if stage.per_head:  # q, k, v, heads: the head's own columns of Q, K, V, concat
        d_head = trace.d_head
        columns = feature_labels(d_head, start=head * d_head)
        return tensor[head], lesson.labels, columns, "token", "feature"
    return tensor, lesson.labels, feature_labels(tensor.shape[-1]), "token", "feature"


def stage_view(
    lesson: Lesson, name: str, head: int = 0, domain=None, numbers: bool = False
) -> StageView:
    """The view of one stage of one head, built once per (lesson, head, domain, numbers) and
    kept within the cache budget (state.py: a look-up there is a dictionary's, where
    st.cache_resource's hashes its arguments and inspects the function's signature)."""
    present = presenter_theme()
    if present and len(lesson.labels) <= charts.TEXT_LIMIT:
        numbers = True  # presenter mode: the numbers in the cells, readable from the back
    return cached_stage_view(lesson.key, name, head, domain, numbers, present, _lesson=lesson)


@state.cached
def cached_stage_view(
    key: tuple, name: str, head: int, domain, numbers: bool, present, *, _lesson: Lesson
) -> StageView:
    return make_stage_view(_lesson, name, head, domain, numbers, present)


def make_stage_view(
    lesson: Lesson, name: str, head: int, domain, numbers: bool, present: str | None = None
) -> StageView:
    stage = stage_words(STAGE_BY_NAME[name], lesson)
    matrix, rows, columns, row_title, col_title = stage_matrix(lesson, name, head)
    blocked = ~allowed_matrix(lesson.trace, head) if name in MASKED_STAGES else None
    if domain is None and stage.kind == "score":
        # raw, scaled and masked scores share the raw scores' scale: scaling visibly shrinks them
        bound = charts.magnitude(lesson.trace.scores[head].numpy())
        domain = (-bound, bound)
    view = build_view(
        matrix,
        rows,
        columns,
        kind=stage.kind,
        row_title=row_title,
        col_title=col_title,
        domain=domain,
        blocked=blocked,
        mark_table=blocked is not None,
        placeholder="masked" if name == "weights" else format_number(lesson.trace.mask_value),
        numbers=numbers,
        present=present,
    )
    return replace(view, stage=stage, shape=shape_text(stage, lesson.trace), name=stage.title)


def describe_grid(row_title: str, col_title: str) -> str:
    """What a heatmap shows, in words: a chart's accessible name ends with it. No sizes and no
    head: a spec that changes makes the browser rebuild the chart instead of updating its data
    (every chart's name changing with T cost a fifth of a repaint); the heading has them."""
    return f"heatmap, {row_title} down, {col_title} across"


def stage_words(stage: Stage, lesson: Lesson) -> Stage:
    """The stage's formula and words, fitted to this lesson: the fill value the mask used, and
    no W_o when the layer has none (the worked example)."""
    trace = lesson.trace
    if stage.name == "masked" and trace.mask_value != float("-inf"):
        fill = "-10^{9}" if trace.mask_value == -1e9 else format_number(trace.mask_value)
        return replace(stage, formula=stage.formula.replace(r"-\infty", fill))
    if stage.name == "output" and lesson.layer is not None and lesson.layer.W_o is None:
        return replace(
            stage,
            formula=r"O = \operatorname{Concat}(Z_0, \dots, Z_{H-1})",
            explain="This layer has no output projection W_o: the output is the concatenation.",
        )
    return stage


def build_view(
    matrix,
    rows: list[str],
    columns: list[str],
    *,
    kind: str,
    row_title: str,
    col_title: str,
    domain=None,
    blocked=None,
    mark_table: bool = False,
    placeholder: str = "masked",
    numbers: bool = False,
    title: str = "",
    present: str | None = None,
) -> StageView:
    """Table, heatmap cells and spec for any labelled 2-D tensor. With mark_table, the blocked
    cells are null in the table and read `placeholder` on screen; `present` is presenter
    mode's theme (charts.layout)."""
    if matrix.ndim != 2 or tuple(matrix.shape) != (len(rows), len(columns)):
        raise ValueError(f"matrix {tuple(matrix.shape)} does not fit {len(rows)}x{len(columns)}")
    values = matrix.detach().double().numpy()
    if kind != "weight" and domain is None:  # diverging: symmetric, so |value| sets darkness
        bound = charts.magnitude(values, None if blocked is None else blocked.numpy())
        domain = (-bound, bound)
    text = format_array(values)  # printed once, for the tooltips and the column widths
    # The colour scale's half-width travels in the data (SCALE_FIELD), not in the spec: a spec
    # that stays the same lets the browser update the chart instead of rebuilding it.
    bound = None if kind == "weight" else max(abs(domain[0]), abs(domain[1]))
    # Numbers printed in the cells (the worked example's 3 x 3) need wider cells.
    shape = charts.layout(
        len(rows), len(columns), cell=(72 if present else 56) if numbers else 34,
        col_chars=max(map(len, columns)),
        present=present,
    )  # fmt: skip
    names = (row_title, col_title)
    if shape.image:  # thousands of cells: one picture, not one mark per cell
        masked = None if blocked is None else blocked.numpy()
        picture = charts.cell_colours(values, kind, bound, masked)
        cells = image_form(picture, rows, columns, bound=bound, names=names)
    else:
        cells = long_form(values, rows, columns, blocked, text=text, bound=bound, names=names)
    spec = heatmap_spec(kind, row_title, col_title, shape, numbers, title)

    marked = blocked.numpy() if mark_table and blocked is not None else None
    table, config = arrow_table(values, rows, columns, row_title, col_title, marked, text)
    return StageView(
        None, values, table, config, cells, spec, f"{tuple(matrix.shape)}",
        placeholder if marked is not None and marked.any() else None,
        title, describe_grid(row_title, col_title),
    )  # fmt: skip


def arrow_table(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    row_title: str,
    col_title: str,
    blocked: np.ndarray | None = None,
    text: np.ndarray | None = None,
    label_cap: int = LABEL_WIDTH,
) -> tuple[pa.Table, dict]:
    """The numbers as Arrow (float64, full precision; blocked cells null), made once per view,
    with its column settings: 4 decimals, right-aligned, in columns as wide as the longest
    printed number. Tables wider than 64 columns (X, concat and output at C > 64) keep
    Streamlit's own number display (at most 4 decimals, trailing zeros dropped): their settings
    alone would be 15 KB of JSON and 2 ms per table on every rerun. The pinned label column is
    capped at label_cap (a long word is cut with an ellipsis; the heatmap's tooltip and the
    CSV have it whole)."""
    corner = corner_title(row_title, col_title, columns)
    longest_label = max(len(corner), max(map(len, rows), default=1))
    config = {
        corner: st.column_config.TextColumn(
            corner, pinned=True, width=min(text_width(longest_label), label_cap)
        )
    }
    if len(columns) <= FORMATTED_COLUMNS:
        text = format_array(values) if text is None else text
        printed = np.vectorize(len, otypes=[int])(text).max(axis=0, initial=1)  # per column
        # each column as wide as its own header and numbers: one long word (a token as a key)
        # widens its own column only, so a 16 x 16 table still fits where it can
        config |= {
            column: st.column_config.NumberColumn(
                format=f"%.{DIGITS}f",
                width=min(text_width(max(len(column), int(longest))), 120),  # long: "…"
            )
            for column, longest in zip(columns, printed, strict=True)
        }
    return number_table(values, rows, columns, corner, blocked), config


def text_width(chars: int) -> int:
    """A grid column's width for `chars` characters of 14 px text: measured in Chromium,
    '-0.6579' is 42.6 px, and the grid pads 8 px on each side."""
    return math.ceil(6.1 * chars + 16)


@state.cached  # plain values in, one spec out
def heatmap_spec(
    kind: str,
    row_title: str,
    col_title: str,
    shape: charts.Layout,
    numbers: bool,
    title: str,
) -> dict:
    """Altair builds (and validates) each heatmap layout once, for every session; the data
    changes every rerun. (The shared cache, not st.cache_resource: its look-up hashes the
    arguments and inspects the signature, a millisecond a chart, on every rerun.) Callers copy,
    never edit."""
    chart = charts.heatmap(
        kind=kind,
        row_title=row_title,
        col_title=col_title,
        shape=shape,
        numbers=numbers,
        title=title,
    )
    return charts.to_spec(chart)


def matrix_view(rows: tuple, columns: tuple, *, _matrix, _blocked=None, **options) -> StageView:
    """build_view cached on the matrix's own numbers: a digest of its values and of its blocked
    cells is the key, never a caller's name for it (two drills' rows both named "s′ row 3" once
    shared one picture)."""
    data = digest(_matrix, _blocked)
    return cached_matrix_view(data, rows, columns, _matrix=_matrix, _blocked=_blocked, **options)


def digest(*tensors) -> str:
    """A fingerprint of the tensors' shapes, dtypes and bytes (None counts as nothing)."""
    h = hashlib.blake2b(digest_size=16)
    for tensor in tensors:
        if tensor is not None:
            array = tensor.detach().contiguous().numpy()
            h.update(f"{array.dtype}{array.shape}".encode())
            h.update(array.tobytes())
    return h.hexdigest()


@state.cached
def cached_matrix_view(
    data: str, rows: tuple, columns: tuple, *, _matrix, _blocked=None, **options
):
    return build_view(_matrix, list(rows), list(columns), blocked=_blocked, **options)


def vector_table(
    rows: dict[str, list[float]], columns: list[str], row_title: str = "vector"
) -> tuple[pa.Table, dict]:
    """A few named rows of numbers as a small table, through the stage tables' path (NaN, which
    a naive softmax can give, is null and reads 'NaN')."""
    return arrow_table(np.array(list(rows.values()), dtype=np.float64), list(rows), columns,
                       row_title, "feature", label_cap=VECTOR_LABEL_WIDTH)  # fmt: skip
