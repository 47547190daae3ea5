"""Issue 51, item 2, through a real store (SQLite and PostgreSQL): a course saved to a file, its
database wiped (as Community Cloud's disk is when the app sleeps), continued from the file under
its own code; every seat found again by its student's token, the concept check's before and after
paired exactly as without the wipe. A tampered, foreign or other screen's file is refused, and so
is a file over a live class of its code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import make_url, text

from attention import concepts
from dashboard.classroom import ClassStore, archive
from dashboard.classroom import concept_check as check
from dashboard.classroom.database import dispose_engine, engine_for, metadata
from dashboard.classroom.store import COURSE_SECONDS, ClassExists, Given

RIGHT_BEFORE = (2, 5, 8, 10)  # student k is right on items 1 .. RIGHT_BEFORE[k]
RIGHT_AFTER = (6, 5, 9)  # the fourth student misses the course's second lecture


@pytest.fixture
def store(url, clock) -> ClassStore:
    return ClassStore(url, clock=clock, joins_per_minute=100)


def take(store, code, token, qids, form, right_up_to):
    for qid, item in zip(qids, concepts.FORMS[form], strict=True):
        chosen = item.right if item.number <= right_up_to else item.wrong[0][0]
        store.answer(code, token, qid, chosen)


def wipe(url: str) -> None:
    """The store as a fresh server finds it: SQLite's file deleted, PostgreSQL's tables empty."""
    dispose_engine(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(parsed.database + suffix).unlink(missing_ok=True)
        return
    with engine_for(url).begin() as conn:
        names = ", ".join(table.name for table in metadata.sorted_tables)
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    dispose_engine(url)


def first_lecture(store):
    """A course: four students join, a lesson question and the check before, answered."""
    made = store.create_class(COURSE_SECONDS)
    code, teacher = made.code, made.teacher_token
    seats = [store.join(code, name) for name in ("Ada", "Bo", "Cy", None)]
    table = Given(("t0", "t1"), (("q0", ("0.1000", "blocked")), ("q1", ("0.5000", "0.5000"))))
    qid = store.ask(code, teacher, "Which axis sums to 1?", ["rows", "cols"], "rows", given=table)
    for token, chosen in zip(seats, ("rows", "cols", "rows", "rows"), strict=True):
        store.answer(code, token, qid, chosen)
    store.reveal(code, teacher, qid)
    before = check.ask(store, code, teacher, "before")
    for token, up_to in zip(seats, RIGHT_BEFORE, strict=True):
        take(store, code, token, before, "A", up_to)
    for question in before:
        store.close(code, teacher, question)
    return made, seats


def second_lecture(store, code, teacher, seats):
    after = check.ask(store, code, teacher, "after")
    for token, up_to in zip(seats, RIGHT_AFTER, strict=False):
        take(store, code, token, after, "B", up_to)
    return check.report(store, code, teacher)


def test_archive_a_course_continued_from_its_file_pairs_every_seat_as_without_the_wipe(
    store, url, clock
):
    made, seats = first_lecture(store)
    code, teacher = made.code, made.teacher_token
    kept = store.export_class(code, teacher)
    saved = archive.save(store, code, teacher, clock())
    wipe(url)
    fresh = ClassStore(url, clock=clock, joins_per_minute=100)
    with pytest.raises(LookupError):
        fresh.role(code, teacher)  # the class went with the disk
    clock.now += 7 * 24 * 3600  # a week later
    back = archive.restore(fresh, archive.read(saved), teacher)
    assert (back.code, back.lifetime) == (code, COURSE_SECONDS)
    again = fresh.export_class(code, teacher)
    assert again.pop("active_at") == clock.now and kept.pop("active_at") < clock.now
    assert again == kept  # seats, questions, answers, digests: all as they were
    for token in seats:
        assert fresh.role(code, token) == "student" and fresh.nickname(code, token) is None
    assert fresh.role(code, teacher) == "teacher"
    assert fresh.questions(code, seats[0])[0].given.rows[0] == ("q0", ("0.1000", "blocked"))
    figures = second_lecture(fresh, code, teacher, seats)
    assert list(figures.students["seat"]) == [1, 2, 3]  # the fourth took the check once
    assert list(figures.students["before %"]) == [20.0, 50.0, 80.0]
    assert list(figures.students["after %"]) == [60.0, 50.0, 90.0]
    assert figures.gain.g == pytest.approx(concepts.gain([(20, 60), (50, 50), (80, 90)]).g)


def test_archive_file_holds_digests_never_a_token_nor_a_name(store, clock):
    made, seats = first_lecture(store)
    saved = archive.save(store, made.code, made.teacher_token, clock()).decode()
    for secret in (made.teacher_token, *seats, "Ada", "Cy"):
        assert secret not in saved
    assert len(json.loads(saved)["class"]["students"]) == 4


def test_archive_a_changed_file_is_refused_and_nothing_is_restored(store, url, clock):
    made, _ = first_lecture(store)
    found = json.loads(archive.save(store, made.code, made.teacher_token, clock()))
    wrong = next(given for given in found["class"]["answers"] if given[2] == "cols")
    wrong[2] = "rows"  # a wrong answer made right by hand
    wipe(url)
    fresh = ClassStore(url, clock=clock)
    with pytest.raises(archive.RefusedFile, match="changed after it was saved"):
        archive.restore(fresh, archive.read(json.dumps(found).encode()), made.teacher_token)
    with pytest.raises(LookupError):
        fresh.role(made.code, made.teacher_token)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x89PNG\r\n", "not the JSON"),
        (b"code,seat\nABC,1\n", "not the JSON"),
        (b'{"format": "something else", "version": 1}', "not a class file of this app"),
        (b'["a", "list"]', "not a class file of this app"),
        (json.dumps({"format": archive.FORMAT, "version": 2}).encode(), "version 2"),
        (json.dumps({"format": archive.FORMAT, "version": 1}).encode(), "incomplete"),
    ],
)
def test_archive_a_foreign_file_is_refused_with_its_reason(data, reason):
    with pytest.raises(archive.RefusedFile, match=reason):
        archive.read(data)


def test_archive_only_the_screen_that_saved_it_continues_it(store, url, clock):
    made, seats = first_lecture(store)
    saved = archive.read(archive.save(store, made.code, made.teacher_token, clock()))
    wipe(url)
    fresh = ClassStore(url, clock=clock)
    for token in (seats[0], fresh.create_class().teacher_token, ""):
        with pytest.raises(archive.RefusedFile, match="did not save this file"):
            archive.restore(fresh, saved, token)


def test_archive_a_screen_the_teacher_added_saves_and_continues_it(store, url, clock):
    made, seats = first_lecture(store)
    pair, laptop = store.request_device()
    store.add_device(made.code, made.teacher_token, pair)
    saved = archive.read(archive.save(store, made.code, laptop, clock()))
    wipe(url)
    fresh = ClassStore(url, clock=clock)
    archive.restore(fresh, saved, laptop)
    assert fresh.role(made.code, laptop) == "teacher"
    assert fresh.role(made.code, made.teacher_token) == "teacher"  # the projector's too
    assert fresh.role(made.code, seats[2]) == "student"


def test_archive_a_live_class_of_that_code_is_not_replaced(store, clock):
    made, seats = first_lecture(store)
    saved = archive.read(archive.save(store, made.code, made.teacher_token, clock()))
    extra = store.ask(made.code, made.teacher_token, "Asked after saving", ["a", "b"], "a")
    with pytest.raises(ClassExists, match="live here already"):
        archive.restore(store, saved, made.teacher_token)
    asked = [q.qid for q in store.questions(made.code, made.teacher_token)]
    assert asked[-1] == extra and len(asked) == 12  # nothing merged, nothing lost
    assert store.role(made.code, seats[0]) == "student"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda c: c.update(code="not a code"), "not a class code"),
        (lambda c: c.update(lifetime=99), "A class lives"),
        (lambda c: c["students"][0].update(token_hash="x"), "64 hexadecimal"),
        (lambda c: c["students"][1].update(seat=7), "Seats must be numbered"),
        (lambda c: c["students"][0].update(joined_at=2e9), "order the students joined"),
        (lambda c: c["answers"].append(c["answers"][0]), "once"),
        (lambda c: c["answers"][0].__setitem__(2, "neither"), "not one of the choices"),
        (lambda c: c["questions"][0].update(choices=["only one"]), "2 to 26"),
        (lambda c: c.pop("students"), "not a class's data"),
        (lambda c: c["questions"][0]["given"]["rows"][0][1].pop(), "each one per column"),
    ],
)
def test_archive_the_store_refuses_a_class_that_is_not_one(store, url, clock, change, reason):
    """Data signed by the teacher's own token but not a class's (a bug, or an edit re-signed):
    the store checks it as it checks what it is given, and writes nothing."""
    made, _ = first_lecture(store)
    saved = store.export_class(made.code, made.teacher_token)
    change(saved)
    wipe(url)
    fresh = ClassStore(url, clock=clock)
    with pytest.raises(ValueError, match=reason):
        fresh.restore_class(saved, made.teacher_token)
    with pytest.raises(LookupError):
        fresh.role(made.code, made.teacher_token)
