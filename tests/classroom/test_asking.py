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


def test_every_named_mistake_links_only_to_a_bug_the_bug_hunt_opens():
    """Issue 52, item 9: "Show it: Softmax over the target axis" opened the bug hunt with
    "bug=cross_softmax_over_target is not a bug of this lesson" and showed another bug. Every
    diagnostic choice of every lesson: a mistake the bug hunt has is linked to it, one it has not
    (lesson 13's) is not linked at all."""
    from attention.bugs import BUGS
    from dashboard.frame import LESSONS

    named = {
        bug
        for lesson in LESSONS
        for question in asking.lesson_questions(lesson.path, Settings())
        for _, causes in question.mistakes
        for bug, _ in causes
    }
    assert named & set(BUGS) and named - set(BUGS)  # both kinds are asked
    for bug in named:
        params = asking.bug_hunt_params(bug)
        assert (params is not None) == (bug in BUGS)
        assert params is None or params == {"mode": "explore", "bug": bug}


def test_the_tally_names_its_question_and_cuts_no_mistake_name():
    """Issue 52, items 7 and 16: a bar's label is the value, then the mistake on a line of its
    own, never cut; the chart's title (and so its saved file's name) names the question."""
    from dashboard.render.tally import tally_chart, tally_frame

    long = "softmax over the target axis or taking Q from the source instead of the target"
    frame = tally_frame({"0.1415": 3, "0.5": 2}, 5, lambda v: v == "0.5", {"0.1415": long})
    spec = tally_chart(frame, "13 · Cross-attention, question 1: the class's answers").to_dict()
    axis = spec["layer"][0]["encoding"]["y"]["axis"]
    assert axis["labelLimit"] == 0 and "split(datum.label, ' · ')" in axis["labelExpr"]
    assert spec["layer"][0]["title"].startswith("13 · Cross-attention, question 1")
    assert f"0.1415 · {long}" in set(frame["answer"])


def test_every_class_question_stands_alone():
    """Issue 52, item 11: lesson 3's weight question said "under that mask (...)", pointing to
    a question class mode never asks. No class question of any lesson points back to another."""
    from dashboard.frame import LESSONS

    for settings in (Settings(), Settings(causal=False, seq_len=4), Settings(seed=7, n_heads=4)):
        for lesson in LESSONS:
            for question in asking.lesson_questions(lesson.path, settings):
                prompt = question.prompt.lower()
                for back in ("that mask", "the previous question", "question above", "as above"):
                    assert back not in prompt, (lesson.path, question.prompt)


def test_a_multiple_choice_question_has_no_typed_answers_hint():
    """Issue 52, item 10: a multiple-choice question said "(A decimal, or a percentage.)";
    and a choice was named "a causal mask across", which read unfinished."""
    from attention.cross.questions import TYPED_HINT
    from dashboard.frame import LESSONS

    for lesson in LESSONS:
        for question in asking.lesson_questions(lesson.path, Settings()):
            if question.choices is not None:
                assert TYPED_HINT not in question.prompt, question.prompt
            for _, causes in question.mistakes:
                assert all(not title.endswith(" across") for _, title in causes)
