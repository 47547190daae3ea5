"""Blocks that several pages show: one stage with its formula, shape, table and heatmap; the
sizes, the head picker and the live checks; a stage as a presenter section, with its note for
the teacher (blocks fit one projector screen themselves: their `screen`)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention import AttentionTrace
from attention.explain import allowed_matrix, check_trace
from attention.masks import as_blocked
from dashboard import controls, glossary, lessons, state
from dashboard.lessons import Computed
from dashboard.render import charts, layout
from dashboard.render.elements import (
    Recorded,
    record,
    replay,
    set_columns,
    show_frame,
    show_once,
    style_cells,
)
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import (
    GREYED_TEXT,
    NULL_TEXT,
    STAGE_BY_NAME,
    StageView,
    digest,
    fixed_size,
    printed_table,
    stage_view,
    styler_uuid,
    vector_table,
)
from dashboard.render.presenter import Section, presenter_theme
from dashboard.render.tables import feature_labels, format_number

if TYPE_CHECKING:
    import torch


def show_table(view: StageView) -> None:
    """The printed numbers, right-aligned, with the row labels as the first column; masked cells
    show their true value (0.0000, -inf) in grey. The table's own toolbar downloads it as CSV
    (the true values, -inf as -Infinity); the whole trace, at full precision, is one JSON
    file."""
    replay(table_element(view.token, _view=view))


def table_options(view: StageView, arrow: tuple[pa.Table, dict] | None = None) -> dict:
    """st.dataframe's arguments for a view's table (`arrow`: the view's, when already made),
    besides its data."""
    table, config = view.arrow() if arrow is None else arrow
    return dict(
        column_config=config,
        width=natural_width(config, table.num_columns),
        height="auto" if table.num_rows <= 12 else 420,
        hide_index=True,
        placeholder=NULL_TEXT,
    )


@state.cached  # marshalled once per view, for every session (render/elements.py)
def table_element(token: str, *, _view: StageView) -> Recorded:
    view = _view
    # the greyed masked cells: the printed numbers and the CSS added as a pandas Styler sends
    # them (matrices.styled_table is the Styler it stands for), all in Arrow
    data, config = view.arrow()  # made for this, not kept: the element holds them
    options = table_options(view, (data, config))
    del options["column_config"]  # written as JSON by set_columns, not deep-copied
    element = set_columns(record(lambda dg: dg.dataframe(data, **options)), config)
    if view.greyed is None:
        return element
    marked = np.pad(view.greyed, ((0, 0), (1, 0)))  # the label column is the frame's first
    css = f"color: {GREYED_TEXT}"
    return style_cells(element, printed_table(view, data), marked, css, styler_uuid(view))


PICTURE_NOTE = "A matrix this large is drawn as one picture: hovering shows no values."
TABLE_NOTE = "The table has every number."  # only where a table is shown with the picture


def show_heatmap(
    view: StageView, name: str = "", note: bool = True, table: bool = False, last: bool = False
) -> None:
    """The chart at its own size when its cells are square, else as wide as the page. Its
    accessible name (Vega's description, the aria-label a screen reader reads) says what the
    matrix is (`name`, else the view's own) and its size. A large matrix's picture says that
    it has no tooltips (unless `note` is off: a gallery says it once), and, when `table` (the
    caller shows the matrix's table too), where the numbers are. `last`: the caller's
    container ends with this chart (picture_note)."""
    name = name or view.name
    described = f"{name}: {view.grid}" if name else view.grid[:1].upper() + view.grid[1:]
    replay(chart_element(view.token, described, _view=view))
    if note:
        picture_note(view.picture, table, last)


@state.cached  # marshalled once per view and name, for every session (render/elements.py)
def chart_element(token: str, described: str, *, _view: StageView) -> Recorded:
    spec = _view.spec | {"description": described}  # the spec is shared: name this chart
    width = "content" if fixed_size(_view) else "stretch"
    return record(lambda dg: dg.vega_lite_chart(_view.cells, spec, width=width))


def picture_note(shown: bool, table: bool = False, last: bool = False) -> None:
    """PICTURE_NOTE (and TABLE_NOTE when a table is shown too) when `shown`, else an empty
    placeholder in its place: the elements after it keep their places when a slider turns
    small heatmaps into pictures. When the note is the `last` element of its container, no
    element comes after it there and the container keeps every later element's place, so
    nothing is drawn in its stead: an element less for every student (issue 53)."""
    said = f"{PICTURE_NOTE} {TABLE_NOTE}" if table else PICTURE_NOTE
    if last:
        if shown:
            st.caption(said)
        return
    slot = st.empty()
    if shown:
        slot.caption(said)


def show_table_and_heatmap(view: StageView, name: str = "") -> None:
    """The table beside its heatmap while both fit (a row that wraps: on a narrow screen the
    heatmap moves under the table, never cut); a wide matrix's heatmap goes under its table
    at the page's width. Either way one container: the elements after it keep their places
    when d_model crosses from one to the other (a shifted page is rebuilt, not updated).
    Presenter mode shows the heatmap alone: both do not fit a projector's screen."""
    if presenter_theme():
        show_heatmap(view, name, note=False)
        return
    if not fixed_size(view):
        with st.container():
            show_table(view)
            show_heatmap(view, name, table=True, last=True)
        return
    with wrapping_row():
        show_table(view)
        show_heatmap(view, name, table=True, last=True)


def show_stage(
    lesson: Computed,
    name: str,
    head: int = 0,
    number: int | None = None,
    numbers: bool = False,
    heading: bool = True,
    screen: tuple[int, int] | None = None,
) -> None:
    """Heading, formula, shape, then the table beside the heatmap. Fitted to one projector
    `screen` (presenter mode, where the section's title is the heading): the formula and shape
    on one line, the heatmap alone with its rows sized to the screen, then the same words."""
    view = stage_view(lesson, name, head, numbers=numbers)
    stage = view.stage
    prefix = f"{number}. " if number is not None else ""
    head_note = f" (head {head})" if stage.per_head and lesson.trace.n_heads > 1 else ""
    explain = glossary.linked(stage.explain, 0)  # a term of a later lesson: its entry
    if screen is not None:
        st.markdown(f"${stage.formula}$ &emsp; Shape **{view.shape}**{head_note}.")
        show_sized(view, screen[1])
        if view.picture:
            st.caption(PICTURE_NOTE)
        st.markdown(explain)
        return
    # Heading, formula and words are one markdown element that a size slider leaves unchanged,
    # so the browser keeps it as drawn (an unchanged element is not redrawn; the formula's KaTeX
    # was redrawn eleven times a move while the shape sat in it); the shape is its own line.
    words = f"$$\n{stage.formula}\n$$\n\n{explain}"
    if heading:
        words = f"### {prefix}{stage.title}{head_note}\n\n{words}"
    shape = f"Shape **{view.shape}**."
    st.markdown(words)
    st.markdown(shape)
    show_table_and_heatmap(view)


def show_sized(view: StageView, height: int) -> None:
    """A stage's heatmap with its rows at most `height` px in all (cells keep their size
    steps: a few specs in all); marshalled once per matrix, name and size."""
    rows = view.values.shape[0]
    step = charts.snap(min(view.spec["height"]["step"], height // rows)) or charts.STEPS[-1]
    spec = view.spec | {"height": {"step": step}, "description": f"{view.name}: {view.grid}"}
    width = "content" if fixed_size(view) else "stretch"
    show_once(("sized", view.token, view.name, step),
              lambda dg: dg.vega_lite_chart(view.cells, spec, width=width))  # fmt: skip


SCREEN = (630, 300)  # CSS px a section's charts may fill on 683 x 512 and 853 x 480
AXES = (150, 70)  # px of a small heatmap's axes and legend beside and above its cells


def show_fitted(view: StageView, name: str, width: int, height: int) -> None:
    """A heatmap whose square cells are sized to fit width x height px (axes included)."""
    rows, cols = view.values.shape
    # presenter-styled maps have their legend beside; the others' legend and turned labels
    # take more height
    present = (
        view.spec.get("config", {}).get("axis", {}).get("labelFontSize") == charts.PRESENT_FONT
    )
    tall = AXES[1] if present else 180
    step = max(charts.STEPS[-1], min((width - AXES[0]) // cols, (height - tall) // rows, 34))
    fixed = fixed_size(view)

    def draw(dg) -> None:
        spec = view.spec | {"description": f"{name}: {view.grid}"}
        if fixed:
            spec = charts.refit_labels(
                spec | {"width": {"step": step}, "height": {"step": step}}, step
            )
        dg.vega_lite_chart(view.cells, spec, width="content" if fixed else "stretch")

    # marshalled once per matrix (its token), name and size, then replayed in every session
    show_once(("fitted", view.token, name, step), draw)


def require_lesson(lesson: Computed) -> AttentionTrace:
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
    the whole page instead of updating it (a heads move took 375 ms to repaint, not 250).
    In the URL under `key`, as the head's number (no format_func: a bound widget keeps its
    label in the link); a head the layer no longer has falls back to head 0."""
    heads = list(range(trace.n_heads))
    raw = controls.linked(key)
    choice = st.segmented_control(
        "Head shown",
        heads,
        default=layout.remember_default(key, 0),
        key=key,
        bind="query-params",
        persist_state="session",
        disabled=trace.n_heads == 1,
        help="Q, K, V, scores, weights and the per-head output are shown for this head."
        + (" This layer has one head." if trace.n_heads == 1 else ""),
    )
    head = 0 if choice is None or choice not in heads else int(choice)
    controls.link_note(key, raw, head, f"a head of this layer (0 to {trace.n_heads - 1})")
    return head


def show_sizes(lesson: Computed) -> None:
    """The sizes everything below is built from, as metrics in a row that wraps: each as wide as
    its own label (five equal columns cut "scale = 1/√d_head" at 1024 x 768)."""
    trace = lesson.trace
    T = len(lesson.labels)
    H, d_head = trace.n_heads, trace.d_head
    with wrapping_row(gap="large"):
        for label, value in (
            ("T (tokens)", T),
            ("C = d_model", H * d_head),
            ("H (heads)", H),
            ("d_k = C / H", d_head),
            ("scale = 1/√d_k", format_number(trace.scale)),
        ):
            st.metric(label, value, width="content")


@state.per_lesson
def trace_checks(lesson: Computed):
    return check_trace(lesson.trace)


def show_checks(lesson: Computed) -> None:
    """Live checks: the invariants recomputed from the trace on screen."""
    checks = trace_checks(
        lesson,
    )
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
        + f"  \n{ok if checks.blocked_nonzero == 0 else bad} "
        + masked_words(checks)
        + f"  \n{ok if checks.output_matches else bad} The output equals weights × V, recomputed"
    )


def masked_words(checks) -> str:
    """What the check on the masked weights found, counted."""
    if checks.blocked == 0:
        return "No key is masked here, so no weight has to be 0"
    if checks.blocked_nonzero == 0:
        return f"Masked weights are exactly 0 (all {checks.blocked} of them)"
    return f"Masked weights are exactly 0: {checks.blocked_nonzero} of {checks.blocked} are not"


def show_weights(lesson: Computed) -> None:
    """The projection matrices as the formulas use them, Q = X W_q: PyTorch stores
    `W_q.weight` as (out, in) and computes x @ W_q.weight.T, so the matrix shown is that
    transpose, (in, out): multiply X's table by it and you get Q's table."""
    C = lesson.layer.d_model
    st.caption(
        "Shown as the formulas use them: Q = X W_q with W_q = `W_q.weight.T`. PyTorch stores "
        "each `nn.Linear` weight as (out, in) and computes x @ weight.T."
    )
    tables = weight_elements(lesson)
    for column, (name, element) in zip(st.columns(len(tables)), tables.items(), strict=True):
        with column:
            st.markdown(f"**{name}** = `{name}.weight.T` (in, out) = ({C}, {C})")
            show_vectors(element)


def weight_elements(lesson: Computed) -> dict[str, Recorded]:
    """Each projection's table, (in, out), by name: marshalled once per layer (4 x 65,536
    numbers at C = 256), for every session, and shared by the lessons that differ only in T or
    the mask, which run the same layer."""
    layer = lesson.layer
    return layer_weight_elements(weights_digest(lesson), _projections=projections(layer))


def projections(layer) -> dict[str, torch.Tensor]:
    """The layer's projection weights as the formulas use them, (in, out), by name."""
    names = [("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v)]
    if layer.W_o is not None:
        names.append(("W_o", layer.W_o))
    return {name: linear.weight.detach().T for name, linear in names}  # rows multiply X's columns


@state.per_lesson  # a few bytes a lesson: the layer's fingerprint
def weights_digest(lesson: Computed) -> str:
    return digest(*projections(lesson.layer).values())


@state.cached  # once per layer's weights, for every session
def layer_weight_elements(
    weights: str, *, _projections: dict[str, torch.Tensor]
) -> dict[str, Recorded]:
    elements = {}
    for name, matrix in _projections.items():
        labels = feature_labels(matrix.shape[0])
        rows = dict(zip(labels, matrix.tolist(), strict=True))
        elements[name] = vector_element(vector_table(rows, labels, row_title="in"))
    return elements


def vector_element(table: tuple[pa.Table, dict]) -> Recorded:
    """A few named vectors' table (matrices.vector_table), marshalled: keep it where the
    vectors are cached, and show it with show_vectors."""
    data, config = table
    element = record(lambda dg: dg.dataframe(data, hide_index=True, placeholder=NULL_TEXT))
    return set_columns(element, config)


def show_vectors(element: Recorded | tuple[pa.Table, dict]) -> None:
    """A vector table, from its recorded element (or from the table, marshalled now)."""
    replay(element if isinstance(element, Recorded) else vector_element(element))


def show_rows(rows: dict[str, list[float]], columns: list[str], row_title: str) -> None:
    """A few named rows of numbers (vector_table), marshalled once for every session that shows
    these numbers: their bytes are the key (a NaN, which a naive softmax can give, equals
    itself there), with the names and titles."""
    values = np.asarray(list(rows.values()), dtype=np.float64)
    key = ("element", "rows", row_title, tuple(columns), tuple(rows), values.tobytes())
    replay(state.compute(key, lambda: vector_element(vector_table(rows, columns, row_title))))


def show_matrix(
    view: StageView,
    key: str,
    heading: str = "",
    caption: str = "",
    name: str = "",
    screen: tuple[int, int] | None = None,
) -> None:
    """A titled table beside its heatmap, for matrices that are not a trace stage. The chart's
    accessible name is `name`, else the heading (which should then not change with sizes).
    Fitted to a projector's `screen` (width, height px): the heatmap alone, at that size."""
    if heading:
        st.markdown(f"**{heading}**")
    if caption:
        st.caption(caption)
    if screen is not None:
        show_fitted(view, name or heading, *screen)
        return
    show_table_and_heatmap(view, name or heading)


def mask_text(mask, short: bool = False) -> list[list[str]]:
    """A bool mask as a table prints it (T/F when three must fit side by side)."""
    true, false = ("T", "F") if short else ("True", "False")
    return [[true if v else false for v in row] for row in mask.tolist()]


def show_mask_blocked(lesson: Computed) -> None:
    """The mask in the True = blocked convention the classic tutorial writes (lessons 3 and
    5)."""

    def frame() -> pd.DataFrame:
        blocked = as_blocked(allowed_matrix(lesson.trace, 0))
        shown = pd.DataFrame(mask_text(blocked), index=lesson.labels, columns=lesson.labels)
        return shown.rename_axis(index="query", columns="key")

    config = {c: st.column_config.TextColumn(alignment="center", width=64) for c in lesson.labels}
    show_frame(("mask_blocked", lesson.key), frame, column_config=config)


STAGE_NOTES = {
    "x": "Point at one row: one token's vector. Ask: what changes for a longer sentence?",
    "q": "Each row is what a token is looking for. Ask: why does every head get its own W_q?",
    "k": "Each row is what a token offers to be found by. Ask: could K equal Q here?",
    "v": "Each row is what a token hands over once chosen. Ask: why a third projection, V?",
    "scores": "Point at row i, column j: q_i · k_j. Ask: which key does the first query like most?",
    "scaled": "Same pattern, smaller numbers. Ask: what would the softmax do with the raw ones?",
    "masked": "The crossed cells are the future. Ask: why must token 2 not see token 3?",
    "weights": "Every row sums to 1. Ask: which token does the last query attend to, and why?",
    "heads": "A weighted average of V's rows. Ask: which row of V dominates the first output?",
    "concat": "The heads side by side again. Ask: what shape comes back, and why that one?",
    "output": "W_o mixes what the heads found. Ask: what is lost if we drop W_o?",
}


def current_lesson(settings: controls.Settings | None = None) -> Computed:
    """The lesson of the sidebar's settings (stops the page with the reason if there is none)."""
    lesson = lessons.computed(settings or controls.current_settings())
    require_lesson(lesson)
    return lesson


# px of a stage's rows: what its formula (two lines for the mask's cases), its shape and two
# lines of words leave of the smallest screen's 480 px (853 x 480: 1280 x 720 at 150 %)
STAGE_ROWS = 136


def stage_section(lesson: Computed, name: str, head: int = 0, numbers: bool = False) -> Section:
    stage = STAGE_BY_NAME[name]
    screen = (SCREEN[0], STAGE_ROWS)
    draw = partial(show_stage, lesson, name, head, numbers=numbers, screen=screen)
    return Section(stage.title, draw, STAGE_NOTES[name], key=name)
