"""A labelled matrix made ready to show: its Arrow table with column settings, its heatmap's
cells and its Vega-Lite spec (StageView).

The expensive part of a rerun is building tables and chart specs, so each stage view is cached
on the lesson's key (plain values) plus stage and head: moving the head selector or the cell
picker reruns the page but rebuilds nothing it has shown before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import streamlit as st

from attention import STAGES, AttentionTrace, Stage
from attention.explain import allowed_matrix
from dashboard import state
from dashboard.lessons import Computed
from dashboard.render import charts
from dashboard.render.elements import without_none
from dashboard.render.presenter import presenter_theme
from dashboard.render.tables import (
    DIGITS,
    column_px,
    column_room,
    corner_title,
    feature_labels,
    format_array,
    format_number,
    image_form,
    long_form,
    number_table,
    number_text,
    text_px,
    widest_printed,
)

STAGE_BY_NAME = {stage.name: stage for stage in STAGES}


LABEL_WIDTH = 160  # px: the pinned row labels (tokens) never take more


KEY_WIDTH = 120  # px: a number column headed by a long word (a token as a key) never takes more


VECTOR_LABEL_WIDTH = 300  # px: a vector table's rows are phrases: "P (R q): interleaved, …" is 272


MASKED_STAGES = ("masked", "weights")  # stages where blocked cells are shown as masked

# The text colour of a masked cell in a table: its true value (0.0000, -inf), greyed, as the
# heatmap greys it and crosses it out. Readable on the light and the dark theme alike (4.3:1 on
# white, 4.4:1 on the dark theme's #0e1117).
GREYED_TEXT = "#7a7a7a"

NULL_TEXT = "NaN"  # what a stage table shows in a null cell: only NaN is null


@dataclass(frozen=True)
class Source:
    """What a view's table and heatmap data are made from, besides its numbers."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    row_title: str
    col_title: str
    kind: str
    bound: float | None  # the diverging colour scale's half-width (None: weights, 0..1)
    blocked: np.ndarray | None  # (rows, cols) bool: cells the heatmap greys and crosses out
    picture_step: int | None  # drawn as one picture (charts.heatmap_image) with cells this size


@dataclass(frozen=True, eq=False)
class StageView:
    """One stage of one head, ready to show.

    Its table (with the column settings) and its heatmap's data are made each time they are
    asked for, not kept: a page asks when it records the view's elements (blocks.table_element,
    chart_element, show_fitted), which are then kept and replayed; a rerun whose elements are
    kept asks nothing (tests/dashboard/test_app_step_by_step.py), and what it reads of a view
    (its colour scale's bound, whether it is a picture) is in its source. A view that kept them
    held four times its numbers, and a class of sixty on lesson 1 outgrew the cache: every
    rerun whose views had been dropped rebuilt them (docs/performance.md, 2026-11-26)."""

    stage: Stage | None
    values: np.ndarray  # the numbers shown, float64
    # the heatmap's Vega-Lite spec: its own top-level dict (the title), the rest shared by
    # every matrix of its shape and kind (kept by untitled_heatmap_spec): not counted again
    spec: dict = field(metadata={"shared": True})
    shape: str  # "(H, T, T) = (2, 6, 6)"
    source: Source
    greyed: np.ndarray | None = None  # (rows, cols) bool: masked cells the table greys
    name: str = ""  # what the matrix is ("Queries Q"), for its accessible name
    grid: str = ""  # "heatmap, query down, key across"
    # What the table and heatmap are drawn from, as a fingerprint: their elements, marshalled
    # once, are cached under it (blocks.table_element, render/elements.py)
    token: str = ""

    def arrow(self) -> tuple[pa.Table, dict]:
        """The true numbers as Arrow (float64; only NaN is null), labels first, and their column
        settings: 4 decimals on screen, widths that fit the text (arrow_table)."""
        s = self.source
        return arrow_table(self.values, list(s.rows), list(s.columns), s.row_title,
                           s.col_title, missing=NULL_TEXT,
                           styled=self.greyed is not None)  # fmt: skip

    @property
    def cells(self) -> pa.Table:
        """The heatmap's data: long form, one row per cell, or one picture (heatmap_cells)."""
        return heatmap_cells(self.values, self.source)

    @property
    def picture(self) -> bool:
        """Drawn as one image (charts.heatmap_image), not one mark per cell."""
        return self.source.picture_step is not None


def fixed_size(view: StageView) -> bool:
    return isinstance(view.spec.get("width"), dict)  # a step per cell: its own size


def shape_text(stage: Stage, trace: AttentionTrace) -> str:
    """The stage's shape with named dimensions and their sizes; K and V's heads are called H
    unless query heads share them (grouped-query: H_kv)."""
    sizes = tuple(trace.stage(stage.name).shape)
    grouped = trace.n_kv_heads != trace.n_heads
    dims = [d if grouped or d != "H_kv" else "H" for d in stage.dims]
    return f"({', '.join(dims)}) = {sizes}"


def stage_matrix(lesson: Computed, name: str, head: int):
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
    lesson: Computed, name: str, head: int = 0, domain=None, numbers: bool = False
) -> StageView:
    """The view of one stage of one head, built once per (lesson, head, domain, numbers) and
    kept within the cache budget (state.py: a look-up there is a dictionary's, where
    st.cache_resource's hashes its arguments and inspects the function's signature)."""
    present = presenter_theme()
    if present and len(lesson.labels) <= charts.TEXT_LIMIT:
        numbers = True  # presenter mode: the numbers in the cells, readable from the back
    return cached_stage_view(lesson, name, head, domain, numbers, present)


@state.per_lesson
def cached_stage_view(
    lesson: Computed, name: str, head: int, domain, numbers: bool, present
) -> StageView:
    return make_stage_view(lesson, name, head, domain, numbers, present)


def make_stage_view(
    lesson: Computed, name: str, head: int, domain, numbers: bool, present: str | None = None
) -> StageView:
    stage = stage_words(STAGE_BY_NAME[name], lesson)
    matrix, rows, columns, row_title, col_title = stage_matrix(lesson, name, head)
    blocked = ~allowed_matrix(lesson.trace, head) if name in MASKED_STAGES else None
    # each stage on its own colour scale (the legend gives it): on a trained layer the raw
    # scores reach ±290 and the scaled ones ±52, which the raw scale drew nearly white
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
        numbers=numbers,
        present=present,
    )
    return replace(view, stage=stage, shape=shape_text(stage, lesson.trace), name=stage.title)


def describe_grid(row_title: str, col_title: str) -> str:
    """What a heatmap shows, in words: a chart's accessible name ends with it. No sizes and no
    head: a spec that changes makes the browser rebuild the chart instead of updating its data
    (every chart's name changing with T cost a fifth of a repaint); the heading has them."""
    return f"heatmap, {row_title} down, {col_title} across"


def stage_words(stage: Stage, lesson: Computed) -> Stage:
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
    numbers: bool = False,
    title: str = "",
    present: str | None = None,
    legend: str | None = None,
) -> StageView:
    """The view of any labelled 2-D tensor: its numbers, its heatmap's spec, and what its
    table and heatmap data are made from when first shown (StageView). The table holds the true
    numbers (a masked weight is 0.0, a masked score -inf: what the grid's CSV export writes);
    with mark_table, the blocked cells are greyed on screen (blocks.show_table). `present` is
    presenter mode's theme (charts.layout)."""
    if matrix.ndim != 2 or tuple(matrix.shape) != (len(rows), len(columns)):
        raise ValueError(f"matrix {tuple(matrix.shape)} does not fit {len(rows)}x{len(columns)}")
    values = matrix.detach().double().numpy()
    if kind != "weight" and domain is None:  # diverging: symmetric, so |value| sets darkness
        bound = charts.magnitude(values, None if blocked is None else blocked.numpy())
        domain = (-bound, bound)
    # The colour scale's half-width travels in the data (SCALE_FIELD), not in the spec: a spec
    # that stays the same lets the browser update the chart instead of rebuilding it.
    bound = None if kind == "weight" else max(abs(domain[0]), abs(domain[1]))
    # Numbers printed in the cells (the worked example's 3 x 3) need wider cells.
    shape = charts.layout(
        len(rows), len(columns), cell=56 if numbers else 34,
        col_chars=max(map(len, columns)),
        present=present, numbers=numbers,
    )  # fmt: skip
    masked = None if blocked is None else blocked.numpy()
    source = Source(tuple(rows), tuple(columns), row_title, col_title, kind, bound,
                    masked if masked is not None and masked.any() else None,
                    max(shape.step, 3) if shape.image else None)  # fmt: skip
    spec = heatmap_spec(kind, row_title, col_title, shape, numbers, title, legend)

    greyed = masked if mark_table else None
    greyed = greyed if greyed is not None and greyed.any() else None
    options = (rows, columns, kind, row_title, col_title, bound, numbers, title, present, legend)
    token = fingerprint(values, greyed, masked, repr(options))
    return StageView(
        None, values, spec, f"{tuple(matrix.shape)}", source, greyed, title,
        describe_grid(row_title, col_title), token,
    )  # fmt: skip


def heatmap_cells(values: np.ndarray, source: Source) -> pa.Table:
    """A heatmap's data: thousands of cells as one picture, the masked ones crossed out as on
    the small heatmaps (tables.image_form); fewer as one row per cell, each with its printed
    value for the tooltip (tables.long_form)."""
    s = source
    names = (s.row_title, s.col_title)
    rows, columns = list(s.rows), list(s.columns)
    if s.picture_step is not None:  # thousands of cells: one picture, not one mark per cell
        picture = charts.cell_colours(values, s.kind, s.bound, s.blocked)
        if s.blocked is not None:
            picture = charts.crossed_cells(picture, s.blocked, s.picture_step)
        return image_form(picture, rows, columns, bound=s.bound, names=names, values=values,
                          blocked=s.blocked)  # fmt: skip
    return long_form(values, rows, columns, s.blocked, text=format_array(values), bound=s.bound,
                     names=names)  # fmt: skip


def arrow_table(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    row_title: str,
    col_title: str,
    blocked: np.ndarray | None = None,
    label_cap: int = LABEL_WIDTH,
    missing: str = "None",
    styled: bool = False,
) -> tuple[pa.Table, dict]:
    """The numbers as Arrow (float64, full precision; NaN, and `blocked` cells when given, are
    null and read `missing`, the placeholder the caller passes to st.dataframe: Streamlit's own
    is "None"), made when a view's table element is recorded, with its column settings: 4
    decimals, right-aligned, every column as wide as the widest text it shows (its header, its
    printed numbers, the placeholder), measured glyph by glyph (tables.text_px). One rule for
    every table, however wide. With `styled`, the numbers are printed by the Styler fields of
    the greyed masked cells (styled_table's, sent by elements.style_cells), so the columns carry
    no format of their own (the grid would let a column's format win over the Styler's text).
    The pinned label column is capped at label_cap (a longer word is cut; the heatmap's tooltip
    and the CSV have it whole)."""
    corner = corner_title(row_title, col_title, columns)
    config = {
        corner: st.column_config.TextColumn(
            corner, pinned=True, width=min(column_px([corner, *rows]), label_cap)
        )
    }
    table = number_table(values, rows, columns, corner, blocked)
    null = np.array([column.null_count > 0 for column in table.columns[1:]])
    # one NumberColumn made, copied with each column's width (256 calls of it were a tenth of
    # a new setting's rerun), without its unset values: set_columns drops them as Streamlit
    # does, column by column, and each column's then has two keys to walk, not fifteen
    number = without_none(
        st.column_config.NumberColumn(**({} if styled else {"format": f"%.{DIGITS}f"}))
    )
    widths = column_widths(values, columns, null, missing)
    config |= {
        column: {**number, "width": width} for column, width in zip(columns, widths, strict=True)
    }
    return table, config


def column_widths(
    values: np.ndarray, columns: list[str], null: np.ndarray, missing: str
) -> list[int]:
    """Each column's width in px: its header, its widest printed number (tables.widest_printed),
    and `missing` where it has a null cell, each measured glyph by glyph; a header wider than
    KEY_WIDTH is cut."""
    widest = widest_printed(values) if values.size else np.zeros(len(columns))
    return [
        min(column_room(max(widest[c], text_px(column), text_px(missing) if null[c] else 0.0)),
            KEY_WIDTH)
        for c, column in enumerate(columns)
    ]  # fmt: skip


def styled_table(view: StageView):
    """The view's table as a pandas Styler: every number printed as the plain tables print it
    (format_array: 4 decimals, -inf), the masked cells' text greyed. The values stay the true
    numbers, which the grid's CSV export writes. (blocks.table_element sends what this Styler
    would, built without one: printed_table and elements.style_cells.)"""
    frame = view.arrow()[0].to_pandas()
    columns = list(frame.columns[1:])
    css = np.where(view.greyed, f"color: {GREYED_TEXT}", "")
    return (
        frame.style.format(number_text, subset=columns)
        .apply(lambda _: css, axis=None, subset=columns)
        .set_uuid(styler_uuid(view))  # its CSS names the table by this: the same for the view
    )  # fmt: skip


def styler_uuid(view: StageView) -> str:
    return view.token[:12]


def printed_table(view: StageView, table: pa.Table) -> pa.Table:
    """What styled_table prints in each cell of the view's table (`table`, its arrow()'s), as
    Arrow: the labels as they are, the numbers as format_array prints them (NaN for a null
    cell)."""
    text = format_array(view.values)
    columns = [pa.array(text[:, c].tolist(), pa.string()) for c in range(text.shape[1])]
    return pa.Table.from_arrays([table.column(0), *columns], names=table.column_names)


def text_width(chars: int) -> int:
    """A grid column's width for `chars` characters of 14 px digits (tables.GLYPH_PX), for
    tables that are not stage views."""
    return column_px(["0" * chars])


def heatmap_spec(
    kind: str,
    row_title: str,
    col_title: str,
    shape: charts.Layout,
    numbers: bool,
    title: str,
    legend: str | None = None,
) -> dict:
    """A heatmap layout's spec with its title. The title is the spec's top-level "title" and
    nothing else (tests/dashboard/test_display.py), so heads that differ only in their titles
    share one build: lesson 6's first student built one for every head's title, a third of that
    page on a server just started. Callers copy, never edit what is nested."""
    return untitled_heatmap_spec(kind, row_title, col_title, shape, numbers, legend) | {
        "title": title
    }


@state.cached(keep=True)  # plain values in, one spec out: a few hundred layouts at most
def untitled_heatmap_spec(
    kind: str,
    row_title: str,
    col_title: str,
    shape: charts.Layout,
    numbers: bool,
    legend: str | None = None,
) -> dict:
    """Altair builds each heatmap layout once, for every session (not validated here, see
    charts.to_spec: the tests validate every layout); the data changes every rerun. (The shared
    cache, not st.cache_resource: its look-up hashes the arguments and inspects the signature,
    a millisecond a chart, on every rerun.)"""
    chart = charts.heatmap(
        kind=kind,
        row_title=row_title,
        col_title=col_title,
        shape=shape,
        numbers=numbers,
        title="",
        legend=legend,
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
    return fingerprint(*(None if t is None else t.detach().contiguous().numpy() for t in tensors))


def fingerprint(*parts) -> str:
    """A fingerprint of arrays (shape, dtype, bytes), tensors and strings; None counts as
    nothing."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        if part is None:
            continue
        if isinstance(part, str):
            h.update(part.encode())
            continue
        array = np.ascontiguousarray(part.numpy() if hasattr(part, "numpy") else part)
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
                       row_title, "feature", label_cap=VECTOR_LABEL_WIDTH,
                       missing=NULL_TEXT)  # fmt: skip


def weights_view(weights, labels: list[str], title: str, blocked=None):
    """One head's (T, T) weights (a tensor); under a causal mask the future's cells (`blocked`,
    True where a query may not look) are drawn as blocked (grey, crossed), not as weight 0.
    Lessons 6 and 12 draw their heads with it."""
    return matrix_view(
        tuple(labels),
        tuple(labels),
        _matrix=weights,
        _blocked=blocked,
        kind="weight",
        row_title="query",
        col_title="key",
        title=title,
    )
