"""The class store against real databases (SQLite and PostgreSQL, see conftest.py): the
contract, every permission case, expiry and the rate limits with an injected clock, students in
several processes at once, and a process killed mid-class."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError

from dashboard.classroom import ClassStore, RateLimited, database, default_url
from dashboard.classroom import store as store_module
from dashboard.classroom.store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    COURSE_SECONDS,
    EXPIRY_SECONDS,
    WEIGHT,
    WHOLE,
    answers,
    classes,
    questions,
    students,
)

CROWD = Path(__file__).with_name("crowd.py")
sys.path.insert(0, str(CROWD.parent))
from class_databases import START  # noqa: E402
from crowd import CHOICES, final_choice  # noqa: E402


@pytest.fixture
def store(url, clock) -> ClassStore:
    return ClassStore(url, clock=clock, joins_per_minute=5, misses_per_minute=4)


@pytest.fixture
def cls(store):
    return store.create_class()


@pytest.fixture
def student(store, cls) -> str:
    return store.join(cls.code, nickname="Ada")


@pytest.fixture
def qid(store, cls) -> int:
    return store.ask(cls.code, cls.teacher_token, "Which row sums to 1?", ["rows", "cols"], "rows")


def rows(store: ClassStore, table) -> list:
    with store.engine.connect() as conn:
        return conn.execute(select(table)).all()


# -- the contract ------------------------------------------------------------------------------


def test_store_create_class_gives_a_short_code_and_a_long_secret(store) -> None:
    one, two = store.create_class(), store.create_class()
    assert len(one.code) == CODE_LENGTH and set(one.code) <= set(CODE_ALPHABET)
    assert len(one.teacher_token) >= 43  # 32 random bytes, URL-safe base64
    assert one.code != two.code and one.teacher_token != two.teacher_token


def test_store_join_reads_the_code_as_typed(store, cls) -> None:
    typed = f" {cls.code[:3].lower()}-{cls.code[3:]} "
    assert store.join(typed) != store.join(cls.code)
    assert store.tally(cls.code, cls.teacher_token, store.ask(
        cls.code, cls.teacher_token, "?", ["a", "b"], "a")).joined == 2  # fmt: skip


def test_store_later_answer_replaces_the_earlier(store, cls, student, qid) -> None:
    store.answer(cls.code, student, qid, "cols")
    store.answer(cls.code, student, qid, "rows")
    tally = store.tally(cls.code, cls.teacher_token, qid)
    assert tally.counts == {"rows": 1, "cols": 0}
    assert (tally.answered, tally.joined) == (1, 1)


def test_store_tally_lists_every_choice_in_order(store, cls, qid) -> None:
    for value in ("cols", "cols", "rows"):
        store.answer(cls.code, store.join(cls.code), qid, value)
    tally = store.tally(cls.code, cls.teacher_token, qid)
    assert list(tally.counts.items()) == [("rows", 1), ("cols", 2)]
    assert (tally.answered, tally.joined, tally.closed) == (3, 3, False)


def test_store_numeric_answers_are_normalised_and_sorted(store, cls) -> None:
    number = store.ask(cls.code, cls.teacher_token, "1/2?", None, "0,5")
    for typed in ("0.5", "0,50", " .5 ", "−2", "10"):
        store.answer(cls.code, store.join(cls.code), number, typed)
    tally = store.tally(cls.code, cls.teacher_token, number)
    assert tally.counts == {"-2": 1, "0.5": 3, "10": 1}
    assert list(tally.counts) == ["-2", "0.5", "10"]
    assert store.reveal(cls.code, cls.teacher_token, number) == "0.5"


@pytest.mark.parametrize("typed", ["", "half", "1e400", "nan", "0.5%"])
def test_store_numeric_question_refuses_what_is_not_a_number(store, cls, student, typed) -> None:
    number = store.ask(cls.code, cls.teacher_token, "1/2?", None, "0.5")
    with pytest.raises(ValueError):
        store.answer(cls.code, student, number, typed)


@pytest.mark.parametrize("typed", ["Rows", "diagonal", "", "<b>rows</b>"])
def test_store_answer_outside_the_choices_is_refused(store, cls, student, qid, typed) -> None:
    with pytest.raises(ValueError, match="not one of the choices"):
        store.answer(cls.code, student, qid, typed)
    assert store.tally(cls.code, cls.teacher_token, qid).answered == 0


@pytest.mark.parametrize(
    ("choices", "answer"),
    [(["a", "b"], "c"), (["a"], "a"), (["a", "a"], "a"), (["a", ""], "a"), (None, "x")],
)
def test_store_ask_refuses_a_question_that_cannot_be_answered(store, cls, choices, answer):
    with pytest.raises(ValueError):
        store.ask(cls.code, cls.teacher_token, "?", choices, answer)


def test_store_closed_question_refuses_answers(store, cls, student, qid) -> None:
    store.answer(cls.code, student, qid, "rows")
    store.close(cls.code, cls.teacher_token, qid)
    with pytest.raises(ValueError, match="closed"):
        store.answer(cls.code, student, qid, "cols")
    tally = store.tally(cls.code, cls.teacher_token, qid)
    assert tally.closed and tally.counts == {"rows": 1, "cols": 0}


def test_store_reveal_gives_the_answer_closes_and_shows_students(store, cls, student, qid):
    (before,) = store.questions(cls.code, student)
    assert before.answer is None and before.choices == ("rows", "cols")
    assert store.questions(cls.code, cls.teacher_token)[0].answer == "rows"
    assert store.reveal(cls.code, cls.teacher_token, qid) == "rows"
    (after,) = store.questions(cls.code, student)
    assert (after.answer, after.revealed, after.closed) == ("rows", True, True)


def test_store_working_is_shown_with_the_answer_only(store, cls, student) -> None:
    qid = store.ask(cls.code, cls.teacher_token, "2 + 2?", None, 4, ["2 + 2 = 4", "<b>x</b>"])
    assert store.questions(cls.code, student)[0].working == ()
    assert store.questions(cls.code, cls.teacher_token)[0].working == ("2 + 2 = 4", "<b>x</b>")
    store.reveal(cls.code, cls.teacher_token, qid)
    assert store.questions(cls.code, student)[0].working == ("2 + 2 = 4", "<b>x</b>")


def test_store_mistakes_behind_choices_are_shown_with_the_answer_only(store, cls, student):
    causes = [("0.1826", [("softmax_over_queries", "Softmax over the wrong axis")])]
    qid = store.ask(cls.code, cls.teacher_token, "a_1,0?", ["0.5514", "0.1826"], "0.5514",
                    ["working"], causes)  # fmt: skip
    mistakes = (("0.1826", (("softmax_over_queries", "Softmax over the wrong axis"),)),)
    assert store.questions(cls.code, student)[0].mistakes == ()
    assert store.questions(cls.code, cls.teacher_token)[0].mistakes == mistakes
    store.reveal(cls.code, cls.teacher_token, qid)
    assert store.questions(cls.code, student)[0].mistakes == mistakes
    with pytest.raises(ValueError, match="one of the choices"):
        store.ask(cls.code, cls.teacher_token, "q?", ["1", "2"], "1", (), [("3", [("b", "t")])])


def test_store_whole_number_question_takes_only_whole_numbers(store, cls, student) -> None:
    """Issue 28, item 7: class mode graded "1952.004" right for a whole-number question, which
    the lesson refuses ("Type a whole number"); the store now knows the question's kind."""
    qid = store.ask(cls.code, cls.teacher_token, "Bytes?", None, 1952, kind=WHOLE)
    with pytest.raises(ValueError, match="whole number"):
        store.answer(cls.code, student, qid, "1952.004")
    store.answer(cls.code, student, qid, "1952.0")
    assert store.answers_of(cls.code, student) == {qid: "1952"}
    assert store.questions(cls.code, student)[0].kind == WHOLE
    plain = store.ask(cls.code, cls.teacher_token, "A weight?", None, 0.25)
    store.answer(cls.code, student, plain, "0.2504")
    assert store.questions(cls.code, student)[1].kind is None
    with pytest.raises(ValueError, match="whole number"):
        store.ask(cls.code, cls.teacher_token, "Half?", None, 0.5, kind=WHOLE)
    with pytest.raises(ValueError, match="without choices"):
        store.ask(cls.code, cls.teacher_token, "Pick", ["1", "2"], "1", kind=WHOLE)


def test_store_weight_question_takes_a_percentage_as_the_lesson_does(store, cls, student):
    """Issue 42, item 3: "34 %" on a question asking for a weight was refused in class ("Only a
    weight can be a percentage") while the lesson takes it; a weight question now reads it."""
    qid = store.ask(cls.code, cls.teacher_token, "A weight?", None, 0.3410429529, kind=WEIGHT)
    store.answer(cls.code, student, qid, "34 %")
    assert store.answers_of(cls.code, student) == {qid: "0.34"}
    assert store.questions(cls.code, student)[0].kind == WEIGHT
    plain = store.ask(cls.code, cls.teacher_token, "A score?", None, 1.5)
    with pytest.raises(ValueError, match="Only a weight can be a percentage"):
        store.answer(cls.code, student, plain, "34 %")
    with pytest.raises(ValueError, match="without choices"):
        store.ask(cls.code, cls.teacher_token, "Pick", ["1", "2"], "1", kind=WEIGHT)


def test_store_a_student_reads_back_their_own_nickname(store, cls) -> None:
    """Issue 29, item 11: a reload (the seat from the cookie) greets the student by name."""
    ada, nobody = store.join(cls.code, "Ada"), store.join(cls.code)
    assert store.nickname(cls.code, ada) == "Ada"
    assert store.nickname(cls.code, nobody) is None
    with pytest.raises(PermissionError):
        store.nickname(cls.code, cls.teacher_token)


def test_store_joined_counts_the_students(store, cls) -> None:
    assert store.joined(cls.code, cls.teacher_token) == 0
    store.join(cls.code)
    store.join(cls.code, "Ada")
    assert store.joined(cls.code, cls.teacher_token) == 2


def test_store_role_names_the_teacher_and_the_students(store, cls, student) -> None:
    assert store.role(cls.code, cls.teacher_token) == "teacher"
    assert store.role(cls.code.lower(), student) == "student"


def test_store_answers_of_a_student_are_their_own(store, cls, student, qid) -> None:
    other = store.join(cls.code)
    store.answer(cls.code, student, qid, "cols")
    store.answer(cls.code, other, qid, "rows")
    assert store.answers_of(cls.code, student) == {qid: "cols"}
    with pytest.raises(PermissionError):
        store.answers_of(cls.code, cls.teacher_token)


def test_store_an_older_database_gets_the_working_column(tmp_path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE questions (id INTEGER PRIMARY KEY, answer TEXT)")
    store = ClassStore(f"sqlite:///{path}")
    try:
        with sqlite3.connect(path) as conn:
            columns = [row[1] for row in conn.execute("PRAGMA table_info(questions)")]
        assert {"working", "mistakes", "kind"} <= set(columns)
    finally:
        store.dispose()


def test_store_follow_the_teacher(store, cls, student) -> None:
    assert store.current_view(cls.code, student) is None
    store.send_view(cls.code, cls.teacher_token, "/multi_head?heads=4")
    view = store.current_view(cls.code, student)
    assert (view.url, view.sent_at) == ("/multi_head?heads=4", START)


def test_store_follow_reads_what_current_view_and_questions_say(store, cls, student) -> None:
    """A follower's poll (`follow`): the view sent and the last question's state, the same as
    the two full reads, for a student and for the teacher, at every step of a question."""

    def agrees(token: str) -> None:
        news = store.follow(cls.code, token)
        assert news.view == store.current_view(cls.code, token)
        asked = store.questions(cls.code, token)
        last = asked[-1] if asked else None
        assert (news.last_question, news.closed, news.revealed) == (
            (None, False, False) if last is None else (last.qid, last.closed, last.revealed)
        )

    agrees(student)
    store.send_view(cls.code, cls.teacher_token, "/masking?T=8")
    first = store.ask(cls.code, cls.teacher_token, "Which row sums to 1?", ["rows", "cols"], "rows")
    second = store.ask(cls.code, cls.teacher_token, "And now?", ["a", "b"], "a")
    for step in (lambda: None, lambda: store.close(cls.code, cls.teacher_token, second),
                 lambda: store.reveal(cls.code, cls.teacher_token, second)):  # fmt: skip
        step()
        agrees(student)
        agrees(cls.teacher_token)
    assert store.follow(cls.code, student).last_question == second != first
    assert store.follow(cls.code, student).view.url == "/masking?T=8"


def test_store_news_changes_when_a_follower_would_find_something_new(store, cls, clock) -> None:
    """The server's watch (`news`, wake.py): one read for several classes, a signature that
    changes exactly when `follow` would tell a follower something new, None for no class. The
    store's writes tell the watch (`on_news`, wake.soon) of exactly those changes, no others."""
    other = store.create_class()
    codes = [cls.code, other.code, "NOSUCH"]
    seen = [store.news(codes)]
    assert seen[0] == {cls.code: (None, None, False, False),
                       other.code: (None, None, False, False), "NOSUCH": None}  # fmt: skip
    told: list[str] = []
    store.on_news = told.append

    def moved(by_a_write: bool = True) -> set[str]:
        seen.append(store.news(codes))
        changed = {code for code in codes if seen[-1][code] != seen[-2][code]}
        assert told == sorted(changed if by_a_write else set()), (told, changed)  # once each
        told.clear()
        return changed

    assert moved() == set()  # reading changes nothing (nor keeps a class alive: no write)
    store.send_view(cls.code.lower(), cls.teacher_token, "/masking?T=8")  # told as stored
    assert moved() == {cls.code}
    first = store.ask(other.code, other.teacher_token, "Which?", ["a", "b"], "a")
    assert moved() == {other.code}
    store.answer(other.code, store.join(other.code), first, "a")  # an answer: no follower's news
    assert moved() == set()
    second = store.ask(other.code, other.teacher_token, "And?", ["a", "b"], "b")
    assert moved() == {other.code} and seen[-1][other.code][1] == second != first
    store.close(other.code, other.teacher_token, first)  # an older question: news unchanged
    assert moved() == set()
    for step in (store.close, store.reveal):
        step(other.code, other.teacher_token, second)
        assert moved() == {other.code}
        step(other.code, other.teacher_token, second)  # again: already so, nothing to tell
        assert moved() == set()
    clock.now += 1
    store.send_view(cls.code, cls.teacher_token, "/masking?T=8")  # the same view, sent again
    assert moved() == {cls.code}
    with pytest.raises(PermissionError):  # a refused write changes nothing and tells nothing
        store.send_view(cls.code, store.join(cls.code), "/masking")
    assert moved() == set()
    news = store.follow(other.code, other.teacher_token)
    assert seen[-1][other.code] == (None, news.last_question, news.closed, news.revealed)
    saved = store.export_class(cls.code, cls.teacher_token)
    store.delete_class(cls.code, cls.teacher_token)
    assert moved() == {cls.code} and seen[-1][cls.code] is None
    store.restore_class(saved, cls.teacher_token)  # continued from its file: news again
    assert moved() == {cls.code} and seen[-1][cls.code] is not None
    store.delete_class(cls.code, cls.teacher_token)
    assert moved() == {cls.code}
    clock.now += EXPIRY_SECONDS + 1  # expired, not yet purged: no live class, as `follow` says
    assert moved(by_a_write=False) == {other.code} and seen[-1][other.code] is None
    with pytest.raises(LookupError):
        store.follow(other.code, other.teacher_token)


def test_store_a_write_stands_when_telling_its_news_fails(store, cls, student, caplog) -> None:
    """The view is sent (committed) before the watch is told; a failure to tell is logged and
    is not the teacher's: the bar must not say a view that was sent was not."""

    def broken(code: str) -> None:
        raise RuntimeError("no event loop")

    store.on_news = broken
    store.send_view(cls.code, cls.teacher_token, "/masking?T=8")
    assert store.current_view(cls.code, student).url == "/masking?T=8"
    assert "could not tell" in caplog.text


@pytest.mark.parametrize(
    "link", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)", "/a b", ""]
)
def test_store_send_view_takes_only_relative_links(store, cls, link) -> None:
    with pytest.raises(ValueError):
        store.send_view(cls.code, cls.teacher_token, link)


def test_store_delete_class_removes_everything(store, cls, student, qid) -> None:
    other = store.create_class()
    store.answer(cls.code, student, qid, "rows")
    store.delete_class(cls.code, cls.teacher_token)
    with pytest.raises(LookupError):
        store.join(cls.code)
    assert [r.code for r in rows(store, classes)] == [other.code]
    assert rows(store, students) == rows(store, questions) == rows(store, answers) == []


def test_store_keeps_no_token_and_nothing_personal(store, cls, student) -> None:
    (row,) = rows(store, classes)
    (kid,) = rows(store, students)
    everything = repr(rows(store, classes) + rows(store, students))
    assert cls.teacher_token not in everything and student not in everything
    assert len(row.teacher_hash) == len(kid.token_hash) == 64  # SHA-256, hex
    assert set(kid._fields) == {"id", "class_code", "token_hash", "nickname", "joined_at"}


def test_store_nickname_is_plain_text(store, cls) -> None:
    store.join(cls.code, nickname="<b>Zoë</b>\x00\u202e  x" + "y" * 100)
    store.join(cls.code, nickname="   ")
    names = [r.nickname for r in rows(store, students)]
    assert names[0].startswith("<b>Zoë</b> x") and len(names[0]) == 40  # markup kept as text
    assert names[1] is None


# -- permissions -------------------------------------------------------------------------------

TEACHER_ONLY = {
    "ask": lambda s, code, token, qid: s.ask(code, token, "?", ["a", "b"], "a"),
    "tally": lambda s, code, token, qid: s.tally(code, token, qid),
    "close": lambda s, code, token, qid: s.close(code, token, qid),
    "reveal": lambda s, code, token, qid: s.reveal(code, token, qid),
    "send_view": lambda s, code, token, qid: s.send_view(code, token, "/x"),
    "delete_class": lambda s, code, token, qid: s.delete_class(code, token),
    "joined": lambda s, code, token, qid: s.joined(code, token),
}
MEMBERS = {
    "answer": lambda s, code, token, qid: s.answer(code, token, qid, "rows"),
    "questions": lambda s, code, token, qid: s.questions(code, token),
    "current_view": lambda s, code, token, qid: s.current_view(code, token),
    "follow": lambda s, code, token, qid: s.follow(code, token),
    "role": lambda s, code, token, qid: s.role(code, token),
    "answers_of": lambda s, code, token, qid: s.answers_of(code, token),
}


@pytest.mark.parametrize("who", ["student", "other teacher", "other student", "empty", "none"])
@pytest.mark.parametrize("action", sorted(TEACHER_ONLY))
def test_store_only_the_teacher_token_runs_the_class(store, cls, student, qid, action, who):
    other = store.create_class()
    token = {
        "student": student,
        "other teacher": other.teacher_token,
        "other student": store.join(other.code),
        "empty": "",
        "none": None,
    }[who]
    with pytest.raises(PermissionError):
        TEACHER_ONLY[action](store, cls.code, token, qid)


@pytest.mark.parametrize("who", ["other teacher", "other student", "forged", "none"])
@pytest.mark.parametrize("action", sorted(MEMBERS))
def test_store_only_the_class_reads_and_answers(store, cls, qid, action, who) -> None:
    other = store.create_class()
    token = {
        "other teacher": other.teacher_token,
        "other student": store.join(other.code),
        "forged": "x" * 43,
        "none": None,
    }[who]
    with pytest.raises(PermissionError):
        MEMBERS[action](store, cls.code, token, qid)


def test_store_the_teacher_does_not_answer(store, cls, qid) -> None:
    with pytest.raises(PermissionError):
        store.answer(cls.code, cls.teacher_token, qid, "rows")


@pytest.mark.parametrize("action", sorted(TEACHER_ONLY | MEMBERS))
def test_store_unknown_class_is_a_lookup_error(store, cls, student, qid, action) -> None:
    token = student if action in MEMBERS else cls.teacher_token
    with pytest.raises(LookupError):
        (TEACHER_ONLY | MEMBERS)[action](store, "QQQQQQ", token, qid)


@pytest.mark.parametrize("action", ["answer", "tally", "close", "reveal"])
def test_store_unknown_or_foreign_question_is_a_lookup_error(store, cls, student, action):
    other = store.create_class()
    foreign = store.ask(other.code, other.teacher_token, "?", ["rows", "b"], "rows")
    token = student if action == "answer" else cls.teacher_token
    for qid in (foreign, foreign + 1000):
        with pytest.raises(LookupError):
            (TEACHER_ONLY | MEMBERS)[action](store, cls.code, token, qid)


# -- expiry ------------------------------------------------------------------------------------


def test_store_class_expires_twelve_hours_after_its_last_activity(store, clock, cls, qid):
    assert EXPIRY_SECONDS == 12 * 3600
    clock.now += 11 * 3600
    token = store.join(cls.code)  # activity: the twelve hours start again
    clock.now += 11 * 3600
    store.answer(cls.code, token, qid, "rows")
    clock.now += EXPIRY_SECONDS - 1
    assert store.tally(cls.code, cls.teacher_token, qid).answered == 1
    clock.now += 2
    with pytest.raises(LookupError):
        store.tally(cls.code, cls.teacher_token, qid)
    with pytest.raises(LookupError):
        store.join(cls.code)


def test_store_a_course_lives_thirty_days_after_its_last_activity(store, clock) -> None:
    """Issue 45: a course's class keeps its seats from one lecture to the next, so the concept
    check before the course and the one after pair up; a lecture's goes after 12 hours."""
    course, lecture = store.create_class(COURSE_SECONDS), store.create_class()
    assert (course.lifetime, lecture.lifetime) == (COURSE_SECONDS, EXPIRY_SECONDS)
    assert store.lifetime(course.code) == COURSE_SECONDS == 30 * 86400
    assert store.lifetime(lecture.code) == EXPIRY_SECONDS
    token = store.join(course.code)
    clock.now += 7 * 86400  # a week later, the next lecture: the same seat
    assert store.role(course.code, token) == "student"
    with pytest.raises(LookupError):
        store.role(lecture.code, lecture.teacher_token)
    assert store.purge_expired() == 1  # the lecture's, not the course's
    qid = store.ask(course.code, course.teacher_token, "?", ["a", "b"], "a")  # activity
    clock.now += COURSE_SECONDS - 1
    store.answer(course.code, token, qid, "a")
    clock.now += COURSE_SECONDS - 1
    assert store.purge_expired() == 0
    clock.now += 2
    assert store.purge_expired() == 1
    with pytest.raises(LookupError):
        store.lifetime(course.code)


@pytest.mark.parametrize("lifetime", [0, 3600, 24 * 3600.5, -1])
def test_store_a_class_lives_a_lecture_or_a_course_nothing_else(store, lifetime) -> None:
    with pytest.raises(ValueError, match=r"a lecture.*a course"):
        store.create_class(lifetime)


def test_store_made_before_courses_gets_the_column_and_its_classes_live_a_lecture(
    url, clock
) -> None:
    """A store whose classes table has no lifetime column (made before this round): opened
    again, it gets the column, and its classes live 12 hours."""
    from sqlalchemy import create_engine, text

    old = ClassStore(url, clock=clock)
    made = old.create_class()
    old.dispose()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE classes DROP COLUMN lifetime"))
    engine.dispose()
    again = ClassStore(url, clock=clock)
    assert again.lifetime(made.code) == EXPIRY_SECONDS
    clock.now += EXPIRY_SECONDS + 1
    assert again.purge_expired() == 1
    assert again.lifetime(again.create_class(COURSE_SECONDS).code) == COURSE_SECONDS


def test_store_a_screen_the_teacher_adds_by_its_code_runs_the_class(store, clock, cls) -> None:
    """Issue 42, item 7: the teacher's laptop asks for a pairing code; the teacher types it on
    the projector; the laptop's own token is then a teacher's. No token crosses, the store keeps
    digests only, a code works once and for 10 minutes, and another class's teacher or a
    student cannot add a screen."""
    pair, laptop = store.request_device()
    assert len(pair) == 8 and store.device_class(laptop) is None  # waiting
    with pytest.raises(PermissionError):
        store.role(cls.code, laptop)
    student = store.join(cls.code)
    with pytest.raises(PermissionError):
        store.add_device(cls.code, student, pair)
    other = store.create_class()
    store.add_device(cls.code, cls.teacher_token, f"{pair[:4].lower()}-{pair[4:]}")  # as typed
    assert store.device_class(laptop) == cls.code
    assert store.role(cls.code, laptop) == "teacher"
    qid = store.ask(cls.code, laptop, "?", ["a", "b"], "a")  # a teacher's rights
    assert store.tally(cls.code, laptop, qid).joined == 1
    with pytest.raises(PermissionError):
        store.role(other.code, laptop)  # this class's teacher, no other's
    with pytest.raises(LookupError, match="No screen is waiting"):
        store.add_device(other.code, other.teacher_token, pair)  # once
    assert laptop not in str(rows(store, store_module.devices))  # its digest only
    late_pair, late = store.request_device()
    clock.now += 601
    with pytest.raises(LookupError, match="No screen is waiting"):
        store.add_device(cls.code, cls.teacher_token, late_pair)
    with pytest.raises(LookupError, match="expired"):
        store.device_class(late)
    store.delete_class(cls.code, laptop)  # the added screen can end the class; its row goes
    store.purge_expired()  # and the code never used
    assert rows(store, store_module.devices) == []


def test_store_purge_expired_deletes_idle_classes_only(store, clock, cls, student, qid):
    store.answer(cls.code, student, qid, "rows")
    clock.now += 6 * 3600
    young = store.create_class()
    assert store.purge_expired(now=START + EXPIRY_SECONDS + 1) == 1
    assert [r.code for r in rows(store, classes)] == [young.code]
    assert rows(store, students) == rows(store, answers) == []
    assert store.purge_expired() == 0  # the clock's own now: the young class stays


# -- rate limits -------------------------------------------------------------------------------


def test_store_joins_per_class_are_limited_per_minute(store, clock, cls) -> None:
    other = store.create_class()
    for _ in range(store.joins_per_minute):
        store.join(cls.code)
    with pytest.raises(RateLimited) as refused:
        store.join(cls.code)
    assert isinstance(refused.value, PermissionError) and refused.value.retry_after == 60
    store.join(other.code)  # another class is not held up
    clock.now += 61
    store.join(cls.code)


def test_store_guessing_codes_is_refused_whatever_the_code(store, clock, cls, student, qid):
    for guess in ("AAAAAA", "AAAAAB", "AAAAAC", "AAAAAD"):
        with pytest.raises(LookupError):
            store.join(guess)
    for refused in (
        lambda: store.join("AAAAAE"),
        lambda: store.join(cls.code),  # a live code looks exactly like a wrong one now
        lambda: store.answer(cls.code, "forged", qid, "rows"),
        lambda: store.tally(cls.code, student, qid),
    ):
        with pytest.raises(RateLimited):
            refused()
    store.answer(cls.code, student, qid, "rows")  # who holds a token is not held up
    assert store.tally(cls.code, cls.teacher_token, qid).answered == 1
    clock.now += 61
    store.join(cls.code)


# -- several processes, a killed process, a locked file ----------------------------------------


def students_in(*args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(CROWD), *map(str, args)], stdout=subprocess.PIPE, text=True
    )


def test_store_sixty_students_in_four_processes_each_counted_once(url) -> None:
    store = ClassStore(url, joins_per_minute=120)
    cls = store.create_class()
    qid = store.ask(cls.code, cls.teacher_token, "Which?", list(CHOICES), "A")
    start = time.time() + 2.0  # every process imported and connected by then
    crowd = [students_in("crowd", url, cls.code, qid, start, 15 * w, 15) for w in range(4)]
    outputs = [process.communicate(timeout=60)[0] for process in crowd]
    took = time.time() - start
    assert [p.returncode for p in crowd] == [0, 0, 0, 0] and all("done" in o for o in outputs)
    tally = store.tally(cls.code, cls.teacher_token, qid)
    expected = {c: sum(final_choice(i) == c for i in range(60)) for c in CHOICES}
    assert (tally.joined, tally.answered, tally.counts) == (60, 60, expected)
    assert took < 10, f"60 joins and 120 answers took {took:.1f} s"
    print(f"\n{url.split(':')[0]}: 60 joins + 120 answers from 4 processes in {took:.2f} s")


def test_store_a_killed_process_loses_nothing_committed(url) -> None:
    store = ClassStore(url)
    cls = store.create_class()
    qid = store.ask(cls.code, cls.teacher_token, "Which?", list(CHOICES), "A")
    process = students_in("forever", url, cls.code, qid)
    committed = [int(process.stdout.readline()) for _ in range(25)]
    os.kill(process.pid, signal.SIGKILL)  # mid-class: the next join or answer is under way
    process.wait(timeout=10)
    tally = store.tally(cls.code, cls.teacher_token, qid)
    assert committed == list(range(25))
    assert tally.answered >= len(committed)
    assert tally.answered <= tally.joined <= tally.answered + 1  # a join without its answer
    for choice in CHOICES:  # every printed answer is there
        printed = sum(final_choice(i) == choice for i in committed)
        assert tally.counts[choice] >= printed
    store.answer(cls.code, store.join(cls.code), qid, "A")  # and the store goes on
    assert store.tally(cls.code, cls.teacher_token, qid).answered == tally.answered + 1


def test_store_waits_out_a_lock_held_by_another_connection(tmp_path) -> None:
    path = tmp_path / "locked.db"
    store = ClassStore(f"sqlite:///{path}")
    cls = store.create_class()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.5, holder.execute, ["COMMIT"]).start()
    began = time.time()
    store.join(cls.code)
    assert time.time() - began >= 0.4  # it waited, and no "database is locked" reached us
    holder.close()
    store.dispose()


def test_store_retries_database_is_locked_then_gives_up_on_other_errors() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("BEGIN", {}, sqlite3.OperationalError("database is locked"))
        return "ok"

    assert database.retry(flaky) == "ok" and len(calls) == 3

    def broken() -> None:
        raise OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: x"))

    with pytest.raises(OperationalError):
        database.retry(broken)


def test_store_sqlite_runs_in_wal_mode(tmp_path) -> None:
    store = ClassStore(f"sqlite:///{tmp_path / 'wal.db'}")
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() >= 1000
        assert conn.execute(select(func.count()).select_from(classes)).scalar_one() == 0
    store.dispose()


def test_store_default_url_is_the_environment_or_the_data_folder(monkeypatch) -> None:
    monkeypatch.setenv("ATTENTION_CLASS_DB", "postgresql+psycopg://db.example/class")
    assert default_url() == "postgresql+psycopg://db.example/class"
    monkeypatch.delenv("ATTENTION_CLASS_DB")
    project = Path(__file__).resolve().parents[2]
    assert default_url() == f"sqlite:///{project / 'data' / 'classroom.db'}"
