"""Lesson 8 (Drills) through AppTest: the score counts each box's latest answer and a new set
starts it again (issue 17 item 12); the page states the grading rule the grader applies, a
weight may be a percentage, and yes/no and positions print as such (item 13)."""

import pytest
from conftest import LESSON_PAGES, default_drills, no_exception, open_page

from attention.drills import rule
from dashboard.frame import LESSONS

DRILL_PAGE = "pages/drills.py"


def answer(at, number: int, typed: str):
    next(t for t in at.text_input if t.label == f"Your answer ({number})").input(typed).run()
    no_exception(at)
    return at


def score(at) -> str:
    return next(m.value for m in at.metric if m.label == "Score on this exercise set")


def test_app_drills_score_counts_each_boxs_latest_answer_only():
    at = open_page(DRILL_PAGE)
    no_exception(at)
    drills = default_drills()
    assert score(at) == "0 / 0"
    assert score(answer(at, 2, drills["score"].answer_text)) == "1 / 1"
    assert score(answer(at, 3, drills["weight"].answer_text)) == "2 / 2"
    assert score(answer(at, 2, "banana")) == "1 / 1"  # unreadable: no longer right, not answered
    assert score(answer(at, 2, str(drills["score"].answer + 0.5))) == "1 / 2"  # now wrong
    assert score(answer(at, 2, "")) == "1 / 1"  # cleared
    assert score(answer(at, 2, drills["score"].answer_text)) == "2 / 2"
    next(b for b in at.button if b.label == "New exercises").click().run()
    no_exception(at)
    assert score(at) == "0 / 0"  # a new set starts a new score


def test_app_drills_state_the_rule_and_take_a_percentage():
    at = open_page(DRILL_PAGE)
    assert any(c.value == rule() for c in at.caption), [c.value for c in at.caption]
    weight = default_drills()["weight"].answer
    answer(at, 3, f"{100 * weight:.1f} %")
    assert len(at.success) == 1, [w.value for w in (*at.warning, *at.error)]
    answer(at, 2, "18 %")
    assert any("Only a weight can be a percentage" in w.value for w in at.warning)


def test_app_drills_print_yes_no_and_positions_as_they_are():
    at = open_page(DRILL_PAGE)
    no_exception(at)
    frames = [d.value for d in at.dataframe]
    allowed = next(f for f in frames if "allowed" in f.iloc[:, 0].tolist())
    row = allowed[allowed.iloc[:, 0] == "allowed"].iloc[0, 1:].tolist()
    expected = default_drills()["argmax"].given.rows[1][1]
    assert row == [str(v) for v in expected] and set(row) <= {"True", "False"}
    positions = next(f for f in frames if "position" in f.iloc[:, 0].tolist())
    assert positions.iloc[0, 1:].tolist() == [str(p) for p in range(6)]


@pytest.mark.parametrize("page", [p for p in LESSON_PAGES if not p.endswith("drills.py")])
def test_app_check_yourself_says_percentage_only_where_a_question_takes_one(page):
    """Issue 28 item 2: every lesson's Check yourself said "a weight may be typed as a
    percentage" above questions that all refused "13.0 %". The rule now says it only where a
    question is a weight question, which the grader takes a percentage for (issue 42, item 3:
    lessons 1, 3, 4, 5 and 7 ask for a weight, and now take "34 %" for it, as class mode does)."""
    from attention.drills import TOLERANCE, grade
    from dashboard.controls import Settings

    at = open_page(page)
    no_exception(at)
    (stated,) = [c.value for c in at.caption if f"within {TOLERANCE}" in c.value]
    lesson = next(lesson for lesson in LESSONS if lesson.path == page)
    asked = lesson.class_questions(Settings())
    weights = [q for q in asked if q.takes_percent]
    assert ("percentage" in stated) == bool(weights), page
    for question in weights:
        assert grade(question, f"{100 * float(question.answer):.3f} %").status == "right"
