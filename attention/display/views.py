"""Blocks that several pages show: one stage with its formula, shape, table and heatmap.

The expensive part of a rerun is building tables and chart specs, so each stage view is cached
on the lesson's key (plain values) plus stage and head: moving the head selector or the cell
picker reruns the page but rebuilds nothing it has shown before.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import streamlit as st

from attention import STAGES, AttentionTrace, Stage
from attention.display import charts, memory
from attention.display.frame import PRESENT_KEY, PRESENT_STATE
from attention.display.lessons import CACHE_TTL_S, Lesson
from attention.display.tables import (
    DIGITS,
    corner_title,
    feature_labels,
    format_array,
    format_number,
    image_form,
    long_form,
    number_table,
)
from attention.explain import (
    allowed_matrix,
    check_trace,
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
    kept within the cache budget (memory.py: a look-up there is a dictionary's, where
    st.cache_resource's hashes its arguments and inspects the function's signature)."""
    present = presenter_theme()
    if present and len(lesson.labels) <= charts.TEXT_LIMIT:
        numbers = True  # presenter mode: the numbers in the cells, readable from the back
    return cached_stage_view(lesson.key, name, head, domain, numbers, present, _lesson=lesson)


def presenter_theme() -> str | None:
    """None, or in presenter mode the theme ("light" or "dark") its axis text is drawn for.
    (Streamlit may report "light" on a session's very first run; the next run corrects it.)"""
    if not st.session_state.get(PRESENT_STATE, False):
        return None
    return "dark" if getattr(st.context.theme, "type", None) == "dark" else "light"


@memory.cached
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


@functools.lru_cache(maxsize=256)  # plain values in, one spec out: no TTL, no Streamlit hashing
def heatmap_spec(
    kind: str,
    row_title: str,
    col_title: str,
    shape: charts.Layout,
    numbers: bool,
    title: str,
) -> dict:
    """Altair builds (and validates) each heatmap layout once, for every session; the data
    changes every rerun. (functools, not st.cache_resource: its look-up hashes the arguments and
    inspects the signature, a millisecond a chart, on every rerun.) Callers copy, never edit."""
    chart = charts.heatmap(
        kind=kind,
        row_title=row_title,
        col_title=col_title,
        shape=shape,
        numbers=numbers,
        title=title,
    )
    return charts.to_spec(chart)


@memory.cached
def matrix_view(
    key: tuple, rows: tuple, columns: tuple, *, _matrix, _blocked=None, **options
) -> StageView:
    """build_view cached on a caller's key (plain values that determine the matrix)."""
    return build_view(_matrix, list(rows), list(columns), blocked=_blocked, **options)


def show_table(view: StageView) -> None:
    """The printed numbers, right-aligned, with the row labels as the first column. The table's
    own toolbar downloads it as CSV; the whole trace, at full precision, is one JSON file."""
    height = "auto" if view.table.num_rows <= 12 else 420
    st.dataframe(
        view.table,
        column_config=view.table_config,
        width=natural_width(view.table_config, view.table.num_columns),
        height=height,
        hide_index=True,
        placeholder=view.placeholder,
    )


def natural_width(config: dict, n_columns: int) -> int | str:
    """The table's width when every column has one (its columns then never hide behind a
    scroll bar while the page has room), else the page's width."""
    widths = [c.get("width") for c in config.values()]
    if len(widths) < n_columns or not all(isinstance(w, int) for w in widths):
        return "stretch"
    return sum(widths) + 2  # the grid's two border pixels


PICTURE_NOTE = (
    "A matrix this large is drawn as one picture, one pixel per cell: hovering shows no "
    "values. The table has every number."
)


def show_heatmap(view: StageView, name: str = "", note: bool = True) -> None:
    """The chart at its own size when its cells are square, else as wide as the page. Its
    accessible name (Vega's description, the aria-label a screen reader reads) says what the
    matrix is (`name`, else the view's own) and its size. A large matrix's picture says that
    it has no tooltips (unless `note` is off: a gallery says it once)."""
    name = name or view.name
    described = f"{name}: {view.grid}" if name else view.grid[:1].upper() + view.grid[1:]
    spec = view.spec | {"description": described}  # the spec is shared: name this chart
    st.vega_lite_chart(view.cells, spec, width="content" if fixed_size(view) else "stretch")
    if note:
        picture_note(is_picture(view))


def picture_note(shown: bool) -> None:
    """PICTURE_NOTE when `shown`, else an empty placeholder in its place: the elements after it
    keep their places when a slider turns small heatmaps into pictures."""
    slot = st.empty()
    if shown:
        slot.caption(PICTURE_NOTE)


def is_picture(view: StageView) -> bool:
    """Drawn as one image (charts.heatmap_image), not one mark per cell."""
    return "image" in view.cells.column_names


def fixed_size(view: StageView) -> bool:
    return isinstance(view.spec.get("width"), dict)  # a step per cell: its own size


def wrapping_row(gap: str = "medium"):
    """A row whose items stand side by side while they fit and wrap, one under another, on a
    narrow screen: never squeezed (st.columns squeezes a heatmap of fixed size until it spills
    over its neighbour)."""
    return st.container(horizontal=True, gap=gap, vertical_alignment="top")


def show_table_and_heatmap(view: StageView, name: str = "") -> None:
    """The table beside its heatmap while both fit (a row that wraps: on a narrow screen the
    heatmap moves under the table, never cut); a wide matrix's heatmap goes under its table
    at the page's width. Either way one container: the elements after it keep their places
    when d_model crosses from one to the other (a shifted page is rebuilt, not updated)."""
    if not fixed_size(view):
        with st.container():
            show_table(view)
            show_heatmap(view, name)
        return
    with wrapping_row():
        show_table(view)
        show_heatmap(view, name)


def show_stage(
    lesson: Lesson, name: str, head: int = 0, number: int | None = None, numbers: bool = False
) -> None:
    """Heading, formula, shape, then the table beside the heatmap."""
    view = stage_view(lesson, name, head, numbers=numbers)
    stage = view.stage
    prefix = f"{number}. " if number is not None else ""
    head_note = f" (head {head})" if stage.per_head and lesson.trace.n_heads > 1 else ""
    # Heading, formula and words are one markdown element that a size slider leaves unchanged,
    # so the browser keeps it as drawn (an unchanged element is not redrawn; the formula's KaTeX
    # was redrawn eleven times a move while the shape sat in it); the shape is its own line.
    words = f"### {prefix}{stage.title}{head_note}\n\n$$\n{stage.formula}\n$$\n\n{stage.explain}"
    shape = f"Shape **{view.shape}**."
    if presenter_theme():  # words beside the large chart (with its numbers); the table below
        with st.container(horizontal=True, gap="large"):
            st.container(width=360).markdown(f"{words} {shape}")
            show_heatmap(view)
        with st.expander("The table"):
            show_table(view)
        return
    st.markdown(words)
    st.markdown(shape)
    show_table_and_heatmap(view)


def presented_stages(names: list[str], key: str) -> list[str]:
    """The stages a page shows: all of them, or in presenter mode one at a time, with
    Previous / Next buttons (the stage's position is kept per page under `key`)."""
    if not presenter_theme():
        return names
    at = min(max(int(st.session_state.get(key, 0)), 0), len(names) - 1)
    st.session_state[key] = at
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        st.button("Previous stage", key=f"{key}_prev", icon=":material/arrow_back:",
                  disabled=at == 0, on_click=step_stage, args=(key, -1))  # fmt: skip
        st.markdown(f"**Stage {at + 1} of {len(names)}**")
        st.button("Next stage", key=f"{key}_next", icon=":material/arrow_forward:",
                  disabled=at == len(names) - 1, on_click=step_stage, args=(key, 1))  # fmt: skip
        st.button("Leave presenter mode", key=f"{key}_leave", type="tertiary",
                  on_click=leave_presenter_mode)  # fmt: skip
    return [names[at]]


def step_stage(key: str, by: int) -> None:
    st.session_state[key] = int(st.session_state.get(key, 0)) + by


def leave_presenter_mode() -> None:
    st.session_state[PRESENT_STATE] = False
    st.query_params.pop(PRESENT_KEY, None)


def require_lesson(lesson: Lesson) -> AttentionTrace:
    """Stop the page with the reason when the settings give no trace (an empty sentence)."""
    if lesson.error:
        st.error(f"Nothing to show: {lesson.error}.", icon=":material/error:")
        st.stop()
    if lesson.notice:
        st.info(lesson.notice, icon=":material/content_cut:")
    return lesson.trace


def head_picker(trace: AttentionTrace, key: str = "head") -> int:
    """Which head the per-head stages show. With one head the picker stays, greyed out: an
    element that comes and goes shifts every element after it, and the browser then rebuilds
    the whole page instead of updating it (a heads move took 375 ms to repaint, not 250)."""
    heads = list(range(trace.n_heads))
    if st.session_state.get(key) not in heads:
        st.session_state[key] = 0
    choice = st.segmented_control(
        "Head shown",
        heads,
        key=key,
        format_func=lambda h: f"head {h}",
        persist_state="session",
        disabled=trace.n_heads == 1,
        help="Q, K, V, scores, weights and the per-head output are shown for this head."
        + (" This layer has one head." if trace.n_heads == 1 else ""),
    )
    return 0 if choice is None else int(choice)


def show_sizes(lesson: Lesson) -> None:
    """The sizes everything below is built from, as metrics."""
    trace = lesson.trace
    T = len(lesson.labels)
    H, d_head = trace.n_heads, trace.d_head
    cols = st.columns(5)
    cols[0].metric("T (tokens)", T)
    cols[1].metric("C = d_model", H * d_head)
    cols[2].metric("H (heads)", H)
    cols[3].metric("d_head = C / H", d_head)
    cols[4].metric("scale = 1/√d_head", format_number(trace.scale))


@st.cache_resource(max_entries=64, ttl=CACHE_TTL_S, show_spinner=False)
def trace_checks(key: tuple, *, _lesson: Lesson):
    return check_trace(_lesson.trace)


def show_checks(lesson: Lesson) -> None:
    """Live checks: the invariants recomputed from the trace on screen."""
    checks = trace_checks(lesson.key, _lesson=lesson)
    ok = ":green[✔]"
    bad = ":red[✘]"
    rows_ok = checks.max_row_error < 1e-5
    st.markdown(
        f"{ok if rows_ok else bad} Every row of the weights sums to 1 "
        f"(largest error {checks.max_row_error:.1e})"
        + (
            f"; {checks.empty_rows} rows have no allowed key and are all 0"
            if checks.empty_rows
            else ""
        )
        + f"  \n{ok if checks.blocked_nonzero == 0 else bad} Masked weights are exactly 0 "
        f"({checks.blocked_nonzero} are not)"
        + f"  \n{ok if checks.output_matches else bad} The output equals weights × V, recomputed"
    )


def vector_table(
    rows: dict[str, list[float]], columns: list[str], row_title: str = "vector"
) -> tuple[pa.Table, dict]:
    """A few named rows of numbers as a small table, through the stage tables' path (NaN, which
    a naive softmax can give, is null and reads 'NaN')."""
    return arrow_table(np.array(list(rows.values()), dtype=np.float64), list(rows), columns,
                       row_title, "feature", label_cap=VECTOR_LABEL_WIDTH)  # fmt: skip


def show_vectors(table: tuple[pa.Table, dict]) -> None:
    st.dataframe(table[0], column_config=table[1], hide_index=True, placeholder="NaN")


def show_matrix(
    view: StageView, key: str, heading: str = "", caption: str = "", name: str = ""
) -> None:
    """A titled table beside its heatmap, for matrices that are not a trace stage. The chart's
    accessible name is `name`, else the heading (which should then not change with sizes)."""
    if heading:
        st.markdown(f"**{heading}**")
    if caption:
        st.caption(caption)
    show_table_and_heatmap(view, name or heading)


def bounded_slider(
    container,
    label: str,
    high: int,
    key: str,
    help: str = "",
    *,
    low: int = 0,
    default: int = 0,
    single: str = "nothing else to choose",
) -> int:
    """A low..high integer slider whose range follows other controls: a remembered value above
    the new maximum is clamped, and a range of one value is shown as text, not as a slider.

    The value is kept under a key of our own as well, so it survives a visit to another lesson
    (Streamlit drops an undrawn widget's state); Streamlit's persist_state cannot be used here,
    since it restores a remembered value after the clamp and the slider then raises."""
    kept = f"_kept_{key}"
    if high <= low:
        st.session_state.pop(key, None)
        container.caption(f"{label}: {low} ({single}).")
        return low
    remembered = st.session_state.get(key, st.session_state.get(kept, default))
    st.session_state[key] = min(max(int(remembered), low), high)
    value = container.slider(label, low, high, key=key, help=help)
    st.session_state[kept] = value
    return value
