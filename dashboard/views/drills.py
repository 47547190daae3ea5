"""Lesson 8's blocks: exercises from the live numbers, each graded with its working, and the
session's score."""

from __future__ import annotations

import zlib

import numpy as np
import streamlit as st
import torch

from attention.drills import Drill, Grade, grade, make_drills
from dashboard import state
from dashboard.controls import SEED_RANGE
from dashboard.lessons import Lesson
from dashboard.render.blocks import show_heatmap
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import arrow_table, matrix_view
from dashboard.text import plain

TITLES = {
    "argmax": "Which key wins?",
    "score": "One scaled score",
    "weight": "One attention weight",
    "output": "One output entry",
    "shape": "A shape after a reshape",
    "mask": "Which keys does the mask block?",
}
KIND_OF_ROW = {"argmax": "score", "score": "projection", "weight": "score", "output": "projection"}


@state.cached
def drills(key: tuple, exercise_set: int, *, _lesson: Lesson) -> tuple[Drill, ...]:
    """The drills of one exercise set on one lesson (the sidebar's seed and the set pick them)."""
    seed = _lesson.settings.seed * 100_003 + exercise_set
    return make_drills(_lesson.trace, _lesson.labels, causal=_lesson.settings.causal, seed=seed)


def exercise_set() -> int:
    """The exercise set number: a new one gives new questions on the same numbers."""
    low, high = SEED_RANGE
    if not isinstance(st.session_state.get("drill_set"), int):
        st.session_state["drill_set"] = low
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    with right:
        st.button("New exercises", on_click=next_set, icon=":material/casino:")
    with left:
        return int(
            st.number_input("Exercise set", low, high, key="drill_set", persist_state="session")
        )


def next_set() -> None:
    low, high = SEED_RANGE
    current = st.session_state.get("drill_set", low)
    st.session_state["drill_set"] = low if current >= high else current + 1


def show_given(drill: Drill) -> None:
    """The numbers a drill needs: a small table beside its heatmap (blocked cells masked)."""
    given = drill.given
    if given is None:
        return
    names = [name for name, _ in given.rows]
    numbers = np.array(
        [[np.nan if v is None else float(v) for v in values] for _, values in given.rows]
    )
    table, config = arrow_table(
        numbers, names, list(given.columns), "row", "column", blocked=np.isnan(numbers)
    )
    kind = KIND_OF_ROW.get(drill.kind)
    if kind is None:
        st.dataframe(table, column_config=config, hide_index=True)
        return
    values = np.array([[0.0 if v is None else v for v in row] for _, row in given.rows])
    blocked = np.array([[v is None for v in row] for _, row in given.rows])
    if drill.kind == "argmax":  # the 0/1 row says which keys count; colour only the scores
        values, blocked, names = values[:1], blocked[:1], names[:1]
    view = matrix_view(
        tuple(names),
        tuple(given.columns),
        _matrix=torch.from_numpy(values),
        _blocked=torch.from_numpy(blocked),
        kind=kind,
        row_title="row",
        col_title="key" if drill.kind != "score" else "feature",
    )
    with wrapping_row():
        width = natural_width(config, table.num_columns)
        st.dataframe(table, column_config=config, hide_index=True, width=width)
        show_heatmap(view, "The drill's numbers")


def show_verdict(verdict: Grade, drill: Drill) -> None:
    """Right or wrong with the full working; a message for an answer that cannot be read."""
    message = plain(verdict.message)
    if verdict.status == "invalid":
        st.warning(message, icon=":material/help:")
        return
    if verdict.status == "right":
        st.success(message, icon=":material/check_circle:")
    else:
        st.error(message, icon=":material/cancel:")
    with st.expander("The working", expanded=verdict.status == "wrong"):
        st.code("\n".join(drill.working), language=None, wrap_lines=True)


def show_drill(number: int, drill: Drill, key: tuple) -> None:
    """One exercise: the question (as text), its numbers, an answer box, the verdict."""
    st.subheader(f"{number}. {TITLES[drill.kind]}")
    st.text(drill.prompt)
    show_given(drill)
    # one answer box per drill, per set and per setting: new numbers start with an empty box
    box = f"drill_{drill.kind}_{key[-1]}_{zlib.crc32(repr(key[0]).encode())}"
    typed = st.text_input(f"Your answer ({number})", key=box, persist_state="session", max_chars=60)
    if not typed.strip():
        return
    verdict = grade(drill, typed)
    show_verdict(verdict, drill)
    if verdict.status != "invalid":
        st.session_state.setdefault("drill_results", {})[(*key, drill.kind)] = (
            verdict.status == "right"
        )


def score() -> tuple[int, int]:
    """Right answers and answered drills this session (the latest answer to each counts)."""
    results = st.session_state.get("drill_results", {})
    return sum(results.values()), len(results)


def show_drills(lesson: Lesson, number: int) -> None:
    """Every drill of the set, then the session's score."""
    key = (lesson.key, number)
    for index, drill in enumerate(drills(lesson.key, number, _lesson=lesson), start=1):
        show_drill(index, drill, key)
    right, answered = score()
    st.metric("Score this session", f"{right} / {answered}")
