"""The presenter's helpers shared by the lessons' sections: the current lesson, a stage's section
and its note for the teacher. Blocks fit one projector screen themselves (their `screen`)."""

from __future__ import annotations

from functools import partial

from dashboard import controls, lessons
from dashboard.lessons import Lesson
from dashboard.render import blocks
from dashboard.render.matrices import STAGE_BY_NAME
from dashboard.render.presenter import Section

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


def current_lesson(settings: controls.Settings | None = None) -> Lesson:
    """The lesson of the sidebar's settings (stops the page with the reason if there is none)."""
    lesson = lessons.lesson(settings or controls.current_settings())
    blocks.require_lesson(lesson)
    return lesson


# px of a stage's rows: what its formula (two lines for the mask's cases), its shape and two
# lines of words leave of the smallest screen's 480 px (853 x 480: 1280 x 720 at 150 %)
STAGE_ROWS = 136


def stage_section(lesson: Lesson, name: str, head: int = 0, numbers: bool = False) -> Section:
    stage = STAGE_BY_NAME[name]
    screen = (blocks.SCREEN[0], STAGE_ROWS)
    draw = partial(blocks.show_stage, lesson, name, head, numbers=numbers, screen=screen)
    return Section(stage.title, draw, STAGE_NOTES[name], key=name)
