"""Issue 45 through a real store (SQLite and PostgreSQL): a teacher gives the concept check
before and after, three students take both and a fourth only the first; the report pairs them by
seat and its figures equal the hand computation (the class of three of
tests/attention/test_concepts.py: before 20, 50, 80 %, after 60, 50, 90 %)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from attention import concepts
from dashboard.classroom import ClassStore
from dashboard.classroom import concept_check as check

RIGHT_BEFORE = (2, 5, 8)  # student k is right on items 1 .. RIGHT_BEFORE[k], wrong on the rest
RIGHT_AFTER = (6, 5, 9)


@pytest.fixture
def store(url) -> ClassStore:
    return ClassStore(url, joins_per_minute=100)


def take(store, code, token, qids, form, right_up_to):
    """Answer every item: the right choice up to an item, then the first wrong choice."""
    for qid, item in zip(qids, concepts.FORMS[form], strict=True):
        chosen = item.right if item.number <= right_up_to else item.wrong[0][0]
        store.answer(code, token, qid, chosen)


def test_the_concept_check_report_equals_the_hand_computation(store):
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    seats = [store.join(code, name) for name in ("Ada", "Bo", "Cy", "Dee")]
    before = check.ask(store, code, teacher, "before")
    assert len(before) == 10 and check.report(store, code, teacher) is None
    for token, up_to in zip(seats, (*RIGHT_BEFORE, 10), strict=True):
        take(store, code, token, before, "A", up_to)
    for qid in before:
        store.close(code, teacher, qid)
    after = check.ask(store, code, teacher, "after")
    for token, up_to in zip(seats[:3], RIGHT_AFTER, strict=True):  # Dee left
        take(store, code, token, after, "B", up_to)
    figures = check.report(store, code, teacher)
    assert figures.gain.students == 3  # who took both
    assert figures.gain.g == pytest.approx(1 / 3)
    assert figures.gain.c == pytest.approx(1 / 3)
    assert figures.gain.d == pytest.approx(0.8006, abs=1e-4)
    assert list(figures.students["before %"]) == [20.0, 50.0, 80.0]
    assert list(figures.students["after %"]) == [60.0, 50.0, 90.0]
    concept = figures.per_concept.set_index("concept")
    heads = concept.loc["how heads split the columns"]
    assert (heads["right before"], heads["right after"]) == pytest.approx((1 / 3, 2 / 3))
    held = figures.per_misconception.set_index("misconception")
    queries = held.loc[concepts.misconception_title("cache_queries")]
    assert (queries["held before"], queries["held after"]) == pytest.approx((1.0, 2 / 3))
    items = figures.per_item.set_index(["when", "item"])
    assert items.loc[("before", 1), "difficulty (share right)"] == 1.0
    assert pd.isna(items.loc[("before", 1), "discrimination (point-biserial)"])  # all right
    assert items.loc[("before", 6), "difficulty (share right)"] == pytest.approx(1 / 3)
    r = items.loc[("after", 6), "discrimination (point-biserial)"]
    # after, item 6: right 1 and 3 (rests 5 and 8), wrong 2 (rest 5): (6.5 - 5) / sd * √(2/9)
    sd = math.sqrt(((5 - 6) ** 2 + (5 - 6) ** 2 + (8 - 6) ** 2) / 3)
    assert r == pytest.approx((6.5 - 5) / sd * math.sqrt(2 / 3 * 1 / 3))
    # the CSV (issue 52, item 4): one long table naming each row's table; seats and items
    # whole numbers, shares as the screen rounds them, undefined left empty
    import io

    rows = pd.read_csv(io.StringIO(check.csv(figures)), dtype=str, keep_default_na=False)
    seats_rows = rows[rows["table"] == "Each student, by seat"]
    assert list(seats_rows["seat"]) == ["1", "2", "3"]
    assert list(seats_rows["before %"]) == ["20", "50", "80"]
    assert list(seats_rows["normalized change c"]) == ["0.5", "0.0", "0.5"]
    item_rows = rows[rows["table"] == "Per item: difficulty and discrimination"]
    assert list(item_rows["item"][:3]) == ["1", "2", "3"]
    assert item_rows["discrimination (point-biserial)"].iloc[0] == ""  # undefined: all right
    concept_rows = rows[rows["table"] == "Right per concept"].set_index("concept")
    assert concept_rows.loc["how heads split the columns", "right after %"] == "67"


def test_a_course_pairs_the_check_before_with_the_check_three_weeks_later(url, clock):
    """Issue 45: the check before the first lecture and the one after the last, three weeks
    apart, pair by seat in a course's class; a lecture's class is gone by then."""
    from dashboard.classroom.store import COURSE_SECONDS

    store = ClassStore(url, clock=clock, joins_per_minute=100)
    course, lecture = store.create_class(COURSE_SECONDS), store.create_class()
    seats = [store.join(course.code) for _ in RIGHT_BEFORE]
    before = check.ask(store, course.code, course.teacher_token, "before")
    for token, up_to in zip(seats, RIGHT_BEFORE, strict=True):
        take(store, course.code, token, before, "A", up_to)
    for qid in before:
        store.close(course.code, course.teacher_token, qid)
    for _ in range(3):  # a lecture a week: each a question, each some activity
        clock.now += 7 * 86400
        store.ask(course.code, course.teacher_token, "?", ["a", "b"], "a")
    after = check.ask(store, course.code, course.teacher_token, "after")
    for token, up_to in zip(seats, RIGHT_AFTER, strict=True):
        take(store, course.code, token, after, "B", up_to)
    figures = check.report(store, course.code, course.teacher_token)
    assert figures.gain.students == 3 and figures.gain.g == pytest.approx(1 / 3)
    with pytest.raises(LookupError):
        check.ask(store, lecture.code, lecture.teacher_token, "after")


def test_a_check_is_found_by_its_items_and_other_questions_are_not(store):
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    store.ask(code, teacher, "How many heads?", None, 4)
    assert check.open_items(store.questions(code, teacher)) is None
    qids = check.ask(store, code, teacher, "after")
    when, items = check.open_items(store.questions(code, teacher))
    assert when == "after" and [q.qid for q in items] == qids
    assert check.check_of(items[2].prompt) == ("after", 3)
    summary = check.summary(concepts.gain([(20, 60), (50, 50), (80, 90)])).set_index("figure")
    assert summary.loc["class gain <g> (Hake)", "value"] == "0.333"
    assert (
        summary.loc["for context: <g> of lecture courses, physics (Hake 1998)", "value"] == "0.23"
    )
    nothing = check.summary(concepts.gain([(100, 100), (100, 90)])).set_index("figure")
    assert nothing.loc["class gain <g> (Hake)", "value"] == "undefined"


def test_sixty_students_answering_the_check_at_once_lose_nothing(url):
    """Sixty students in four processes join and send the ten items of the before-check at
    the same moment: 600 answers, each counted once, each the choice its student sent."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from crowd import check_choice

    store = ClassStore(url, joins_per_minute=200)
    made = store.create_class()
    qids = check.ask(store, made.code, made.teacher_token, "before")
    start = time.time() + 2.0
    crowd = [
        subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("crowd.py")), "check", url, made.code,
             ",".join(map(str, qids)), str(start), str(15 * w), "15"],
            stdout=subprocess.PIPE, text=True,
        )
        for w in range(4)
    ]  # fmt: skip
    outputs = [process.communicate(timeout=120)[0] for process in crowd]
    took = time.time() - start
    assert all("done" in out for out in outputs), outputs
    questions = {q.qid: q for q in store.questions(made.code, made.teacher_token)}
    for item, qid in enumerate(qids):
        tally = store.tally(made.code, made.teacher_token, qid)
        choices = list(questions[qid].choices)
        expected = {}
        for student in range(60):
            chosen = check_choice(student, item, choices)
            expected[chosen] = expected.get(chosen, 0) + 1
        assert tally.answered == 60 and tally.counts == expected
    print(f"\n{url.split(':')[0]}: 60 joins + 600 answers from 4 processes in {took:.2f} s")


def test_a_check_is_graded_by_the_answers_stored_when_it_was_asked(url):
    """Items change between versions (issue 55 changed items 7, 9 and 10): a check given before
    the change, reported after it (an update mid-course, a class continued from its file), is
    graded by the right answer stored with each item when it was asked."""
    from sqlalchemy import update

    from dashboard.classroom.store import questions

    store = ClassStore(url, joins_per_minute=100)
    made = store.create_class()
    code, teacher = made.code, made.teacher_token
    seat = store.join(code)
    before = check.ask(store, code, teacher, "before")
    item = concepts.FORMS["A"][0]
    older = item.wrong[0][0]  # as if an earlier version had held this choice right
    with store.engine.begin() as conn:
        conn.execute(update(questions).where(questions.c.id == before[0]).values(answer=older))
    take(store, code, seat, before, "A", 0)  # every item's first wrong choice: item 1 "right"
    after = check.ask(store, code, teacher, "after")
    take(store, code, seat, after, "B", 10)
    figures = check.report(store, code, teacher)
    assert list(figures.students["before %"]) == [10.0]  # graded by the stored answer
    assert list(figures.students["after %"]) == [100.0]
