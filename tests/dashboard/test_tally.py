"""The projector's tally (issue 28, item 7): answers the grader takes as one are one bar, and
the percentages add up to 100."""

from types import SimpleNamespace

import pytest

from dashboard.classroom.asking import grouped, is_right
from dashboard.classroom.store import WHOLE
from dashboard.render.tally import percentages, tally_frame


def numeric(answer: str, kind: str | None = None):
    return SimpleNamespace(choices=None, answer=answer, prompt="q", kind=kind, mistakes=())


def test_tally_whole_number_question_is_graded_exactly_as_the_lesson_grades_it():
    """Issue 28, item 7: "1952.004" was right in class mode, refused in the lesson. Lesson 10's
    whole-number questions, asked in class mode, keep their kind."""
    from attention.drills import grade
    from dashboard.classroom.asking import lesson_questions
    from dashboard.controls import Settings
    from dashboard.views import kv_cache

    (question, *_) = lesson_questions("pages/kv_cache.py", Settings())
    assert question.kind == WHOLE
    (drill, *_) = kv_cache.class_questions(Settings())
    for typed in (question.answer, f"{question.answer}.004", f"{int(question.answer) + 1}"):
        lesson_says = grade(drill, str(typed)).status == "right"
        assert is_right(numeric(str(question.answer), WHOLE), str(typed)) == lesson_says
    assert not is_right(numeric("1952", WHOLE), "1952.004")
    assert is_right(numeric("1952"), "1952.004")  # a number question: within 0.005


def test_tally_right_answers_typed_two_ways_are_one_green_bar():
    question = numeric("0.17604")
    bars = grouped(question, {"0.176": 2, "0.17604": 1, "0.19": 1, "0.5": 3, "0.503": 1})
    assert bars == {"0.1760": 3, "0.19": 1, "0.5": 4}  # 0.176 is within 0.005: right
    frame = tally_frame(bars, 8, lambda value: is_right(question, value))
    assert list(frame.verdict) == ["right", "wrong", "wrong"]


def test_tally_groups_are_what_the_grader_grades_alike():
    question = numeric("0.17604")
    counts = {"0.176": 2, "0.17604": 1, "0.18": 1, "0.5": 3, "0.503": 1, "0.19": 2}
    bars = grouped(question, counts)
    for value in counts:
        bar = next(b for b in bars if abs(float(b) - float(value)) <= 0.005 + 1e-9)
        assert is_right(question, value) == is_right(question, bar)
    assert sum(bars.values()) == sum(counts.values())


def test_tally_choices_are_left_as_they_are():
    question = SimpleNamespace(choices=("a", "b"), answer="a", prompt="q", mistakes=())
    assert grouped(question, {"a": 1, "b": 0}) == {"a": 1, "b": 0}


@pytest.mark.parametrize("counts", [[1, 1, 1], [2, 2, 2, 1], [1, 0, 0], [7, 5, 3, 3, 1], [0, 0]])
def test_tally_percentages_add_up_to_100(counts):
    shares = percentages(counts)
    assert sum(shares) == (100 if sum(counts) else 0)
    assert all(
        abs(s - 100 * n / max(sum(counts), 1)) < 1 for s, n in zip(shares, counts, strict=True)
    )


def test_tally_open_question_names_the_right_bar_by_what_was_typed_never_the_answer():
    """Issue 42, item 2: before the reveal the right answers' bar showed the exact answer
    ("0.3410429529"); now it shows the students' most common typed answer, and after the
    reveal the answer as the reveal prints it (4 decimals), one rounding for both."""
    question = numeric("0.3410429529")
    counts = {"0.34": 3, "0.341": 1, "0.3410429529": 0, "0.2": 2}
    before = grouped(question, counts, revealed=False)
    assert before == {"0.2": 2, "0.34": 4}
    assert not any("0.3410" in bar for bar in before)
    after = grouped(question, counts, revealed=True)
    assert after == {"0.2": 2, "0.3410": 4}


@pytest.mark.parametrize("path", ["pages/worked_example.py", "pages/step_by_step.py"])
def test_class_weight_questions_take_a_percentage_as_their_lesson_does(path):
    """Issue 42, item 3: lesson 5's and lesson 1's weight questions, asked in class, are graded
    as the lesson grades them: "34 %" is a weight, right where the lesson says right."""
    from attention.drills import grade
    from dashboard.classroom.asking import lesson_questions
    from dashboard.classroom.store import WEIGHT
    from dashboard.controls import Settings
    from dashboard.frame import LESSONS

    lesson = next(lesson for lesson in LESSONS if lesson.path == path)
    drills = lesson.class_questions(Settings())
    asked = lesson_questions(path, Settings(), choices=False)
    pairs = [(d, q) for d, q in zip(drills, asked, strict=False) if d.takes_percent]
    assert pairs, "no weight question to check"
    for drill, question in pairs:
        assert question.kind == WEIGHT
        percent = f"{100 * float(drill.answer):.2f} %"
        assert grade(drill, percent).status == "right"
        assert is_right(question, percent)
