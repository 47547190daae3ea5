"""Lesson 8's blocks: exercises from the live numbers, each graded with its working, and the
score on the set (each box's latest answer)."""

from __future__ import annotations

import zlib
from functools import partial

import streamlit as st

from attention.drill_set import SEED_STRIDE, drills_questions, make_drills
from attention.drills import Drill, Grade, grade
from dashboard import controls, lessons, progress, state
from dashboard.controls import SEED_RANGE, Settings
from dashboard.lessons import Computed
from dashboard.render import blocks, layout
from dashboard.render.exercise import show_given, show_verdict
from dashboard.render.presenter import Section
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


@state.per_lesson
def drills(lesson: Computed, exercise_set: int) -> tuple[Drill, ...]:
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


def show_drills(lesson: Computed, number: int) -> None:
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
    lesson = blocks.current_lesson()
    low, high = controls.SEED_RANGE
    number = controls.lesson_value("drill_set", range(low, high + 1), low)
    shown = drills(lesson, number)
    key = (lesson.key, number)
    return [
        Section(f"Drill {index}", partial(show_drill, index, drill, key, (blocks.SCREEN[0], 170)),
                "Give the class a minute with pencil and paper, then type the best answer.",
                key=f"drill_{index}")
        for index, drill in enumerate(shown, start=1)
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(lesson: Computed, number: int) -> tuple[Drill, ...]:
    """The check-yourself questions beyond exercise set `number`: a weight and a shape."""
    return drills_questions(
        lesson.trace, lesson.labels, lesson.settings.seed * SEED_STRIDE + number
    )


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(lessons.computed_at(s), 0)  # the page's first exercise set, 0


LESSON = LessonSpec(
    number=8,
    path="pages/drills.py",
    title="8 · Drills",
    minutes=8,
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
