"""The teacher's class report (issue 27) from a real store (SQLite and PostgreSQL): its counts
equal the answers stored, each mistake is named with how many gave it, numbers within the
grader's tolerance count as right, and nicknames appear only in the answers download."""

from __future__ import annotations

import pytest

from dashboard.classroom import ClassStore
from dashboard.classroom.report import answers_with_nicknames, objectives_of, report
from dashboard.frame import LESSONS


@pytest.fixture
def store(url) -> ClassStore:
    return ClassStore(url, joins_per_minute=100)


def test_report_counts_equal_the_answers_stored(store):
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    title = LESSONS[0].title
    choice = store.ask(
        code, teacher, f"{title}, question 1: which weight?", ["0.2500", "0.5000", "0.1000"],
        "0.2500", mistakes=[("0.5000", [("softmax_over_queries", "Softmax over the wrong axis")])],
    )  # fmt: skip
    number = store.ask(code, teacher, "How many heads does the layer have?", None, 4)
    students = [store.join(code, name) for name in ("Ada", "Bo", "Cy", None, "Eve")]
    for token, value in zip(students, ("0.2500", "0.5000", "0.5000", "0.1000"), strict=False):
        store.answer(code, token, choice, value)
    for token, value in zip(students, ("4", "4.004", "3", "5", "3"), strict=True):
        store.answer(code, token, number, value)
    store.reveal(code, teacher, choice)
    frame = report(store, code, teacher).set_index("question")
    first = frame.loc[f"{title}, question 1"]
    assert (first["answered"], first["joined"], first["right"]) == (4, 5, 1)
    assert first["share right"] == 0.25
    assert first["mistakes named"] == "softmax over the wrong axis: 2"
    assert first["other wrong answers"] == 1  # 0.1000: no classic mistake gives it
    assert first["lesson's objectives"] == "; ".join(LESSONS[0].objectives)
    own = frame.loc["Your teacher's question"]
    assert (own["answered"], own["right"], own["other wrong answers"]) == (5, 2, 3)
    assert own["lesson's objectives"] == ""
    assert "Ada" not in frame.to_csv()  # never a nickname in the report
    answers = answers_with_nicknames(store, code, teacher)
    assert len(answers) == 9
    assert sorted(answers[answers.question == f"{title}, question 1"].nickname) == [
        "", "Ada", "Bo", "Cy",
    ]  # fmt: skip


def test_report_is_the_teachers_alone(store):
    made = store.create_class()
    student = store.join(made.code, "Ada")
    with pytest.raises(PermissionError):
        report(store, made.code, student)
    with pytest.raises(PermissionError):
        answers_with_nicknames(store, made.code, student)


def test_objectives_of_a_lesson_question():
    for lesson in LESSONS:
        assert objectives_of(f"{lesson.title}, question 2") == "; ".join(lesson.objectives)
    assert objectives_of("Your teacher's question") == ""
