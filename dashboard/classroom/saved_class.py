"""A class as plain data, out of the database and back in (archive.py signs it into a file): its
rows as `ClassStore.export_class` gives them, the check of such data before it is restored (each
thing checked as the store checks what it is given), and the rows written again. Plain Python:
nothing here imports Streamlit.
"""

from __future__ import annotations

import json
import re

from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Connection

from dashboard.classroom.bounds import VIEW_CHARS
from dashboard.classroom.schema import (
    CODE_ALPHABET,
    CODE_LENGTH,
    COURSE_SECONDS,
    EXPIRY_SECONDS,
    LIFETIMES,
    answers,
    classes,
    questions,
    students,
)
from dashboard.classroom.typed import given_of, normalise_code, question_row, stored_answer

DIGEST = re.compile(r"[0-9a-f]{64}")


class ClassExists(ValueError):
    """A live class already has the code of the class being continued from a file."""

    def __init__(self, code: str) -> None:
        super().__init__(
            f"Class {code} is live here already: continuing it from a file would replace what "
            "it holds now, so nothing was changed. End that class first, or keep teaching it."
        )


def export(conn: Connection, row, screens: list[str]) -> dict:
    """Class `row` as plain data: its lifetime, the digests of its teacher's and `screens`'
    tokens, its students by seat (a number and a token's digest: no token, and no nickname, as
    the concept check promises), its questions in the order asked and every answer by seat."""
    joined = conn.execute(
        select(students)
        .where(students.c.class_code == row.code)
        .order_by(students.c.joined_at, students.c.id)
    ).all()
    seat_of = {student.id: number for number, student in enumerate(joined, start=1)}
    asked = conn.execute(
        select(questions).where(questions.c.class_code == row.code).order_by(questions.c.id)
    ).all()
    number_of = {question.id: number for number, question in enumerate(asked, start=1)}
    given = conn.execute(
        select(answers)
        .where(answers.c.question_id.in_(number_of))
        .order_by(answers.c.question_id, answers.c.answered_at, answers.c.student_id)
    ).all()
    return {
        "code": row.code,
        "created_at": row.created_at,
        "active_at": row.active_at,
        "lifetime": EXPIRY_SECONDS if row.lifetime is None else float(row.lifetime),
        "teacher_hash": row.teacher_hash,
        "screens": screens,
        "view": None if row.view_url is None else [row.view_url, row.view_at],
        "students": [
            {"seat": seat_of[s.id], "token_hash": s.token_hash, "joined_at": s.joined_at}
            for s in joined
        ],
        "questions": [exported_question(number_of[q.id], q) for q in asked],
        "answers": [
            [number_of[a.question_id], seat_of[a.student_id], a.value, a.answered_at] for a in given
        ],
    }


def exported_question(number: int, q) -> dict:
    """A question's row as plain data, numbered in the order asked."""
    return {"number": number, "prompt": q.prompt,
            "choices": None if q.choices is None else json.loads(q.choices),
            "answer": q.answer, "working": json.loads(q.working or "[]"),
            "mistakes": json.loads(q.mistakes or "[]"), "kind": q.kind,
            "closed": bool(q.closed), "revealed": bool(q.revealed), "asked_at": q.asked_at,
            "given": json.loads(q.given) if q.given else None}  # fmt: skip


def restorable(saved: object) -> dict:
    """The rows of a class `export` gave, each checked as the store checks what it is given
    (ValueError naming the first thing wrong): the code, digests, the lifetime, seats in the
    order they joined, questions, and answers that are each one of their question's."""
    try:
        return _rows(saved)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise ValueError(f"This is not a class's data ({type(error).__name__}: {error}).") from None


def restore(conn: Connection, rows: dict, now: float) -> None:
    """Write the checked `rows` of a class (`restorable`) as they were, active `now`;
    ClassExists when a class has its code, ValueError when one of its students' tokens has a
    seat elsewhere (nothing is merged). Its screens are pairing's to seat."""
    code = rows["class"]["code"]
    live = conn.execute(select(classes.c.code).where(classes.c.code == code)).first()
    if live is not None:
        raise ClassExists(code)
    hashes = [s["token_hash"] for s in rows["students"]]
    taken = conn.execute(
        select(students.c.token_hash).where(students.c.token_hash.in_(hashes))
    ).first()
    if taken is not None:
        raise ValueError("A student of this file already has a seat in another class.")
    conn.execute(insert(classes).values(**rows["class"], active_at=now))
    student_id = _insert_each(conn, students, code, rows["students"], "seat")
    question_id = _insert_each(conn, questions, code, rows["questions"], "number")
    if rows["answers"]:
        conn.execute(insert(answers), [
            {"question_id": question_id[number], "student_id": student_id[seat],
             "value": value, "answered_at": at}
            for number, seat, value, at in rows["answers"]
        ])  # fmt: skip


def _moment(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"A time must be a number of seconds, not {value!r}.")
    return float(value)


def _digest(value: object) -> str:
    if not isinstance(value, str) or not DIGEST.fullmatch(value):
        raise ValueError("A token's digest must be 64 hexadecimal digits.")
    return value


def _rows(saved) -> dict:
    code = _code(saved)
    view = saved["view"]
    if view is not None and not (isinstance(view[0], str) and len(view[0]) <= VIEW_CHARS):
        raise ValueError("A view is a relative link into this app.")
    seated = _seats(saved["students"])
    asked = _questions(saved["questions"])
    given = _answers(saved["answers"], asked, len(seated))
    return {
        "class": {
            "code": code, "teacher_hash": _digest(saved["teacher_hash"]),
            "created_at": _moment(saved["created_at"]), "lifetime": float(saved["lifetime"]),
            "view_url": None if view is None else view[0],
            "view_at": None if view is None else _moment(view[1]),
        },
        "screens": [_digest(screen) for screen in saved["screens"]],
        "students": seated,
        "questions": asked,
        "answers": given,
    }  # fmt: skip


def _code(saved) -> str:
    """The saved class's code, checked, and its lifetime checked with it."""
    code = normalise_code(saved["code"])
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise ValueError(f"{saved['code']!r} is not a class code.")
    if saved["lifetime"] not in LIFETIMES:
        raise ValueError(f"A class lives {EXPIRY_SECONDS} s or {COURSE_SECONDS} s.")
    return code


def _seats(seated) -> list[dict]:
    """The students' rows: seats 1, 2, 3, ... in the order they joined, each a different
    token's digest."""
    if [s["seat"] for s in seated] != list(range(1, len(seated) + 1)):
        raise ValueError("Seats must be numbered 1, 2, 3, ... in the order the students joined.")
    joined = [_moment(s["joined_at"]) for s in seated]
    if joined != sorted(joined):
        raise ValueError("Seats must be in the order the students joined.")
    hashes = [_digest(s["token_hash"]) for s in seated]
    if len(set(hashes)) != len(hashes):
        raise ValueError("Two seats have the same token.")
    return [
        {"seat": s["seat"], "token_hash": h, "joined_at": at}
        for s, h, at in zip(seated, hashes, joined, strict=True)
    ]


def _questions(asked) -> list[dict]:
    """The questions' rows, numbered 1, 2, 3, ... in the order asked, each checked as `ask`
    checks a question."""
    if [q["number"] for q in asked] != list(range(1, len(asked) + 1)):
        raise ValueError("Questions must be numbered 1, 2, 3, ... in the order asked.")
    return [
        {"number": q["number"], "closed": q["closed"] is True, "revealed": q["revealed"] is True,
         "asked_at": _moment(q["asked_at"]),
         **question_row(q["prompt"], q["choices"], q["answer"], q["working"], q["mistakes"],
                        q["kind"], given_of(json.dumps(q["given"])) if q.get("given") else None)}
        for q in asked
    ]  # fmt: skip


def _answers(saved, asked: list[dict], seats: int) -> list[tuple]:
    """The answers as (question number, seat, value, time): each one seat's, to one question,
    once, read as `answer` reads it."""
    given, pairs = [], set()
    for number, seat, value, at in saved:
        if not (1 <= number <= len(asked) and 1 <= seat <= seats) or (number, seat) in pairs:
            raise ValueError("An answer must be one seat's, to one question of the class, once.")
        question = asked[number - 1]
        choices = None if question["choices"] is None else json.loads(question["choices"])
        given.append((number, seat, stored_answer(value, choices, question["kind"]), _moment(at)))
        pairs.add((number, seat))
    return given


def _insert_each(conn: Connection, table: Table, code: str, rows: list[dict], by: str) -> dict:
    """Insert each row into `table` for class `code`; {the row's `by` (a seat, a question's
    number): the id the database gave it}."""
    return {
        row[by]: conn.execute(
            insert(table).values(class_code=code, **{k: v for k, v in row.items() if k != by})
        ).inserted_primary_key[0]
        for row in rows
    }
