"""Lesson 5's blocks: the worked example's weights and editable encodings, and its questions
by hand, each checked against the exact value and the printed tables."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import partial

import pandas as pd
import streamlit as st

from attention import questions
from attention.drills import Drill, parse_number
from attention.explain import explain_cell, explain_output_row, from_printed
from attention.inputs import parse_matrix
from dashboard import controls, lessons
from dashboard.controls import Settings
from dashboard.lessons import Lesson
from dashboard.render import fit
from dashboard.render.blocks import show_vectors
from dashboard.render.matrices import vector_table
from dashboard.render.presenter import Section
from dashboard.render.tables import feature_labels, format_number
from dashboard.spec import LessonSpec
from dashboard.text import plain
from dashboard.views.step_by_step import p


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
        typed = st.text_input(  # a box per setting: an answer is graded at its own numbers
            f"{number}. Compute {question.prompt} (4 decimals)",
            key=f"answer_{number}_{zlib.crc32(repr(lesson.key).encode())}",
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


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 5: the classic example's steps, every number in its cell."""
    causal = controls.current_settings().causal
    lesson = fit.current_lesson(controls.Settings(source="worked", causal=causal))
    names = ["x", "q", "k", "v", "scores", "scaled", "masked", "weights", "heads"]
    weights = Section("The weights (fixed by the seed)",
                      partial(show_weight_matrices, lesson),
                      "torch.manual_seed fixes them. Ask: which one turns X into Q?")  # fmt: skip
    stages = [fit.stage_section(lesson, name, numbers=True) for name in names]
    return [stages[0], weights, *stages[1:]]


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    lesson = lessons.lesson_at(
        Settings(source="worked", causal=s.causal)
    )  # the encodings as published
    return questions.worked_example_questions(lesson.trace, lesson.labels, s.causal)


LESSON = LessonSpec(
    number=5,
    path="pages/worked_example.py",
    title="5 · Worked example",
    icon=":material/calculate:",
    summary="The classic 3-token example, every number on screen; check yourself.",
    uses=("causal",),
    objectives=(
        "compute one attention weight by hand under a mask you choose",
        "compute one output entry from a row of scores and V",
    ),
    recap="every number of a small attention layer can be checked by hand, mask included.",
    sections=sections,
    class_questions=class_questions,
)
