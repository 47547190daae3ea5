"""Lesson 8's blocks: exercises from the live numbers, each graded with its working, and the
score on the set (each box's latest answer)."""

from __future__ import annotations

import zlib
from functools import partial

import numpy as np
import pyarrow as pa
import streamlit as st
import torch

from attention import questions
from attention.drill_set import SEED_STRIDE, make_drills
from attention.drills import Drill, Given, Grade, grade, hint
from dashboard import controls, lessons, progress, state
from dashboard.controls import SEED_RANGE, Settings
from dashboard.lessons import Lesson
from dashboard.render import blocks, fit, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import Recorded, record, replay
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import arrow_table, matrix_view
from dashboard.render.presenter import Section
from dashboard.render.tables import corner_title
from dashboard.spec import LessonSpec
from dashboard.text import plain

TITLES = {
    "argmax": "Which key wins?",
    "score": "One scaled score",
    "weight": "One attention weight",
    "output": "One output entry",
    "shape": "A shape after a reshape",
    "mask": "Which queries does the mask keep from a key?",
}
KIND_OF_ROW = {"argmax": "score", "score": "projection", "weight": "score", "output": "projection"}


@state.per_lesson
def drills(lesson: Lesson, exercise_set: int) -> tuple[Drill, ...]:
    """The drills of one exercise set on one lesson (the sidebar's seed and the set pick them)."""
    seed = lesson.settings.seed * SEED_STRIDE + exercise_set
    return make_drills(lesson.trace, lesson.labels, causal=lesson.settings.causal, seed=seed)


def exercise_set() -> int:
    """The exercise set number: a new one gives new questions on the same numbers."""
    low, high = SEED_RANGE
    raw = controls.linked("drill_set")
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    with right:
        st.button("New exercises", on_click=next_set, icon=":material/casino:")
        layout.reset_button(LESSON.params)
    with left:
        chosen = int(
            st.number_input(
                "Exercise set", low, high, layout.remember_default("drill_set", low),
                key="drill_set", bind="query-params",
                persist_state="session",
            )
        )  # fmt: skip
    controls.link_note("drill_set", raw, chosen, f"a whole number from {low} to {high}")
    return chosen


def next_set() -> None:
    low, high = SEED_RANGE
    current = st.session_state.get("drill_set", low)
    st.session_state["drill_set"] = low if current >= high else current + 1


def number_row(values: tuple) -> bool:
    """A row of numbers (None = blocked), not of yes/no (bool) or positions (int)."""
    return all(v is None or (isinstance(v, float)) for v in values)


def label_table(rows: list, columns: tuple[str, ...]) -> pa.Table:
    """Rows of yes/no or positions as printed: True / False and whole numbers, never 1.0000."""
    corner = corner_title("row", "column", list(columns))
    arrays = [pa.array([name for name, _ in rows], pa.string())]
    arrays += [
        pa.array([str(values[c]) for _, values in rows], pa.string()) for c in range(len(columns))
    ]
    return pa.Table.from_arrays(arrays, names=[corner, *columns])


def show_given(drill: Drill, screen: tuple[int, int] | None = None) -> None:
    """What a drill needs: its numbers in a small table beside their heatmap (blocked cells
    masked), and rows of yes/no or positions in a table of their own, printed as they are. On
    a projector's `screen`, the numbers' heatmap alone (its cells print them), else the rows
    as an HTML table, scaled with the section (presenter.FIT)."""
    if drill.given is None:
        return
    numbers, labels, view = given_elements(drill.given, drill.kind)
    if screen is not None:
        rows = [row for row in drill.given.rows if not number_row(row[1])]
        if view is not None:
            blocks.show_fitted(view, "The drill's numbers", *screen)
        elif rows:
            st.table(label_table(rows, drill.given.columns), hide_index=True, width="content")
        return
    with wrapping_row():
        with st.container(width="content"):
            for table in (numbers, labels):
                if table is not None:
                    replay(table)
        if view is not None:
            show_heatmap(view, "The drill's numbers")


@state.cached  # one drill's tables, marshalled once for every session (render/elements.py)
def given_elements(given: Given, kind: str) -> tuple[Recorded | None, Recorded | None, object]:
    """The elements of a drill's given numbers: the number rows' table, the yes/no or
    positions table, and the number rows' heatmap view (None where there are none)."""
    rows = [(name, values) for name, values in given.rows if number_row(values)]
    labels = [(name, values) for name, values in given.rows if not number_row(values)]
    numbers = heatmap = None
    if rows:
        names = [name for name, _ in rows]
        values = np.array([[np.nan if v is None else v for v in row] for _, row in rows])
        table, config = arrow_table(
            values, names, list(given.columns), "row", "column", np.isnan(values)
        )
        width = natural_width(config, table.num_columns)
        # a blocked cell is empty, as the questions say ("blocked keys empty"), not "None"
        numbers = record(lambda dg: dg.dataframe(
            table, column_config=config, hide_index=True, width=width, placeholder=""
        ))  # fmt: skip
        if kind in KIND_OF_ROW:
            heatmap = numbers_view(given, rows, kind)
    shown = None
    if labels:
        label_rows = label_table(labels, given.columns)
        shown = record(lambda dg: dg.dataframe(label_rows, hide_index=True, width="content"))
    return numbers, shown, heatmap


def numbers_view(given: Given, rows: list, drill_kind: str):
    """The heatmap of a drill's number rows (blocked cells masked)."""
    values = np.array([[0.0 if v is None else v for v in row] for _, row in rows])
    blocked = np.array([[v is None for v in row] for _, row in rows])
    return matrix_view(
        tuple(name for name, _ in rows),
        tuple(given.columns),
        _matrix=torch.from_numpy(values),
        _blocked=torch.from_numpy(blocked),
        kind=KIND_OF_ROW[drill_kind],
        row_title="row",
        col_title="key" if drill_kind != "score" else "feature",
    )


def show_verdict(verdict: Grade, drill: Drill, box: str = "") -> None:
    """Right or wrong with the full working; a message for an answer that cannot be read. A
    first wrong answer in a `box` gets a hint and a second try: the answer and the working
    come after a second wrong answer, or on request."""
    message = plain(verdict.message)
    if verdict.status == "invalid":
        st.warning(message, icon=":material/help:")
        return
    if verdict.status == "right":
        st.success(message, icon=":material/check_circle:")
    elif box and first_wrong(box, message):
        st.error(
            plain(f"Not quite. Hint: {hint(drill, verdict)} Try again."), icon=":material/cancel:"
        )
        with st.expander("Show the answer and the working"):
            st.error(message, icon=":material/cancel:")
            show_working(verdict, drill, expanded=None)
        return
    else:
        st.error(message, icon=":material/cancel:")
    show_working(verdict, drill, expanded=verdict.status == "wrong")


def first_wrong(box: str, message: str) -> bool:
    """Whether this wrong answer is the first one typed in the box (a box remembers its wrong
    answers for the session: retyping the same one is still the first)."""
    tried = st.session_state.setdefault(f"{box}_wrong", [])
    if message not in tried:
        tried.append(message)
    return tried.index(message) == 0


def show_working(verdict: Grade, drill: Drill, expanded: bool | None) -> None:
    """The bug hunt's page for the classic mistake the number matches, and the working: in an
    expander (open when `expanded`), or as it is (None: already inside one)."""
    if verdict.mistake is not None:  # a classic mistake gives that number: see it break
        for name, title in zip(verdict.mistake.bugs, verdict.mistake.titles, strict=True):
            st.page_link(
                "pages/bug_hunt.py",
                label=f"See it in the bug hunt: {title}",
                icon=":material/bug_report:",
                query_params={"mode": "explore", "bug": name},
            )
    if expanded is None:
        st.code("\n".join(drill.working), language=None, wrap_lines=True)
        return
    with st.expander("The working", expanded=expanded):
        st.code("\n".join(drill.working), language=None, wrap_lines=True)


def show_drill(
    number: int, drill: Drill, key: tuple, screen: tuple[int, int] | None = None
) -> Grade | None:
    """One exercise: the question (as text), its numbers, an answer box, the verdict on what the
    box holds now (None while it is empty). On a projector's `screen`: the question in one
    paragraph and the verdict in one line, without the working."""
    if screen is None:
        st.subheader(f"{number}. {TITLES[drill.kind]}")
        st.text(drill.prompt)
    else:
        st.markdown(f"**{TITLES[drill.kind]}.** {drill.prompt}")
    show_given(drill, screen)
    # one answer box per drill, per set and per setting: new numbers start with an empty box
    box = f"drill_{drill.kind}_{key[-1]}_{zlib.crc32(repr(key[0]).encode())}"
    typed = st.text_input(
        f"Your answer ({number})", key=box, persist_state="session", max_chars=60,
        label_visibility="visible" if screen is None else "collapsed", placeholder="Your answer",
    )  # fmt: skip
    if not typed.strip():
        return None
    if drill.diagnose is not None:  # a wrong number a classic mistake gives is named
        drill = lessons.diagnosed(drill.prompt, drill.answer_text, drill)
    verdict = grade(drill, typed)
    if screen is None:
        show_verdict(verdict, drill, box)
    else:
        mark = {"right": "✔ ", "wrong": "✘ "}.get(verdict.status, "")
        st.caption(mark + plain(verdict.message))
    return verdict


def score(verdicts: list[Grade | None]) -> tuple[int, int]:
    """Right answers and answered drills of this set: each box's latest answer counts once; an
    empty box or one that cannot be read is not answered."""
    answered = [v for v in verdicts if v is not None and v.status != "invalid"]
    return sum(v.status == "right" for v in answered), len(answered)


def show_drills(lesson: Lesson, number: int) -> None:
    """Every drill of the set, then the score on it (a new set starts at 0 / 0)."""
    key = (lesson.key, number)
    verdicts = [
        show_drill(index, drill, key) for index, drill in enumerate(drills(lesson, number), start=1)
    ]
    right, answered = score(verdicts)
    progress.drill_score(number, right, answered)
    best = progress.progress().get(f"drills:{number}")
    st.metric(
        "Score on this exercise set",
        f"{right} / {answered}",
        help=None if best is None else f"Your best on this set, kept in this browser: {best}.",
    )
    if best is not None and best != f"{right}/{answered}":
        st.caption(
            f"Your best on this exercise set, kept in this browser: {best.replace('/', ' / ')}."
        )


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 8: each drill of the current exercise set."""
    lesson = fit.current_lesson()
    low, high = controls.SEED_RANGE
    number = controls.lesson_value("drill_set", range(low, high + 1), low)
    shown = drills(lesson, number)
    key = (lesson.key, number)
    return [
        Section(f"Drill {index}", partial(show_drill, index, drill, key, (blocks.SCREEN[0], 170)),
                "Give the class a minute with pencil and paper, then type the best answer.")
        for index, drill in enumerate(shown, start=1)
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    lesson = lessons.lesson_at(s)  # the page's first exercise set, 0
    return questions.drills_questions(
        lesson.trace, lesson.labels, lesson.settings.seed * SEED_STRIDE
    )


LESSON = LessonSpec(
    number=8,
    path="pages/drills.py",
    title="8 · Drills",
    icon=":material/edit_note:",
    summary="Exercises made from the live numbers: scores, weights, outputs, shapes, masks.",
    objectives=(
        "compute a scaled score, a weight and an output entry by hand",
        "give a tensor's shape after each reshape of multi-head attention",
        "say which queries a mask keeps from a key",
    ),
    recap="every number of the layer can be computed by hand from the one before it.",
    params=("drill_set",),
    sections=sections,
    class_questions=class_questions,
)
