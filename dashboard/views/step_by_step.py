"""Arithmetic a student can follow by hand: one cell of the attention, the worked example's
weights and encodings, and the check-yourself answers; and what the lesson's input, labels and
score colours are, said from the lesson itself."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from attention.drills import parse_number
from attention.explain import explain_cell, explain_output_row, from_printed
from attention.inputs import parse_matrix
from attention.tiny import TASKS
from dashboard import controls, state
from dashboard.lessons import Lesson
from dashboard.render import charts
from dashboard.render.blocks import show_vectors, vector_element
from dashboard.render.elements import Recorded
from dashboard.render.matrices import StageView, stage_view, vector_table
from dashboard.render.tables import SCALE_FIELD, feature_labels, format_number
from dashboard.text import plain, visible

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def describe_input(lesson: Lesson) -> str:
    """What X is for this lesson's source, in one sentence (a trained layer's X is its input:
    the residual stream, which holds more than embeddings past layer 0)."""
    s = lesson.settings
    T = len(lesson.labels)
    if s.source == "trained":
        task = TASKS[s.task]
        model = f"the tiny transformer trained on *{task.title}*, on its example sequence"
        embeddings = "each token's learned embedding plus its position's learned embedding"
        if s.layer == 0:
            return f"X is layer 0's input in {model}: {embeddings}, E[token] + P[position]."
        last = s.layer - 1
        earlier = "layer 0's output" if last == 0 else f"the outputs of layers 0 to {last}"
        return (
            f"X is layer {s.layer}'s input in {model}: the residual stream after layer "
            f"{last}, that is {embeddings} with {earlier} added to them."
        )
    if s.source == "worked":
        return "X is the classic example's three hand-picked encodings, two numbers per token."
    if s.source == "sentence":
        position = (
            " plus its sinusoidal position encoding"
            if s.positions
            else "; no position is added (positions are off)"
        )
        return (
            f"X is one row per word: the word's seeded random N(0, 1) vector (seed {s.seed}, "
            f"the same vector wherever the word appears){position}."
        )
    return (
        f"X is {T} rows of seeded random N(0, 1) numbers (seed {s.seed}), labelled "
        f"{lesson.labels[0]} … {lesson.labels[-1]} by position: no words and no positions."
        if T > 1
        else f"X is one row of seeded random N(0, 1) numbers (seed {s.seed}): no words and no "
        "positions."
    )


def describe_labels(lesson: Lesson) -> str | None:
    """What `I#1` means, when a token repeats (tables.unique_labels numbers repeats so every
    row and column of a table has its own name); None when no token repeats."""
    if lesson.embedded is None:
        return None
    tokens = [visible(token) for token in lesson.embedded.tokens]
    repeated = next((t for t, n in Counter(tokens).items() if n > 1), None)
    if repeated is None:
        return None
    pairs = zip(tokens, lesson.labels, strict=True)
    labels = [label for token, label in pairs if token == repeated]
    # the labels come from the tokens, which may be a student's words: shown as typed
    named = [f"{plain(label)} the {ORDINALS[n]}" for n, label in enumerate(labels[: len(ORDINALS)])]
    named[0] = f"{plain(labels[0])} is the first {plain(repeated)}"
    rest = ", ".join(named[1:-1])
    more = " (and so on)" if len(labels) > len(ORDINALS) else ""
    listed = named[0] + (f", {rest}" if rest else "") + f" and {named[-1]}{more}"
    return f"A token that appears more than once is labelled with its occurrence: {listed}."


def label_font(spec: dict) -> float:
    """The axis labels' font size in a heatmap spec: the axis's own, else the config's."""
    axis = spec.get("layer", [{}])[0].get("encoding", {}).get("y", {}).get("axis") or {}
    return axis.get("labelFontSize") or spec.get("config", {}).get("axis", {}).get(
        "labelFontSize", charts.FONT_SIZE
    )


def describe_axes(lesson: Lesson, head: int) -> str | None:
    """Why a long sequence's heatmaps name only some tokens (Vega leaves out axis labels that
    would overprint: a row thinner than the label's font); None when every label fits."""
    spec = stage_view(lesson, "scores", head).spec
    step = (spec.get("height") or {}).get("step")
    font = label_font(spec)
    if step is None or step >= font:
        return None
    T = len(lesson.labels)
    return (
        f"At T = {T} a heatmap cell is {step} px, less than the {font} px labels, so the "
        "heatmaps' axes name every other token (or fewer) rather than overprint them; the "
        "tables, and the tooltip of every cell, name each one."
    )


def scale_bound(view: StageView) -> float:
    """The half-width of a diverging heatmap's colour scale, as the chart reads it."""
    return float(view.cells.column(SCALE_FIELD)[0].as_py())


def describe_score_scale(lesson: Lesson, head: int) -> str:
    """Which colour scale the raw, scaled and masked scores' heatmaps use, read from the views
    themselves (so the sentence is true whatever the views choose), with the scaled scores'
    own largest size: on one shared scale, small scaled scores are drawn pale."""
    views = {name: stage_view(lesson, name, head) for name in ("scores", "scaled", "masked")}
    bounds = {name: scale_bound(view) for name, view in views.items()}
    scaled = charts.magnitude(views["scaled"].values)
    f = format_number
    if len(set(bounds.values())) == 1:
        return (
            "The raw, scaled and masked scores' heatmaps share one colour scale, "
            f"±{f(bounds['scores'])} (the largest raw score of this head), so the scaling shows "
            f"as paler colours: the scaled scores reach only ±{f(scaled)}, and a cell far "
            "below the scale's end is nearly white. The tables have every number."
        )
    return (
        "Each score heatmap has its own colour scale: raw ±{}, scaled ±{}, masked ±{} (the "
        "largest size of its allowed cells); compare their tables for the sizes.".format(
            *(f(bounds[name]) for name in ("scores", "scaled", "masked"))
        )
    )


def show_about_input(lesson: Lesson, head: int) -> None:
    """What X is, and what the labels and the axes of the heatmaps below mean."""
    st.markdown(describe_input(lesson))
    notes = [note for note in (describe_labels(lesson), describe_axes(lesson, head)) if note]
    slot = st.empty()  # always there, so a note that comes and goes shifts nothing after it
    if notes:
        slot.caption(" ".join(notes))


@dataclass(frozen=True, eq=False)
class CellPanel:
    """Everything the one-cell-by-hand panel shows, ready to send."""

    vectors: Recorded  # the table of q_i, k_j and their elementwise product
    steps: list[str]  # LaTeX lines, one per step
    terms: Recorded  # the table of weights[j] v_j for the allowed j, and their sum


@state.cached
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
    ij = f"{i},{j}"  # s_{1,0}: query 1, key 0 (unambiguous once T > 10)
    steps = [
        rf"s_{{{ij}}} = \textstyle\sum q_{i} \odot k_{j} = {f(cell.score)}",
        rf"s'_{{{ij}}} = s_{{{ij}}} \times {p(cell.scale)} = {f(cell.scaled)}",
    ]
    if not cell.allowed:
        steps.append(
            rf"\text{{mask: query {i} may not attend to key {j}}} \Rightarrow a_{{{ij}}} = 0"
        )
    else:
        steps += [
            r"\text{mask: allowed}",
            rf"e^{{s'_{{{ij}}} - \max_k s'_{{{i},k}}}} = e^{{{f(cell.scaled)} - "
            rf"{p(cell.row_max)}}} = {f(cell.exp)}",
            rf"\text{{sum}}_{i} = \textstyle\sum_{{k\ \text{{allowed}}}} "
            rf"e^{{s'_{{{i},k}} - \max}} = {f(cell.normaliser)}",
            rf"a_{{{ij}}} = {f(cell.exp)} / {f(cell.normaliser)} = {f(cell.weight)}",
        ]
    row = explain_output_row(trace, head, i)
    terms = {
        f"{f(float(row.weights[k]))} × v_{k} ({labels[k]})": row.terms[k].tolist()
        for k in range(len(labels))
        if float(row.weights[k]) != 0.0
    }
    terms[f"z_{i} = sum"] = row.output.tolist()
    return CellPanel(vector_element(vectors), steps, vector_element(vector_table(terms, columns)))


def show_cell_by_hand(lesson: Lesson, head: int) -> None:
    """Pick a query i and a key j and follow weights[i, j] through every step."""
    labels = lesson.labels
    T = len(labels)
    pick_i, pick_j = st.columns(2)
    picked = {}
    # in the URL as the positions themselves (a bound widget keeps its label in the link, and
    # the tokens change with the sentence); the token is named under each picker
    for column, key, name, default in ((pick_i, "cell_i", "Query i", min(T - 1, 1)),
                                       (pick_j, "cell_j", "Key j", 0)):  # fmt: skip
        with column:
            raw = controls.linked(key)
            p = st.selectbox(
                name, list(range(T)), index=default, key=key, bind="query-params",
                persist_state="session",
            )  # fmt: skip
            picked[key] = p if p in range(T) else default
            controls.link_note(key, raw, picked[key], f"a position from 0 to {T - 1}")
            st.caption(plain(f"{name[-1]} = {picked[key]}: {labels[picked[key]]}"))
    i, j = picked["cell_i"], picked["cell_j"]
    panel = cell_panel(lesson.key, head, i, j, _lesson=lesson)
    show_vectors(panel.vectors)
    # one LaTeX block, one line per step (one element to send, not six)
    st.latex(r"\begin{gathered}" + r" \\[4pt] ".join(panel.steps) + r"\end{gathered}")
    st.caption(
        "Subtracting the row's largest score before exp changes nothing in the ratio and "
        "keeps exp from overflowing; PyTorch's softmax does the same."
    )
    st.markdown(
        f"**Output row {i}** is the weighted sum of the value rows: "
        rf"$z_{{{i}}} = \sum_j a_{{{i},j}}\, v_j$"
    )
    show_vectors(panel.terms)


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


def check_answer(typed: str, truth: float, printed: float | None = None) -> tuple[bool | None, str]:
    """(right?, message): right when the typed number is within ±0.0001 of the exact value or of
    the value the printed 4-decimal tables give (`printed`); commas, spaces and other scripts'
    digits are read; nonsense gets a message, not a verdict."""
    if not typed.strip():
        return None, ""
    try:
        value = parse_number(typed)
    except ValueError as error:
        return False, str(error)
    candidates = [truth] if printed is None else [truth, printed]
    right = any(abs(value - c) <= 1.0001e-4 for c in candidates)
    verdict = "Right" if right else "Not quite"
    message = f"{verdict}: the value is {format_number(truth)}"
    if printed is not None and format_number(printed) != format_number(truth):
        message += (
            f"; from the printed 4-decimal tables it comes to {format_number(printed)}, "
            "which counts as right too"
        )
    return right, message + "."


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
            persist_state="session",
        )
        printed = from_printed(trace, question.stage, question.i, question.j)
        right, message = check_answer(typed, truth, printed)
        if right is None:
            continue
        (st.success if right else st.error)(plain(message))  # it may echo the typed text
        with st.expander("The working"):
            show_working(lesson, question)


def p(value: float) -> str:
    """A number for the middle of a formula: negative ones in parentheses, −0.3 → (−0.3000)."""
    text = format_number(value)
    return f"({text})" if value < 0 else text


def show_working(lesson: Lesson, question: Question) -> None:
    """The arithmetic behind one question's number."""
    trace = lesson.trace
    f = format_number
    if question.stage == "output":
        row = explain_output_row(trace, 0, question.i)
        terms = " + ".join(
            f"{p(float(row.weights[k]))} × {p(float(row.v[k, question.j]))}"
            for k in range(len(lesson.labels))
        )
        st.latex(
            rf"z_{{{question.i + 1}}}[{question.j}] = \sum_j a_{{{question.i + 1},j}}\,"
            rf"v_j[{question.j}] = {terms} = {f(float(row.output[question.j]))}"
        )
        return
    cell = explain_cell(trace, 0, question.i, question.j)
    products = " + ".join(
        f"{p(a)} × {p(b)}" for a, b in zip(cell.q_i.tolist(), cell.k_j.tolist(), strict=True)
    )
    st.latex(rf"q_{{{question.i + 1}}} \cdot k_{{{question.j + 1}}} = {products} = {f(cell.score)}")
    st.latex(rf"s' = {p(cell.score)} \times {p(cell.scale)} = {f(cell.scaled)}")
    if question.stage == "weights":
        st.latex(
            rf"a = \frac{{e^{{{f(cell.scaled)} - {p(cell.row_max)}}}}}{{{f(cell.normaliser)}}}"
            rf" = \frac{{{f(cell.exp)}}}{{{f(cell.normaliser)}}} = {f(cell.weight)}"
        )


def show_weight_matrices(lesson: Lesson) -> None:
    """The projection matrices as the formulas use them, Q = X W_q: PyTorch stores
    `W_q.weight` as (out, in) and computes x @ W_q.weight.T, so the matrix shown is that
    transpose, (in, out): multiply X's table by it and you get Q's table."""
    layer = lesson.layer
    C = layer.d_model
    names = [("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v)]
    if layer.W_o is not None:
        names.append(("W_o", layer.W_o))
    st.caption(
        "Shown as the formulas use them: Q = X W_q with W_q = `W_q.weight.T`. PyTorch stores "
        "each `nn.Linear` weight as (out, in) and computes x @ weight.T."
    )
    for column, (name, linear) in zip(st.columns(len(names)), names, strict=True):
        with column:
            st.markdown(f"**{name}** = `{name}.weight.T` (in, out) = ({C}, {C})")
            matrix = linear.weight.detach().T  # (in, out): rows multiply X's columns
            rows = dict(zip(feature_labels(C), matrix.tolist(), strict=True))
            show_vectors(vector_table(rows, feature_labels(C), row_title="in"))


def edit_encodings(default: tuple[tuple[float, ...], ...]) -> tuple[tuple[float, ...], ...] | None:
    """An editable (3, 2) table of encodings; returns the values the lesson uses.

    Cells are text, so what a student types reaches the parser as typed (a number column would
    silently clamp 1e30 or read it as something else): a refused entry gets a message naming
    the cell and why, and the lesson keeps the last accepted encodings. The accepted values
    are kept in the session, so they survive a visit to another lesson; *Restore* gives a fresh
    editor with the classic values."""
    state = st.session_state
    generation = state.setdefault("encodings_generation", 0)
    if st.button("Restore the classic encodings", icon=":material/restart_alt:"):
        state.pop("encodings_kept", None)
        generation = state["encodings_generation"] = generation + 1
    key = f"encodings_{generation}"
    # a fresh editor (first visit, after Restore or another lesson), or a browser that
    # reconnected to a fresh worker with its editor's edits and nothing else
    if key not in state or "encodings_base" not in state:
        state["encodings_base"] = state.get("encodings_kept", default)
    base = state["encodings_base"]
    frame = pd.DataFrame(
        [[format_number(v) for v in row] for row in base],
        index=["x1", "x2", "x3"],
        columns=["dim 0", "dim 1"],
    )
    edited = st.data_editor(
        frame,
        key=key,
        num_rows="fixed",
        column_config={c: st.column_config.TextColumn(max_chars=24) for c in frame.columns},
    )
    kept = state.get("encodings_kept", default)
    try:
        rows = edited.to_numpy().tolist()
        if len(rows) != 3:
            raise ValueError(f"the table needs 3 rows, one per token, and has {len(rows)}")
        x = parse_matrix(rows, max_rows=3, max_cols=2)
    except (ValueError, AttributeError) as error:
        st.error(
            plain(f"{error}. The lesson keeps the last accepted encodings."),
            icon=":material/error:",
        )
        return None if kept == default else kept
    accepted = tuple(tuple(row) for row in x.tolist())
    state["encodings_kept"] = accepted

    def printed(rows) -> list[list[str]]:
        return [[format_number(v) for v in row] for row in rows]

    if printed(accepted) != printed(default):  # say which numbers the lesson now uses
        st.caption(
            "Using x1 = ({}), x2 = ({}), x3 = ({}).".format(
                *(", ".join(format_number(v) for v in row) for row in accepted)
            )
        )
    return accepted
