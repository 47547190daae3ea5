"""Blocks that several pages show: one stage with its formula, shape, table and heatmap.

The expensive part of a rerun is building tables and chart specs, so each stage view is cached
on the lesson's key (plain values) plus stage and head: moving the head selector or the cell
picker reruns the page but rebuilds nothing it has shown before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from attention import STAGES, AttentionTrace, Stage
from attention.display import charts
from attention.display.controls import Lesson
from attention.display.tables import (
    feature_labels,
    format_number,
    formatted,
    long_form,
    matrix_frame,
)
from attention.explain import allowed_matrix, check_trace, explain_cell, explain_output_row

STAGE_BY_NAME = {stage.name: stage for stage in STAGES}
MASKED_STAGES = ("masked", "weights")  # stages where blocked cells are shown as masked
NUMBER_COLUMN = st.column_config.TextColumn(alignment="right", width=64)


@dataclass(frozen=True, eq=False)
class StageView:
    """One stage of one head, ready to show."""

    stage: Stage
    numbers: pd.DataFrame  # numeric, labelled: for CSV
    text: pd.DataFrame  # as printed, masked cells marked
    spec: dict  # the heatmap's Vega-Lite spec
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


def stage_view(lesson: Lesson, name: str, head: int = 0, domain=None) -> StageView:
    """The view of one stage, cached on (lesson key, stage, head, domain)."""
    return cached_stage_view(lesson.key, name, head, domain, _lesson=lesson)


@st.cache_resource(max_entries=2048, show_spinner=False)
def cached_stage_view(key: tuple, name: str, head: int, domain, *, _lesson: Lesson) -> StageView:
    stage = STAGE_BY_NAME[name]
    matrix, rows, columns, row_title, col_title = stage_matrix(_lesson, name, head)
    numbers = matrix_frame(matrix, rows, columns)
    blocked = ~allowed_matrix(_lesson.trace, head) if name in MASKED_STAGES else None
    chart = charts.heatmap(
        long_form(numbers, blocked), kind=stage.kind, row_title=row_title, col_title=col_title,
        row_order=rows, col_order=columns, domain=domain,
    )  # fmt: skip
    numbers = numbers.rename_axis(index=row_title, columns=col_title)
    text = formatted(numbers, blocked if name == "weights" else None)
    return StageView(stage, numbers, text, chart.to_dict(), shape_text(stage, _lesson.trace))


def show_table(view: StageView, key: str) -> None:
    """The printed numbers, right-aligned, with the row labels as the first column."""
    width = max(64, 8 * int(view.text.map(len).max().max()) + 12)
    config = {c: st.column_config.TextColumn(alignment="right", width=width)
              for c in view.text.columns}  # fmt: skip
    height = "auto" if len(view.text) <= 12 else 420
    st.dataframe(view.text, column_config=config, height=height, key=f"table_{key}")
    st.download_button(
        "CSV", data=view.numbers.to_csv, file_name=f"{key}.csv", mime="text/csv",
        on_click="ignore", icon=":material/download:", key=f"csv_{key}", type="tertiary",
    )  # fmt: skip


def show_heatmap(view: StageView) -> None:
    st.vega_lite_chart(view.spec, width="stretch")


def show_stage(lesson: Lesson, name: str, head: int = 0, number: int | None = None) -> None:
    """Heading, formula, shape, then the table beside the heatmap."""
    view = stage_view(lesson, name, head)
    stage = view.stage
    prefix = f"{number}. " if number is not None else ""
    head_note = f" (head {head})" if stage.per_head and lesson.trace.n_heads > 1 else ""
    st.subheader(f"{prefix}{stage.title}{head_note}", anchor=name)
    formula, words = st.columns([1, 2], vertical_alignment="center")
    formula.latex(stage.formula)
    words.markdown(f"{stage.explain}  \nShape **{view.shape}**")
    table, chart = st.columns([3, 2], gap="medium")
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
        "Download the whole trace (JSON)", data=lambda: trace_json(lesson),
        file_name="attention_trace.json", mime="application/json", on_click="ignore",
        icon=":material/download:", key="trace_json",
    )  # fmt: skip


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
        "Head shown", heads, key=key, format_func=lambda h: f"head {h}",
        help="Q, K, V, scores, weights and the per-head output are shown for this head.",
    )  # fmt: skip
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


def show_checks(trace: AttentionTrace) -> None:
    """Live checks: the invariants recomputed from what is on screen."""
    checks = check_trace(trace)
    ok = ":green[✔]"
    bad = ":red[✘]"
    rows_ok = checks.max_row_error < 1e-5
    st.markdown(
        f"{ok if rows_ok else bad} Every row of the weights sums to 1 "
        f"(largest error {checks.max_row_error:.1e})"
        + (f"; {checks.empty_rows} rows have no allowed key and are all 0" if checks.empty_rows
           else "")
        + f"  \n{ok if checks.blocked_nonzero == 0 else bad} Masked weights are exactly 0 "
        f"({checks.blocked_nonzero} are not)"
        + f"  \n{ok if checks.output_matches else bad} The output equals weights × V, recomputed"
    )  # fmt: skip


def vector_table(rows: dict[str, list[float]], columns: list[str]) -> None:
    """A few named vectors as a small printed table."""
    frame = pd.DataFrame(rows, index=columns).T
    config = {c: NUMBER_COLUMN for c in frame.columns}
    st.dataframe(formatted(frame), column_config=config)


def show_cell_by_hand(lesson: Lesson, head: int) -> None:
    """Pick a query i and a key j and follow weights[i, j] through every step."""
    trace = lesson.trace
    labels = lesson.labels
    T = len(labels)
    pick_i, pick_j = st.columns(2)
    i = pick_i.selectbox("Query i", range(T), format_func=lambda p: f"{p}: {labels[p]}",
                         key="cell_i", index=min(T - 1, 1))  # fmt: skip
    j = pick_j.selectbox("Key j", range(T), format_func=lambda p: f"{p}: {labels[p]}",
                         key="cell_j", index=0)  # fmt: skip
    if i is None or j is None or i >= T or j >= T:
        st.info("Pick a query and a key.")
        return
    cell = explain_cell(trace, head, i, j)
    d_head = trace.d_head
    columns = feature_labels(d_head, start=head * d_head)
    vector_table({f"q_{i} ({labels[i]})": cell.q_i.tolist(),
                  f"k_{j} ({labels[j]})": cell.k_j.tolist(),
                  "q_i × k_j": cell.products.tolist()}, columns)  # fmt: skip
    f = format_number
    steps = [
        rf"s_{{{i}{j}}} = \textstyle\sum q_i \odot k_j = {f(cell.score)}",
        rf"s'_{{{i}{j}}} = s_{{{i}{j}}} \times {f(cell.scale)} = {f(cell.scaled)}",
    ]
    if not cell.allowed:
        steps.append(rf"\text{{mask: query {i} may not attend to key {j}}} \Rightarrow "
                     rf"a_{{{i}{j}}} = 0")  # fmt: skip
    else:
        steps += [
            r"\text{mask: allowed}",
            rf"e^{{s'_{{{i}{j}}} - \max_k s'_{{{i}k}}}} = e^{{{f(cell.scaled)} - "
            rf"{f(cell.row_max)}}} = {f(cell.exp)}",
            rf"Z_{i} = \textstyle\sum_{{k\ \text{{allowed}}}} e^{{s'_{{{i}k}} - \max}} = "
            rf"{f(cell.normaliser)}",
            rf"a_{{{i}{j}}} = {f(cell.exp)} / {f(cell.normaliser)} = {f(cell.weight)}",
        ]
    for line in steps:
        st.latex(line)
    st.caption("Subtracting the row's largest score before exp changes nothing in the ratio and "
               "keeps exp from overflowing; PyTorch's softmax does the same.")  # fmt: skip
    st.markdown(f"**Output row {i}** is the weighted sum of the value rows: "
                rf"$z_{{{i}}} = \sum_j a_{{{i}j}}\, v_j$")  # fmt: skip
    row = explain_output_row(trace, head, i)
    terms = {f"{f(float(row.weights[k]))} × v_{k} ({labels[k]})": row.terms[k].tolist()
             for k in range(T) if float(row.weights[k]) != 0.0}  # fmt: skip
    terms[f"z_{i} = sum"] = row.output.tolist()
    vector_table(terms, columns)
