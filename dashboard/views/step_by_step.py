"""Lesson 1's blocks: one cell of the attention by hand, and what the lesson's input, labels
and score colours are, said from the lesson itself (lesson 5's blocks: views/worked_example)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import streamlit as st

from attention import STAGES
from attention.check_yourself.step_by_step import step_by_step_questions
from attention.drills import Drill
from attention.explain import explain_cell, explain_output_row
from attention.tiny import TASKS
from dashboard import controls, glossary, lessons, state
from dashboard.controls import Settings
from dashboard.lessons import Computed
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_vectors, vector_element
from dashboard.render.elements import Recorded
from dashboard.render.matrices import stage_view, vector_table
from dashboard.render.presenter import Section
from dashboard.render.tables import feature_labels, format_number
from dashboard.spec import LessonSpec
from dashboard.text import plain, visible

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


WHAT_HEADS_LEARN, REAL_MODEL = "pages/what_heads_learn.py", "pages/real_model.py"


def describe_input(lesson: Computed) -> str:
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
    if s.source == "shakespeare":
        return (
            f"X is layer {s.layer}'s input in the small GPT trained on tiny Shakespeare, reading "
            f"your text one character per token: the residual stream (the characters' and "
            f"positions' learned embeddings"
            + (" plus layer 0's attention and MLP outputs" if s.layer else "")
            + "), layer-normed (LN₁) as the attention reads it."
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


def describe_labels(lesson: Computed) -> str | None:
    """What `I#1` means, when a token repeats (text.unique_labels numbers repeats so every
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


def describe_axes(lesson: Computed, head: int) -> str | None:
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


def describe_score_scale(lesson: Computed, head: int) -> str:
    """Which colour scale the raw, scaled and masked scores' heatmaps use, read from the views
    themselves (so the sentence is true whatever the views choose), with the scaled scores'
    own largest size: on one shared scale, small scaled scores are drawn pale."""
    views = {name: stage_view(lesson, name, head) for name in ("scores", "scaled", "masked")}
    # each heatmap's colour scale's half-width, as its chart reads it (the view's source keeps
    # it, so nothing is rebuilt)
    bounds = {name: float(view.source.bound) for name, view in views.items()}
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


def show_about_input(lesson: Computed, head: int) -> None:
    """What X is, and what the labels and the axes of the heatmaps below mean."""
    st.markdown(glossary.linked(describe_input(lesson), LESSON.number))
    if lesson.settings.source in ("random", "sentence"):  # say it before reading meaning in
        st.caption(glossary.linked(
            f"The layer's weights W_q, W_k, W_v and W_o are random too (seed "
            f"{lesson.settings.seed}), not trained: which token attends to which is chance here, "
            "not meaning. Trained heads, and a real model reading your words:",
            LESSON.number,
        ))  # fmt: skip
        with st.container(horizontal=True):
            for path, label in ((WHAT_HEADS_LEARN, "6 · What heads learn"),
                                (REAL_MODEL, "12 · A real model reads your text")):  # fmt: skip
                st.page_link(path, label=label, icon=":material/school:", width="content")
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


@state.per_lesson
def cell_panel(lesson: Computed, head: int, i: int, j: int) -> CellPanel:
    """The worked arithmetic for weights[head, i, j], cached like the stage views."""
    trace, labels = lesson.trace, lesson.labels
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


@st.fragment
def show_cell_by_hand(lesson: Computed, head: int) -> None:
    """Pick a query i and a key j and follow weights[i, j] through every step. A fragment: a
    new pick redraws this panel only, not the page's stages above it (a tenth of the work)."""
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
                name, list(range(T)), index=layout.remember_default(key, default), key=key,
                bind="query-params",
                persist_state="session",
            )  # fmt: skip
            picked[key] = p if p in range(T) else default
            controls.link_note(key, raw, picked[key], f"a position from 0 to {T - 1}")
            st.caption(plain(f"{name[-1]} = {picked[key]}: {labels[picked[key]]}"))
    i, j = picked["cell_i"], picked["cell_j"]
    panel = cell_panel(lesson, head, i, j)
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


def p(value: float) -> str:
    """A number for the middle of a formula: negative ones in parentheses, −0.3 → (−0.3000)."""
    text = format_number(value)
    return f"({text})" if value < 0 else text


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 1: the stages, X to the layer's output."""
    lesson = blocks.current_lesson()
    head = controls.lesson_value("head", range(lesson.trace.n_heads), 0)
    return [blocks.stage_section(lesson, stage.name, head) for stage in STAGES]


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


@state.per_lesson
def lesson_questions(lesson: Computed) -> tuple[Drill, ...]:
    """The check-yourself questions of one setting, made once for every student on it (the
    page asks on every rerun; at 60 students this was 6 % of the server's time on lesson 1)."""
    return step_by_step_questions(
        lesson.trace, lesson.labels, lesson.settings.seed
    ) + lessons.diagnostic_questions(lesson)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(lessons.computed_at(s))


LESSON = LessonSpec(
    number=1,
    path="pages/step_by_step.py",
    title="1 · Step by step",
    minutes=14,
    icon=":material/footprint:",
    summary="X → Q, K, V → scores → scaled → masked → softmax → output, with one cell by hand.",
    objectives=(
        "compute a scaled score s′ = (q · k) × 1/√d_k by hand from a query and a key",
        "turn a row of scaled scores into one attention weight with the softmax",
        "compute one entry of a query's output as the weighted sum of V's column",
    ),
    recap="a query scores every key, the softmax turns its row into weights, the weights mix V.",
    params=("head", "cell_i", "cell_j", "show_weights"),
    sections=sections,
    class_questions=class_questions,
)
