"""Blocks that several pages show: one stage with its formula, shape, table and heatmap.

The expensive part of a rerun is building tables and chart specs, so each stage view is cached
on the lesson's key (plain values) plus stage and head: moving the head selector or the cell
picker reruns the page but rebuilds nothing it has shown before.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention import STAGES, AttentionTrace, Stage, as_additive, as_blocked, naive_softmax
from attention.display import charts
from attention.display.lessons import CACHE_TTL_S, Lesson
from attention.display.tables import (
    feature_labels,
    format_array,
    format_number,
    formatted,
    long_form,
    matrix_frame,
    printed,
    text_table,
)
from attention.explain import (
    allowed_matrix,
    check_trace,
    explain_cell,
    explain_output_row,
    largest_magnitude,
)
from attention.inputs import parse_matrix, parse_number
from attention.scaling import random_scores, sample_dot_products, softmax_saturation

STAGE_BY_NAME = {stage.name: stage for stage in STAGES}
MASKED_STAGES = ("masked", "weights")  # stages where blocked cells are shown as masked


@dataclass(frozen=True, eq=False)
class StageView:
    """One stage of one head, ready to show."""

    stage: Stage | None
    values: np.ndarray  # the numbers shown, float64
    table: pa.Table  # the printed table, labels in its first column, ready to send
    table_config: dict  # its column settings
    cells: pa.Table  # long form, one row per cell: the heatmap's data
    spec: dict  # the heatmap's Vega-Lite spec, shared by every matrix of its shape and kind
    shape: str  # "(H, T, T) = (2, 6, 6)"


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
    """The view of one stage of one head, built once per (lesson, head, domain, numbers).

    One cached shelf per lesson and head holds its stages as they are first shown: a page of
    eleven stages makes one cache look-up per rerun, not eleven (each look-up hashes its
    arguments and inspects the function's signature)."""
    shelf = stage_shelf(lesson.key, head, domain, numbers)
    view = shelf.get(name)
    if view is None:  # two threads may both build it: same result, last one kept
        view = shelf[name] = make_stage_view(lesson, name, head, domain, numbers)
    return view


@st.cache_resource(max_entries=48, ttl=CACHE_TTL_S, show_spinner=False)
def stage_shelf(key: tuple, head: int, domain, numbers: bool) -> dict[str, StageView]:
    """An empty shelf for one lesson's head; stage_view fills it."""
    return {}


def make_stage_view(lesson: Lesson, name: str, head: int, domain, numbers: bool) -> StageView:
    stage = STAGE_BY_NAME[name]
    matrix, rows, columns, row_title, col_title = stage_matrix(lesson, name, head)
    blocked = ~allowed_matrix(lesson.trace, head) if name in MASKED_STAGES else None
    view = build_view(
        matrix,
        rows,
        columns,
        kind=stage.kind,
        row_title=row_title,
        col_title=col_title,
        domain=domain,
        blocked=blocked,
        mark_table=name == "weights",
        numbers=numbers,
    )
    return replace(view, stage=stage, shape=shape_text(stage, lesson.trace))


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
) -> StageView:
    """Printed table, heatmap cells and spec for any labelled 2-D tensor."""
    if matrix.ndim != 2 or tuple(matrix.shape) != (len(rows), len(columns)):
        raise ValueError(f"matrix {tuple(matrix.shape)} does not fit {len(rows)}x{len(columns)}")
    values = matrix.detach().double().numpy()
    dark = partial(charts.dark_cells, kind=kind, domain=domain) if numbers else None
    text = format_array(values)  # printed once, for the table and the tooltips
    cells = long_form(values, rows, columns, blocked, dark=dark, text=text)
    # Numbers printed in the cells (the worked example's 3 x 3) need wider cells.
    shape = charts.layout(len(rows), len(columns), cell=56 if numbers else 34)
    spec = heatmap_spec(kind, row_title, col_title, shape, domain, numbers, title)
    text = printed(values, blocked if mark_table else None, text=text)
    table, config = arrow_table(text, rows, columns, row_title, col_title)
    return StageView(None, values, table, config, cells, spec, f"{tuple(matrix.shape)}")


def arrow_table(
    text, rows: list[str], columns: list[str], row_title: str, col_title: str
) -> tuple[pa.Table, dict]:
    """The printed table as Arrow, made once per view, with its column settings: numbers
    right-aligned in columns as wide as the longest, for tables a student reads cell by cell.
    Wider tables (C up to 256) keep the defaults: their settings alone would be kilobytes of
    JSON on every rerun."""
    corner = row_title  # the columns are labelled by their own names (t0 …, d0 …)
    label_width = max(48, 8 * max(map(len, rows), default=1) + 20)
    config = {corner: st.column_config.TextColumn(corner, pinned=True, width=label_width)}
    if len(columns) <= 16:
        longest = max(max(map(len, columns), default=1), max(map(len, text.ravel()), default=1))
        width = max(56, 8 * longest + 4)
        right = st.column_config.TextColumn(alignment="right", width=width)
        config |= dict.fromkeys(columns, right)
    return text_table(text, rows, columns, corner), config


@st.cache_resource(max_entries=256, show_spinner=False)
def heatmap_spec(
    kind: str,
    row_title: str,
    col_title: str,
    shape: charts.Layout,
    domain,
    numbers: bool,
    title: str,
) -> dict:
    """Altair builds (and validates) each heatmap layout once; the data changes every rerun."""
    chart = charts.heatmap(
        kind=kind,
        row_title=row_title,
        col_title=col_title,
        shape=shape,
        domain=domain,
        numbers=numbers,
        title=title,
    )
    return charts.to_spec(chart)


@st.cache_resource(max_entries=128, ttl=CACHE_TTL_S, show_spinner=False)
def matrix_view(
    key: tuple, rows: tuple, columns: tuple, *, _matrix, _blocked=None, **options
) -> StageView:
    """build_view cached on a caller's key (plain values that determine the matrix)."""
    return build_view(_matrix, list(rows), list(columns), blocked=_blocked, **options)


def show_table(view: StageView, key: str) -> None:
    """The printed numbers, right-aligned, with the row labels as the first column. The table's
    own toolbar downloads it as CSV; the whole trace, at full precision, is one JSON file."""
    height = "auto" if view.table.num_rows <= 12 else 420
    st.dataframe(view.table, column_config=view.table_config, height=height, hide_index=True)


def show_heatmap(view: StageView) -> None:
    """The chart at its own size when its cells are square, else as wide as its column."""
    fixed = isinstance(view.spec.get("width"), dict)  # a step per cell: its own size
    st.vega_lite_chart(view.cells, view.spec, width="content" if fixed else "stretch")


def show_stage(
    lesson: Lesson, name: str, head: int = 0, number: int | None = None, numbers: bool = False
) -> None:
    """Heading, formula, shape, then the table beside the heatmap."""
    view = stage_view(lesson, name, head, numbers=numbers)
    stage = view.stage
    prefix = f"{number}. " if number is not None else ""
    head_note = f" (head {head})" if stage.per_head and lesson.trace.n_heads > 1 else ""
    # One markdown element for heading, formula and words: every element is a message to build,
    # send and lay out on each rerun, and a lesson shows eleven of these blocks.
    st.markdown(
        f"### {prefix}{stage.title}{head_note}\n\n$$\n{stage.formula}\n$$\n\n"
        f"{stage.explain} Shape **{view.shape}**."
    )
    table, chart = st.columns([9, 4], gap="medium")
    with table:
        show_table(view, key=f"{name}_h{head}")
    with chart:
        show_heatmap(view)


def trace_json(lesson: Lesson) -> str:
    """The whole trace as one JSON file for a notebook: settings, tokens and every stage."""
    trace = lesson.trace
    stages = {s.name: trace.stage(s.name).tolist() for s in STAGES}
    payload = {
        "settings": lesson.settings.__dict__,
        "tokens": list(lesson.embedded.tokens),
        "scale": trace.scale,
        "mask_value": trace.mask_value,
        "allowed": allowed_matrix(trace, 0).tolist(),
        "shapes": {s.name: list(trace.stage(s.name).shape) for s in STAGES},
        "stages": stages,
        "how_to_load": "json.load(f); torch.tensor(data['stages']['weights'])",
    }
    return json.dumps(payload, default=str)  # -inf is written as -Infinity, which json.load reads


def show_trace_download(lesson: Lesson) -> None:
    st.download_button(
        "Download the whole trace (JSON)",
        data=lambda: trace_json(lesson),
        file_name="attention_trace.json",
        mime="application/json",
        on_click="ignore",
        icon=":material/download:",
        key="trace_json",
    )


def require_lesson(lesson: Lesson) -> AttentionTrace:
    """Stop the page with the reason when the settings give no trace (an empty sentence)."""
    if lesson.error:
        st.error(f"Nothing to show: {lesson.error}.", icon=":material/error:")
        st.stop()
    if lesson.notice:
        st.info(lesson.notice, icon=":material/content_cut:")
    return lesson.trace


def head_picker(trace: AttentionTrace, key: str = "head") -> int:
    """Which head the per-head stages show (hidden when there is only one)."""
    if trace.n_heads == 1:
        return 0
    heads = list(range(trace.n_heads))
    if st.session_state.get(key) not in heads:
        st.session_state[key] = 0
    choice = st.segmented_control(
        "Head shown",
        heads,
        key=key,
        format_func=lambda h: f"head {h}",
        help="Q, K, V, scores, weights and the per-head output are shown for this head.",
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


def vector_table(rows: dict[str, list[float]], columns: list[str]) -> tuple[pa.Table, dict]:
    """A few named vectors as a small printed table."""
    text = printed(np.array(list(rows.values()), dtype=np.float64))
    return arrow_table(text, list(rows), columns, "vector", "feature")


@dataclass(frozen=True, eq=False)
class CellPanel:
    """Everything the one-cell-by-hand panel shows, ready to send."""

    vectors: tuple[pa.Table, dict]  # q_i, k_j and their elementwise product
    steps: list[str]  # LaTeX lines, one per step
    terms: tuple[pa.Table, dict]  # weights[j] v_j for the allowed j, and their sum


@st.cache_resource(max_entries=256, ttl=CACHE_TTL_S, show_spinner=False)
def cell_panel(key: tuple, head: int, i: int, j: int, *, _lesson: Lesson) -> CellPanel:
    """The worked arithmetic for weights[head, i, j], cached like the stage views."""
    trace, labels = _lesson.trace, _lesson.labels
    cell = explain_cell(trace, head, i, j)
    columns = feature_labels(trace.d_head, start=head * trace.d_head)
    vectors = vector_table(
        {
            f"q_{i} ({labels[i]})": cell.q_i.tolist(),
            f"k_{j} ({labels[j]})": cell.k_j.tolist(),
            "q_i × k_j": cell.products.tolist(),
        },
        columns,
    )
    f = format_number
    steps = [
        rf"s_{{{i}{j}}} = \textstyle\sum q_i \odot k_j = {f(cell.score)}",
        rf"s'_{{{i}{j}}} = s_{{{i}{j}}} \times {f(cell.scale)} = {f(cell.scaled)}",
    ]
    if not cell.allowed:
        steps.append(
            rf"\text{{mask: query {i} may not attend to key {j}}} \Rightarrow "
            rf"a_{{{i}{j}}} = 0"
        )
    else:
        steps += [
            r"\text{mask: allowed}",
            rf"e^{{s'_{{{i}{j}}} - \max_k s'_{{{i}k}}}} = e^{{{f(cell.scaled)} - "
            rf"{f(cell.row_max)}}} = {f(cell.exp)}",
            rf"Z_{i} = \textstyle\sum_{{k\ \text{{allowed}}}} e^{{s'_{{{i}k}} - \max}} = "
            rf"{f(cell.normaliser)}",
            rf"a_{{{i}{j}}} = {f(cell.exp)} / {f(cell.normaliser)} = {f(cell.weight)}",
        ]
    row = explain_output_row(trace, head, i)
    terms = {
        f"{f(float(row.weights[k]))} × v_{k} ({labels[k]})": row.terms[k].tolist()
        for k in range(len(labels))
        if float(row.weights[k]) != 0.0
    }
    terms[f"z_{i} = sum"] = row.output.tolist()
    return CellPanel(vectors, steps, vector_table(terms, columns))


def show_vectors(table: tuple[pa.Table, dict]) -> None:
    st.dataframe(table[0], column_config=table[1], hide_index=True)


def show_cell_by_hand(lesson: Lesson, head: int) -> None:
    """Pick a query i and a key j and follow weights[i, j] through every step."""
    labels = lesson.labels
    T = len(labels)
    pick_i, pick_j = st.columns(2)
    i = pick_i.selectbox(
        "Query i",
        range(T),
        format_func=lambda p: f"{p}: {labels[p]}",
        key="cell_i",
        index=min(T - 1, 1),
    )
    j = pick_j.selectbox(
        "Key j", range(T), format_func=lambda p: f"{p}: {labels[p]}", key="cell_j", index=0
    )
    if i is None or j is None or i >= T or j >= T:
        st.info("Pick a query and a key.")
        return
    panel = cell_panel(lesson.key, head, i, j, _lesson=lesson)
    show_vectors(panel.vectors)
    for line in panel.steps:
        st.latex(line)
    st.caption(
        "Subtracting the row's largest score before exp changes nothing in the ratio and "
        "keeps exp from overflowing; PyTorch's softmax does the same."
    )
    st.markdown(
        f"**Output row {i}** is the weighted sum of the value rows: "
        rf"$z_{{{i}}} = \sum_j a_{{{i}j}}\, v_j$"
    )
    show_vectors(panel.terms)


def show_matrix(view: StageView, key: str, heading: str = "", caption: str = "") -> None:
    """A titled table beside its heatmap, for matrices that are not a trace stage."""
    if heading:
        st.markdown(f"**{heading}**")
    if caption:
        st.caption(caption)
    table, chart = st.columns([2, 1], gap="medium")
    with table:
        show_table(view, key=key)
    with chart:
        show_heatmap(view)


def show_heads(lesson: Lesson, name: str, per_row: int = 4) -> None:
    """One heatmap per head on one shared colour scale."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    per_row = min(per_row, trace.n_heads)
    for start in range(0, trace.n_heads, per_row):
        columns = st.columns(per_row)
        for offset, column in enumerate(columns):
            head = start + offset
            if head >= trace.n_heads:
                break
            view = stage_view(lesson, name, head, domain)
            with column:
                st.markdown(f"**head {head}**")
                show_heatmap(view)


def show_shape_summary(lesson: Lesson) -> None:
    """Every stage's named and actual shape, as one table."""
    trace = lesson.trace
    rows = [
        {
            "stage": s.title,
            "formula": s.formula,
            "dimensions": f"({', '.join(s.dims)})",
            "shape": str(tuple(trace.stage(s.name).shape)),
        }
        for s in STAGES
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={"formula": st.column_config.TextColumn("formula (LaTeX)")},
    )


def show_mask_conventions(lesson: Lesson) -> None:
    """The same mask written three ways, side by side."""
    allowed = allowed_matrix(lesson.trace, 0)  # (T, T)
    labels = lesson.labels
    conventions = [
        (
            "True = may attend",
            "PyTorch `scaled_dot_product_attention(attn_mask=…)`; this package",
            mask_text(allowed),
        ),
        (
            "True = blocked",
            "`nn.MultiheadAttention(attn_mask=…, key_padding_mask=…)`; the classic "
            "tutorial's `mask = tril(ones) == 0`",
            mask_text(as_blocked(allowed)),
        ),
        (
            "Additive float",
            "0 where allowed, −∞ where blocked, added to the scores (Hugging Face, "
            "the original Transformer code)",
            mask_text(as_additive(allowed), additive=True),
        ),
    ]
    for column, (title, used_by, values) in zip(st.columns(3), conventions, strict=True):
        with column:
            st.markdown(f"**{title}**")
            st.caption(used_by)
            frame = pd.DataFrame(values, index=labels, columns=labels)
            frame = frame.rename_axis(index="query", columns="key")
            st.dataframe(
                frame,
                column_config={
                    c: st.column_config.TextColumn(alignment="center", width=56) for c in labels
                },
            )


def mask_text(mask, additive: bool = False) -> list[list[str]]:
    """A bool or additive mask as the words a table prints."""
    if additive:
        return [[format_number(v) if v != 0 else "0" for v in row] for row in mask.tolist()]
    return [["True" if v else "False" for v in row] for row in mask.tolist()]


def show_fill_comparison(with_inf: Lesson, with_big: Lesson) -> None:
    """What a fully blocked query row becomes: naive softmax with -inf, with -1e9, and PyTorch."""
    labels = with_inf.labels
    last = len(labels) - 1
    rows = {
        "naive softmax, fill −∞": naive_softmax(with_inf.trace.masked)[0, last],
        "naive softmax, fill −1e9": naive_softmax(with_big.trace.masked)[0, last],
        "this package = PyTorch SDPA": with_inf.trace.weights[0, last],
    }
    frame = pd.DataFrame({name: row.tolist() for name, row in rows.items()}, index=labels).T
    frame = frame.rename_axis(index=f"weights of query {labels[last]}", columns="key")
    text = formatted(frame)
    st.dataframe(
        text,
        column_config={
            c: st.column_config.TextColumn(alignment="right", width=72) for c in text.columns
        },
    )


@st.cache_data(max_entries=32, show_spinner=False)
def variance_frames(d_ks: tuple[int, ...], n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long-form dot products (d_k, raw, scaled) and their variances, for the histograms."""
    samples = [sample_dot_products(d_k, n, seed + d_k) for d_k in d_ks]
    long = pd.concat(
        [
            pd.DataFrame(
                {"d_k": f"d_k = {s.d_k}", "q·k": s.raw.numpy(), "q·k / √d_k": s.scaled.numpy()}
            )
            for s in samples
        ],
        ignore_index=True,
    )
    table = pd.DataFrame(
        {
            "d_k": [s.d_k for s in samples],
            "Var(q·k)": [format_number(s.raw_variance, 2) for s in samples],
            "Var(q·k / √d_k)": [format_number(s.scaled_variance, 2) for s in samples],
        }
    )
    return long, table


def show_variance(d_ks: tuple[int, ...], n: int, seed: int) -> None:
    """Histograms of q·k, raw and scaled, for several d_k; the variances as a table."""
    long, table = variance_frames(d_ks, n, seed)
    raw, scaled = st.columns(2)
    with raw:
        st.altair_chart(
            charts.histogram(long, field="q·k", group="d_k", title="q·k (raw)"), width="stretch"
        )
    with scaled:
        st.altair_chart(
            charts.histogram(long, field="q·k / √d_k", group="d_k", title="q·k / √d_k (scaled)"),
            width="stretch",
        )
    st.dataframe(table, hide_index=True)


SCALE_GRID = tuple(10 ** (e / 8) for e in range(-24, 13))  # 0.001 ... ~31.6


@st.cache_data(max_entries=128, show_spinner=False)
def saturation_frames(t: int, d_k: int, temperature: float, seed: int):
    """Weights, summary and curves for one random row of scores (see attention.scaling)."""
    scores = random_scores(t, d_k, seed)
    standard = 1 / math.sqrt(d_k)
    cases = {
        "no scaling (× 1)": softmax_saturation(scores, 1.0),
        "× 1/√d_k": softmax_saturation(scores, standard),
        f"× 1/(τ√d_k), τ = {temperature:g}": softmax_saturation(scores, standard / temperature),
    }
    keys = [f"k{j}" for j in range(t)]
    weights = pd.concat(
        [
            pd.DataFrame({"key": keys, "weight": s.weights.numpy(), "case": name})
            for name, s in cases.items()
        ],
        ignore_index=True,
    )
    summary = pd.DataFrame(
        {
            "softmax of scores": list(cases),
            "scale": [format_number(s.scale) for s in cases.values()],
            "max weight": [format_number(s.max_weight) for s in cases.values()],
            "entropy (nats)": [format_number(s.entropy) for s in cases.values()],
            "gradient size ‖J‖": [format_number(s.gradient_norm) for s in cases.values()],
        }
    )
    curve = [softmax_saturation(scores, scale) for scale in SCALE_GRID]
    curves = pd.concat(
        [
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.entropy / math.log(t) for c in curve],
                    "quantity": "entropy / log T (1 = uniform)",
                }
            ),
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.max_weight for c in curve],
                    "quantity": "max weight (1 = one-hot)",
                }
            ),
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.gradient_norm for c in curve],
                    "quantity": "gradient size ‖J‖",
                }
            ),
        ],
        ignore_index=True,
    )
    return weights, summary, curves


def show_saturation(t: int, d_k: int, temperature: float, seed: int) -> None:
    """Softmax of one row of scores at three scales, and entropy and gradient across scales."""
    weights, summary, curves = saturation_frames(t, d_k, temperature, seed)
    st.dataframe(summary, hide_index=True)
    columns = st.columns(3)
    for column, (case, rows) in zip(columns, weights.groupby("case", sort=False), strict=True):
        with column:
            st.altair_chart(
                charts.bars(
                    rows.reset_index(drop=True), x="key", y="weight", title=case, y_domain=[0, 1]
                ),
                width="stretch",
            )
    st.altair_chart(
        charts.lines(
            curves,
            x="scale",
            y="value",
            group="quantity",
            log_x=True,
            title=f"Across scales (1/√d_k = {1 / math.sqrt(d_k):.3f})",
        ),
        width="stretch",
    )


def show_weight_matrices(lesson: Lesson) -> None:
    """The layer's projection weights, as PyTorch stores them (out, in): q = x W_qᵀ."""
    layer = lesson.layer
    C = layer.d_model
    names = [("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v)]
    if layer.W_o is not None:
        names.append(("W_o", layer.W_o))
    for column, (name, linear) in zip(st.columns(len(names)), names, strict=True):
        with column:
            st.markdown(f"**{name}.weight** (out, in) = ({C}, {C})")
            frame = matrix_frame(
                linear.weight.detach(), feature_labels(C, "out"), feature_labels(C, "in")
            )
            st.dataframe(
                formatted(frame),
                column_config={
                    c: st.column_config.TextColumn(alignment="right", width=72)
                    for c in frame.columns
                },
            )


def show_mask_blocked(lesson: Lesson) -> None:
    """The mask in the True = blocked convention the classic tutorial writes."""
    blocked = as_blocked(allowed_matrix(lesson.trace, 0))
    frame = pd.DataFrame(mask_text(blocked), index=lesson.labels, columns=lesson.labels)
    st.dataframe(
        frame.rename_axis(index="query", columns="key"),
        column_config={
            c: st.column_config.TextColumn(alignment="center", width=64) for c in lesson.labels
        },
    )


@dataclass(frozen=True)
class Question:
    prompt: str
    stage: str
    i: int
    j: int


QUESTIONS = (
    Question("the scaled score of query x3 against key x2, s′₃₂", "scaled", 2, 1),
    Question("the attention weight of query x2 on key x1, a₂₁", "weights", 1, 0),
    Question("the first entry of output row 3, z₃[0]", "output", 2, 0),
)


def check_answer(typed: str, truth: float) -> tuple[bool | None, str]:
    """(right?, message): right when the typed number equals the truth to 4 decimals (±0.0001)."""
    if not typed.strip():
        return None, ""
    try:
        value = parse_number(typed, 1, 1)
    except ValueError:
        return False, f"“{typed[:20]}” is not a number."
    right = abs(value - truth) <= 1.0001e-4
    verdict = "Right" if right else "Not quite"
    return right, f"{verdict}: the value is {format_number(truth)}."


def show_check_yourself(lesson: Lesson) -> None:
    """Three numbers a student computes by hand and types in; the page says right or wrong."""
    trace = lesson.trace
    for number, question in enumerate(QUESTIONS, start=1):
        tensor = trace.stage(question.stage)
        truth = float(
            tensor[0, question.i, question.j]
            if tensor.ndim == 3
            else tensor[question.i, question.j]
        )
        typed = st.text_input(
            f"{number}. Compute {question.prompt} (4 decimals)",
            key=f"answer_{number}",
            max_chars=30,
        )
        right, message = check_answer(typed, truth)
        if right is None:
            continue
        (st.success if right else st.error)(message)
        with st.expander("The working"):
            show_working(lesson, question)


def show_working(lesson: Lesson, question: Question) -> None:
    """The arithmetic behind one question's number."""
    trace = lesson.trace
    f = format_number
    if question.stage == "output":
        row = explain_output_row(trace, 0, question.i)
        terms = " + ".join(
            f"{f(float(row.weights[k]))} × {f(float(row.v[k, question.j]))}"
            for k in range(len(lesson.labels))
        )
        st.latex(
            rf"z_{{{question.i + 1}}}[{question.j}] = \sum_j a_{{{question.i + 1}j}}\,"
            rf"v_j[{question.j}] = {terms} = {f(float(row.output[question.j]))}"
        )
        return
    cell = explain_cell(trace, 0, question.i, question.j)
    products = " + ".join(
        f"{f(a)} × {f(b)}" for a, b in zip(cell.q_i.tolist(), cell.k_j.tolist(), strict=True)
    )
    st.latex(rf"q_{{{question.i + 1}}} \cdot k_{{{question.j + 1}}} = {products} = {f(cell.score)}")
    st.latex(rf"s' = {f(cell.score)} \times {f(cell.scale)} = {f(cell.scaled)}")
    if question.stage == "weights":
        st.latex(
            rf"a = \frac{{e^{{{f(cell.scaled)} - {f(cell.row_max)}}}}}{{{f(cell.normaliser)}}}"
            rf" = \frac{{{f(cell.exp)}}}{{{f(cell.normaliser)}}} = {f(cell.weight)}"
        )


def edit_encodings(default: tuple[tuple[float, ...], ...]) -> tuple[tuple[float, ...], ...] | None:
    """An editable (3, 2) table of encodings; returns the valid values, or None with an error
    shown (the lesson then falls back to the classic encodings)."""
    frame = pd.DataFrame(default, index=["x1", "x2", "x3"], columns=["dim 0", "dim 1"])
    if st.button("Restore the classic encodings", icon=":material/restart_alt:"):
        st.session_state.pop("encodings", None)
    edited = st.data_editor(
        frame,
        key="encodings",
        num_rows="fixed",
        column_config={
            c: st.column_config.NumberColumn(format="%.4f", min_value=-1e4, max_value=1e4)
            for c in frame.columns
        },
    )
    try:
        x = parse_matrix(edited.to_numpy().tolist(), max_rows=3, max_cols=2)
    except ValueError as error:
        st.error(f"{error}. Showing the classic encodings instead.", icon=":material/error:")
        return None
    return tuple(tuple(row) for row in x.tolist())


def bounded_slider(container, label: str, high: int, key: str, help: str = "") -> int:
    """A 0..high integer slider whose range follows other controls: a remembered value above
    the new maximum is clamped, and a range of one value is shown as text, not as a slider."""
    if high <= 0:
        st.session_state.pop(key, None)
        container.caption(f"{label}: 0 (a single token cannot be padding).")
        return 0
    if st.session_state.get(key, 0) > high:
        st.session_state[key] = high
    return container.slider(label, 0, high, key=key, help=help)
