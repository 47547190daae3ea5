"""Each lesson's time for a learner alone, from its words: the home page says it beside the
lesson (issue 30, item 11), so that the course plan's times hold.

    python -m benchmarks.reading_times        # measure and print each lesson's minutes

A lesson's time = the words of its core path (every text the page shows at its default settings,
outside its closed expanders: "Going further", the working of an answer; Take it home and Check
yourself are read, closed at first as they are) at WORDS_PER_MINUTE,
plus MINUTES_PER_QUESTION for each Check yourself question (`dashboard.spec.reading_minutes`).
A lesson declares the result (`minutes=` in its LessonSpec); tests/dashboard/test_reading_times.py
measures again and fails with the spec's message (`LessonSpec.unmet_on_page`) when a
declaration no longer holds.
"""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dashboard.lesson_frame import SECTIONS
from dashboard.spec import reading_minutes

ROOT = Path(__file__).resolve().parents[1]
TEXT = ("markdown", "caption", "text", "header", "subheader", "title", "alert", "latex")


def elements(node):
    """Every element under an AppTest node, in the order the page draws them."""
    children = getattr(node, "children", None)
    if not children:
        yield node
        return
    for key in sorted(children):
        yield from elements(children[key])


def measure(page: str) -> tuple[int, int]:
    """(core words, Check yourself questions) of a lesson at its default settings."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    for key in SECTIONS:  # Take it home and Check yourself: closed at first, read by every learner
        at.session_state[key] = True
    at.switch_page(page)
    at.run()
    core = {"Take it home", "Check yourself"}
    closed = {id(e) for x in at.expander if x.label not in core for e in elements(x)}
    words = 0
    for element in elements(at.main):
        if element.type in TEXT and id(element) not in closed:
            words += len(re.findall(r"[^\W_]+", str(getattr(element, "value", ""))))
    stem = Path(page).stem
    own = re.compile(rf"check_{stem}_\d+_")
    questions = sum(1 for box in at.text_input if own.match(str(box.key)))
    return words, questions


def main() -> None:
    from dashboard.frame import LESSONS

    total = 0
    for lesson in LESSONS:
        words, questions = measure(lesson.path)
        measured = reading_minutes(words, questions)
        total += measured
        declared = "" if measured == lesson.minutes else f" (declares {lesson.minutes})"
        print(f"{lesson.title:32s} {words:5d} words, {questions} questions: "
              f"{measured} min{declared}")  # fmt: skip
    print(f"{total} min in all; a lesson declares its own as `minutes=` in its LessonSpec")


if __name__ == "__main__":
    main()
