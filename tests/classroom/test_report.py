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
    # issue 42, item 7: right or wrong in the download, graded as the tally grades (4.004 is 4
    # within the tolerance; the report's counts are the same answers')
    graded = dict(zip(answers.answer, answers.right, strict=False))
    assert (graded["0.2500"], graded["0.5000"], graded["0.1000"]) == ("yes", "no", "no")
    assert (graded["4"], graded["4.004"], graded["3"], graded["5"]) == ("yes", "yes", "no", "no")
    for question, rows in answers.groupby("question"):
        assert (rows.right == "yes").sum() == frame.loc[question, "right"]


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


def test_a_typed_answer_a_mistake_gives_is_named_in_the_tally_and_the_report(store):
    """Issue 27: a diagnostic question asked as a typed number. The answers are grouped by the
    grader (0.2433 and 0.245 are one bar) and the bar a classic mistake gives is named after it,
    on the projector, on the student's screen and in the report; an answer no mistake gives is
    not named."""
    from attention.check_yourself.worked_example import worked_example_questions
    from attention.drills import f4
    from dashboard.classroom import asking
    from dashboard.controls import Settings
    from dashboard.lessons import computed

    shown = computed(Settings(source="worked"))
    drill = worked_example_questions(shown.trace, shown.labels, True)[0]
    question = asking.from_drill(LESSONS[4].title, 1, drill, choices=False)
    assert question.choices is None and question.label.endswith("diagnostic, typed")
    (wrong, named), *_ = question.mistakes
    assert [bug for bug, _ in named] == ["softmax_over_queries"]
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    qid = store.ask(code, teacher, question.prompt, None, question.answer, question.working,
                    question.mistakes, question.kind)  # fmt: skip
    near = f4(float(wrong) + 0.0017)  # within the grader's tolerance of the mistake's number
    answers = (question.answer, wrong, near, "0.9", wrong)
    students = [store.join(code, f"s{n}") for n in range(len(answers))]
    for token, value in zip(students, answers, strict=True):
        store.answer(code, token, qid, str(value))
    before = store.questions(code, students[0])[-1]
    assert before.mistakes == ()  # the causes stay hidden from students until the reveal
    store.reveal(code, teacher, qid)
    asked = store.questions(code, teacher)[-1]
    bars = asking.grouped(asked, store.tally(code, teacher, qid).counts)
    assert sorted(bars.values()) == [1, 1, 3]  # right, 0.9, and the mistake's three
    causes = {bar: asking.cause_of(asked, bar) for bar in bars}
    assert sorted(words for words in causes.values() if words) == ["softmax over the wrong axis"]
    assert asking.cause_of(asked, near) == "softmax over the wrong axis"
    assert asking.cause_of(asked, "0.9") is None
    assert asking.cause_of(asked, asked.answer) is None  # the right answer names nothing
    assert asking.mistakes_made(asked, store.tally(code, teacher, qid).counts) == [
        (3, wrong, named)
    ]
    student_view = store.questions(code, students[2])[-1]
    assert asking.cause_of(student_view, near) == "softmax over the wrong axis"
    row = report(store, code, teacher).iloc[0]
    assert (row["right"], row["mistakes named"], row["other wrong answers"]) == (
        1, "softmax over the wrong axis: 3", 1,
    )  # fmt: skip


def test_a_typed_answers_bar_and_the_mistakes_list_agree():
    """A typed answer within the tolerance of a mistake's number joins the mistake's bar,
    named after it, whatever answers lie near it: 0.294 (0.006 from the mistake's 0.3000) keeps
    a bar of its own, 0.298 and 0.301 are the mistake's; the list counts the same two."""
    from dashboard.classroom import asking

    named = (("softmax_over_queries", "Softmax over the wrong axis"),)
    question = asking.ClassQuestion("q", "q", None, "0.5", (), mistakes=(("0.3000", named),))
    counts = {"0.294": 2, "0.298": 1, "0.301": 1, "0.5": 3}
    bars = asking.grouped(question, counts)
    assert bars == {"0.294": 2, "0.3000": 2, "0.5000": 3}  # revealed: the answer as printed
    causes = {bar: asking.cause_of(question, bar) for bar in bars}
    assert causes == {"0.294": None, "0.3000": "softmax over the wrong axis", "0.5000": None}
    assert asking.mistakes_made(question, counts) == [(2, "0.3000", named)]
