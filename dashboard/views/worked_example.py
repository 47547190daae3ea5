"""Lesson 5's blocks: the worked example's weights and editable encodings. Its questions by
hand are `worked_example_by_hand` (attention.check_yourself.worked_example), graded as every
question is (`attention.drills.grade`, through `lesson_frame.ask`)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from attention.check_yourself.worked_example import (
    worked_example_by_hand,
    worked_example_questions,
)
from attention.drills import Drill
from attention.inputs import parse_matrix
from dashboard import controls, lessons
from dashboard.controls import Settings
from dashboard.lessons import Computed
from dashboard.render import blocks
from dashboard.render.blocks import show_weights
from dashboard.render.presenter import Section
from dashboard.render.tables import format_number
from dashboard.spec import LessonSpec
from dashboard.text import plain


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
    lesson = blocks.current_lesson(settings(controls.current_settings().causal))
    weights = Section("The weights (fixed by the seed)",
                      partial(show_weights, lesson),
                      "torch.manual_seed fixes them. Ask: which one turns X into Q?",
                      key="weights_fixed")  # fmt: skip
    stages = [blocks.stage_section(lesson, name, numbers=True) for name in STAGES_SHOWN]
    return [stages[0], weights, *stages[1:]]


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


STAGES_SHOWN = ("x", "q", "k", "v", "scores", "scaled", "masked", "weights", "output")


def settings(causal: bool) -> Settings:
    """The lesson's settings: the classic preset, only the sidebar's causal switch applies."""
    return Settings(source="worked", causal=causal)


def by_hand_questions(lesson: Computed) -> tuple[Drill, ...]:
    """By hand: asked after the scores, before the stages that hold the answers."""
    return worked_example_by_hand(lesson.trace, lesson.labels)


def lesson_questions(lesson: Computed) -> tuple[Drill, ...]:
    """The check-yourself questions: a weight and an output entry under the other mask."""
    return worked_example_questions(lesson.trace, lesson.labels, lesson.settings.causal)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(lessons.computed_at(settings(s.causal)))  # the encodings as published


LESSON = LessonSpec(
    number=5,
    path="pages/worked_example.py",
    title="5 · Worked example",
    heading="5 · The worked example",
    minutes=10,
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
