"""Class mode reads the lessons from the registry (issue 43): every lesson that declares class
questions can be asked in a class, answered, tallied and revealed, graded as its page grades,
through a real store (a SQLite file). tests/test_scratch_lesson.py runs this for a lesson made of
three files."""

from __future__ import annotations

import pytest

from dashboard.classroom import ClassStore, asking
from dashboard.classroom.database import dispose_engine
from dashboard.controls import Settings


@pytest.fixture
def store(tmp_path):
    address = f"sqlite:///{tmp_path / 'classroom.db'}"
    yield ClassStore(address, joins_per_minute=100)
    dispose_engine(address)


@pytest.mark.parametrize("lesson", asking.ASKABLE, ids=lambda lesson: lesson.path)
def test_a_lessons_first_question_is_asked_answered_tallied_and_revealed(store, lesson):
    (question, *_) = asking.lesson_questions(lesson.path, Settings())
    assert question.prompt.startswith(lesson.title)
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    qid = store.ask(
        code, teacher, question.prompt, question.choices, question.answer, question.working,
        question.mistakes, question.kind,
    )  # fmt: skip
    right, wrong = store.join(code, "Ada"), store.join(code, "Bo")
    store.answer(code, right, qid, question.answer)
    if question.choices is not None:
        other = next(choice for choice in question.choices if choice != question.answer)
    else:
        other = "123456"  # no lesson's answer
    store.answer(code, wrong, qid, other)
    assert sum(store.tally(code, teacher, qid).counts.values()) == 2
    store.reveal(code, teacher, qid)
    (asked,) = store.questions(code, teacher)
    assert asking.is_right(asked, str(question.answer))
    assert not asking.is_right(asked, other)
