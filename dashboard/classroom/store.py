"""The class store: classes, students, questions and answers in a database that every worker and
replica shares (SQLAlchemy Core; SQLite by default, PostgreSQL by URL: database.py).

One `Table` per thing, one transaction per unit of work, the same statements on both
databases (the one exception is the answer upsert, written per dialect). Plain Python: nothing
here imports Streamlit. The contract, the limits and why they are what they are:
docs/classroom.md.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection

from dashboard.classroom.database import (
    TOKEN_BYTES,
    Database,
    digest,
    metadata,
    plain,
    retry,
    upsert,
)

T = TypeVar("T")


EXPIRY_SECONDS = 12 * 3600  # a class goes 12 hours after its last activity (a school day)
COURSE_SECONDS = 30 * 24 * 3600  # a course's class (several lectures, a check before and after)
LIFETIMES = (EXPIRY_SECONDS, COURSE_SECONDS)  # what a teacher may choose
ACTIVITY_STEP = 60.0  # last activity is written at most once a minute (60 answers, one write)
# Codes: 6 symbols from 31 (no 0/O, 1/I/L), 31**6 ≈ 8.9e8 codes; typed case-insensitively
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
PAIR_LENGTH = 8  # a device's pairing code, typed by the teacher on the screen that runs the class
PAIR_SECONDS = 600  # a device waits this long for the teacher to type its code
PAIRS_PER_MINUTE = 60  # store-wide requests for a pairing code
JOINS_PER_MINUTE = 120  # per class: a class of 60 joining at once, twice over
MISSES_PER_MINUTE = 60  # store-wide lookups of unknown codes before code-only calls are refused
WINDOW = 60.0  # seconds the two limits count over
# Text a person types: bounded, plain
NICKNAME_CHARS, PROMPT_CHARS, CHOICE_CHARS, ANSWER_CHARS, VIEW_CHARS = 40, 2000, 200, 200, 2000
MAX_CHOICES = 26
MAX_WORKING = 40  # lines of working per question


classes = Table(
    "classes",
    metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("teacher_hash", String(64), nullable=False),  # SHA-256 of the teacher's token
    Column("created_at", Float, nullable=False),
    Column("active_at", Float, nullable=False, index=True),  # last activity: expiry counts from it
    Column("view_url", Text),  # "follow the teacher": the last view the teacher sent
    Column("view_at", Float),
    Column("lifetime", Float),  # seconds idle before it goes; NULL (made before): EXPIRY_SECONDS
)

# How long a class lives idle: its own lifetime, or a lecture's for a class made before courses.
LIFETIME = func.coalesce(classes.c.lifetime, EXPIRY_SECONDS)

students = Table(
    "students",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", ForeignKey("classes.code", ondelete="CASCADE"), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),  # SHA-256 of the token
    Column("nickname", String(NICKNAME_CHARS)),  # optional, plain text
    Column("joined_at", Float, nullable=False),
    Index("ix_students_class_joined", "class_code", "joined_at"),
)

questions = Table(
    "questions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", ForeignKey("classes.code", ondelete="CASCADE"), nullable=False),
    Column("prompt", Text, nullable=False),
    Column("choices", Text),  # a JSON list of strings; NULL: the answer is a number
    Column("answer", Text, nullable=False),  # normalised as answers are
    Column("working", Text),  # a JSON list of lines, shown with the answer once revealed
    Column("mistakes", Text),  # JSON [[choice, [[bug, title], ...]], ...]: wrong choices' causes
    Column("kind", Text),  # "whole": a whole number, graded exactly; NULL: a choice or a number
    Column(
        "given", Text
    ),  # JSON {"columns": [...], "rows": [[name, [cell, ...]], ...]}: its numbers
    Column("closed", Boolean, nullable=False, default=False),
    Column("revealed", Boolean, nullable=False, default=False),
    Column("asked_at", Float, nullable=False),
    Index("ix_questions_class", "class_code"),
)

answers = Table(
    "answers",
    metadata,
    Column("question_id", ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
    Column("student_id", ForeignKey("students.id", ondelete="CASCADE"), primary_key=True),
    Column("value", String(ANSWER_CHARS), nullable=False),  # normalised text, never markup
    Column("answered_at", Float, nullable=False),
)

devices = Table(  # the teacher's other screens (a laptop beside the projector), issue 42 item 7
    "devices",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("pair_code", String(PAIR_LENGTH), unique=True),  # shown on the device; NULL once used
    Column("token_hash", String(64), nullable=False, unique=True),  # the device's own token
    Column("class_code", ForeignKey("classes.code", ondelete="CASCADE")),  # NULL: waiting
    Column("requested_at", Float, nullable=False, index=True),
)

misses = Table(  # lookups of codes that name no class: what the enumeration limit counts
    "misses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False, index=True),
)


class UnknownClass(LookupError):
    """No live class has that code (never created, deleted or expired)."""

    unknown_code = True

    def __init__(self) -> None:
        super().__init__("No class has that code (or it has expired).")


class ClassExists(ValueError):
    """A live class already has the code of the class being continued from a file."""

    def __init__(self, code: str) -> None:
        super().__init__(
            f"Class {code} is live here already: continuing it from a file would replace what "
            "it holds now, so nothing was changed. End that class first, or keep teaching it."
        )


class RateLimited(PermissionError):
    """Too many joins to one class, or too many unknown codes store-wide, in the last minute:
    try again after `retry_after` seconds."""

    retry_after = WINDOW

    def __init__(self, message: str, unknown_code: bool = False) -> None:
        super().__init__(message)
        self.unknown_code = unknown_code


@dataclass(frozen=True)
class ClassInfo:
    """A new class: the code students type, and the teacher's secret."""

    code: str
    teacher_token: str
    created_at: float
    lifetime: float = EXPIRY_SECONDS  # seconds after its last activity before it goes


@dataclass(frozen=True)
class Tally:
    """Who answered what: `counts` maps each answer (choices in their order, zeros included;
    numbers in ascending order) to how many students gave it."""

    qid: int
    counts: dict[str, int]
    answered: int  # students who answered, each once
    joined: int  # students in the class
    closed: bool
    revealed: bool


@dataclass(frozen=True)
class Question:
    """A question as a student sees it (`answer` only once revealed, or for the teacher)."""

    qid: int
    prompt: str
    choices: tuple[str, ...] | None  # None: the answer is a number
    closed: bool
    revealed: bool
    answer: str | None
    working: tuple[str, ...] = ()  # how the answer is found: with the answer, once revealed
    # the classic mistakes behind wrong choices: (choice, ((bug, title), ...)), once revealed
    mistakes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    kind: str | None = None  # WHOLE: a whole number, graded exactly; WEIGHT: % accepted
    asked_at: float | None = None  # when the teacher asked it
    given: Given | None = None  # the numbers it gives, as a table (shown under the prompt)


@dataclass(frozen=True)
class Given:
    """A question's numbers as a table: named rows over named columns, each cell as printed."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]


MAX_GIVEN = 64  # rows and columns of a question's table: a lesson's largest T is 64


def _given(stored: str | None) -> Given | None:
    if not stored:
        return None
    table = json.loads(stored)
    return Given(tuple(table["columns"]), tuple((n, tuple(c)) for n, c in table["rows"]))


@dataclass(frozen=True)
class View:
    """The view the teacher sent: a relative link into the app, and when."""

    url: str
    sent_at: float


def _mistakes(stored: str | None) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    return tuple(
        (choice, tuple((bug, title) for bug, title in named))
        for choice, named in json.loads(stored or "[]")
    )


def normalise_code(typed: object) -> str:
    """A typed class code as stored: capitals, no spaces or dashes."""
    return re.sub(r"[\s\-]", "", str(typed or "")).upper()


def stored_number(typed: object) -> str:
    """A typed number as stored text ("0,50" and "0.5" are both "0.5"); ValueError otherwise."""
    # attention.drills reads what students type in every script (decimal commas, Unicode minus,
    # other digits); imported here because importing attention loads torch, which the store
    # needs for nothing else.
    from attention.drills import parse_number as read

    value = read(str(typed)[:ANSWER_CHARS])
    return format(value + 0.0, ".10g")  # + 0.0: "-0" is "0"


def stored_weight(typed: object) -> str:
    """A typed weight as stored text: a number, or a percentage ("34 %" is "0.34"), as the
    lessons read a weight (attention.drills.parse_percent); ValueError otherwise."""
    from attention.drills import parse_percent

    value = parse_percent(str(typed)[:ANSWER_CHARS])
    return format(value + 0.0, ".10g")


WHOLE = "whole"  # a question kind: a whole number, graded exactly as the lessons grade it
WEIGHT = "weight"  # a question kind: a weight, which may be typed as a percentage ("34 %")
WHOLE_ONLY = "Type a whole number: this answer has no decimals."  # attention.drills.grade's


def _normalise(typed: object, choices: Sequence[str] | None, kind: str | None = None) -> str:
    if choices is None:
        number = stored_weight(typed) if kind == WEIGHT else stored_number(typed)
        if kind == WHOLE and not float(number).is_integer():
            raise ValueError(WHOLE_ONLY)
        return number
    value = plain(typed, CHOICE_CHARS)
    if value not in choices:
        raise ValueError(f"“{value[:40]}” is not one of the choices.")
    return value


class ClassStore(Database):
    """Classes in a database: `ClassStore(url)` with a SQLAlchemy URL ("sqlite:///path.db",
    "postgresql+psycopg://..."), or ATTENTION_CLASS_DB, or data/classroom.db."""

    TABLES = (classes, students, questions, answers, devices, misses)

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: Callable[[], float] = time.time,
        joins_per_minute: int = JOINS_PER_MINUTE,
        misses_per_minute: int = MISSES_PER_MINUTE,
    ) -> None:
        super().__init__(url, clock=clock)
        self.joins_per_minute = joins_per_minute
        self.misses_per_minute = misses_per_minute

    @staticmethod
    def upgrade(conn: Connection) -> None:
        """A store made before questions had a working, the mistakes behind their choices, or a
        kind, or before classes had a lifetime, gets the columns (create_all adds tables, never
        columns)."""
        present = {c["name"] for c in inspect(conn).get_columns("questions")}
        for name in ("working", "mistakes", "kind", "given"):
            if name not in present:
                conn.execute(text(f"ALTER TABLE questions ADD COLUMN {name} TEXT"))
        if "lifetime" not in {c["name"] for c in inspect(conn).get_columns("classes")}:
            conn.execute(text("ALTER TABLE classes ADD COLUMN lifetime FLOAT"))

    # -- units of work ------------------------------------------------------------------------

    def _unit(self, work: Callable[[Connection, float], T], *, write: bool = True) -> T:
        """One transaction (Database._unit); a refusal for an unknown code then records the
        miss in a transaction of its own."""
        try:
            return super()._unit(work, write=write)
        except (UnknownClass, RateLimited) as error:
            if error.unknown_code:
                retry(lambda: self._record_miss(self.clock()))
            raise

    def _record_miss(self, now: float) -> None:
        with self.engine.connect() as conn:
            conn.execution_options(begin_immediate=True)
            with conn.begin():
                conn.execute(delete(misses).where(misses.c.at < now - WINDOW))
                conn.execute(insert(misses).values(at=now))

    def _over_limit(self, conn: Connection, now: float) -> bool:
        recent = select(func.count()).select_from(misses).where(misses.c.at >= now - WINDOW)
        return conn.execute(recent).scalar_one() >= self.misses_per_minute

    def _refuse(self, conn: Connection, now: float, error: Exception, unknown: bool) -> None:
        """Raise `error`; while unknown codes are being tried faster than the limit, raise
        RateLimited instead, whatever the code, so that no answer tells a live code apart."""
        if self._over_limit(conn, now):
            raise RateLimited("Too many wrong class codes: try again in a minute.", unknown)
        raise error

    def _class(self, conn: Connection, code: str, now: float):
        """The live class with this code; UnknownClass (or RateLimited) when there is none."""
        row = conn.execute(
            select(classes).where(
                classes.c.code == normalise_code(code),
                classes.c.active_at >= now - LIFETIME,
            )
        ).first()
        if row is None:
            self._refuse(conn, now, UnknownClass(), unknown=True)
        return row

    def _is_teacher(self, conn: Connection, row, token: str) -> bool:
        """The class's teacher: the token that started it, or a device the teacher added."""
        mine = digest(token or "")
        if hmac.compare_digest(mine, row.teacher_hash):
            return True
        added = select(devices.c.id).where(
            devices.c.token_hash == mine, devices.c.class_code == row.code
        )
        return conn.execute(added).first() is not None

    def _teacher(self, conn: Connection, code: str, token: str, now: float):
        row = self._class(conn, code, now)
        if not self._is_teacher(conn, row, token):
            self._refuse(conn, now, PermissionError("Only the class's teacher can do that."), False)
        return row

    def _student(self, conn: Connection, row, token: str, now: float):
        """The student of class `row` whose token this is."""
        student = conn.execute(
            select(students).where(
                students.c.token_hash == digest(token or ""),
                students.c.class_code == row.code,
            )
        ).first()
        if student is None:
            self._refuse(conn, now, PermissionError("That is not a student of this class."), False)
        return student

    def _member(self, conn: Connection, code: str, token: str, now: float):
        """The class, for its teacher or one of its students."""
        row = self._class(conn, code, now)
        if not self._is_teacher(conn, row, token):
            self._student(conn, row, token, now)
        return row

    def _touch(self, conn: Connection, code: str, now: float) -> None:
        """Activity: expiry counts from now (written at most once per ACTIVITY_STEP)."""
        conn.execute(
            update(classes)
            .where(classes.c.code == code, classes.c.active_at < now - ACTIVITY_STEP)
            .values(active_at=now)
        )

    def _question(self, conn: Connection, code: str, qid: int):
        row = conn.execute(
            select(questions).where(questions.c.id == int(qid), questions.c.class_code == code)
        ).first()
        if row is None:
            raise LookupError("This class has no such question.")
        return row

    # -- the contract -------------------------------------------------------------------------

    def create_class(self, lifetime: float = EXPIRY_SECONDS) -> ClassInfo:
        """A new class with a fresh code and teacher token (expired classes are purged first),
        deleted `lifetime` seconds after its last activity: one of LIFETIMES, a lecture's 12
        hours or a course's 30 days."""
        if lifetime not in LIFETIMES:
            raise ValueError(
                f"A class lives {EXPIRY_SECONDS} s (a lecture) or {COURSE_SECONDS} s (a course) "
                f"after its last activity, not {lifetime!r}."
            )
        self.purge_expired()
        token = secrets.token_urlsafe(TOKEN_BYTES)

        def work(conn: Connection, now: float) -> ClassInfo:
            code = _fresh_code(conn, classes.c.code, CODE_LENGTH)
            conn.execute(
                insert(classes).values(
                    code=code,
                    teacher_hash=digest(token),
                    created_at=now,
                    active_at=now,
                    lifetime=float(lifetime),
                )
            )
            return ClassInfo(code=code, teacher_token=token, created_at=now, lifetime=lifetime)

        return self._unit(work)

    def join(self, code: str, nickname: str | None = None) -> str:
        """A new student's secret token; the nickname (optional) is plain text."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        name = plain(nickname, NICKNAME_CHARS) if nickname else None

        def work(conn: Connection, now: float) -> str:
            if self._over_limit(conn, now):  # a live code is refused too: no oracle
                raise RateLimited("Too many wrong class codes: try again in a minute.")
            row = self._class(conn, code, now)
            recent = (
                select(func.count())
                .select_from(students)
                .where(students.c.class_code == row.code, students.c.joined_at >= now - WINDOW)
            )
            if conn.execute(recent).scalar_one() >= self.joins_per_minute:
                raise RateLimited("Too many joins to this class: try again in a minute.")
            conn.execute(
                insert(students).values(
                    class_code=row.code,
                    token_hash=digest(token),
                    nickname=name or None,
                    joined_at=now,
                )
            )
            self._touch(conn, row.code, now)
            return token

        return self._unit(work)

    def ask(
        self,
        code: str,
        teacher_token: str,
        prompt: str,
        choices: Sequence[str] | None,
        answer: str | float,
        working: Sequence[str] = (),
        mistakes: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
        kind: str | None = None,
        given: Given | None = None,
    ) -> int:
        """A new open question; `choices` None asks for a number (`kind` WHOLE: a whole number,
        graded exactly); `working` (lines of plain text) is shown with the answer once revealed,
        and so are `mistakes`: for a wrong choice, the catalogue's mistakes (bug name, title)
        that give it; `given`, the numbers it gives, is shown as a table. Returns its id."""
        asked = _question_row(prompt, choices, answer, working, mistakes, kind, given)

        def work(conn: Connection, now: float) -> int:
            row = self._teacher(conn, code, teacher_token, now)
            self._touch(conn, row.code, now)
            return conn.execute(
                insert(questions).values(
                    class_code=row.code, closed=False, revealed=False, asked_at=now, **asked
                )
            ).inserted_primary_key[0]

        return self._unit(work)

    def answer(self, code: str, token: str, qid: int, value: str | float) -> None:
        """A student's answer; a later one replaces the earlier. ValueError when the question is
        closed or the value is not a number (numeric) or not one of the choices."""

        def work(conn: Connection, now: float) -> None:
            row = self._class(conn, code, now)
            student = self._student(conn, row, token, now)
            question = self._question(conn, row.code, qid)
            if question.closed:
                raise ValueError("This question is closed.")
            choices = None if question.choices is None else json.loads(question.choices)
            stored = _normalise(value, choices, question.kind)
            given = upsert(conn)(answers).values(
                question_id=question.id, student_id=student.id, value=stored, answered_at=now
            )
            conn.execute(
                given.on_conflict_do_update(
                    index_elements=[answers.c.question_id, answers.c.student_id],
                    set_={"value": stored, "answered_at": now},
                )
            )
            self._touch(conn, row.code, now)

        self._unit(work)

    def tally(self, code: str, teacher_token: str, qid: int) -> Tally:
        """The counts of one question, for the teacher."""

        def work(conn: Connection, now: float) -> Tally:
            row = self._teacher(conn, code, teacher_token, now)
            question = self._question(conn, row.code, qid)
            grouped = conn.execute(
                select(answers.c.value, func.count())
                .where(answers.c.question_id == question.id)
                .group_by(answers.c.value)
            ).all()
            found = {value: n for value, n in grouped}
            if question.choices is None:
                counts = {value: found[value] for value in sorted(found, key=float)}
            else:
                counts = {choice: found.get(choice, 0) for choice in json.loads(question.choices)}
            joined = _class_size(conn, row.code)
            return Tally(
                qid=question.id,
                counts=counts,
                answered=sum(found.values()),
                joined=joined,
                closed=question.closed,
                revealed=question.revealed,
            )

        return self._unit(work, write=False)

    def joined(self, code: str, teacher_token: str) -> int:
        """How many students have joined the class, for the teacher."""

        def work(conn: Connection, now: float) -> int:
            row = self._teacher(conn, code, teacher_token, now)
            return _class_size(conn, row.code)

        return self._unit(work, write=False)

    def close(self, code: str, teacher_token: str, qid: int) -> None:
        """No more answers to this question."""
        self._set(code, teacher_token, qid, closed=True)

    def reveal(self, code: str, teacher_token: str, qid: int) -> str:
        """The right answer, now shown to the students; revealing closes the question."""
        return self._set(code, teacher_token, qid, closed=True, revealed=True)

    def _set(self, code: str, teacher_token: str, qid: int, **flags: bool) -> str:
        def work(conn: Connection, now: float) -> str:
            row = self._teacher(conn, code, teacher_token, now)
            self._touch(conn, row.code, now)
            question = self._question(conn, row.code, qid)
            conn.execute(update(questions).where(questions.c.id == question.id).values(**flags))
            return question.answer

        return self._unit(work)

    def questions(self, code: str, token: str) -> tuple[Question, ...]:
        """The class's questions in the order asked, for its teacher (with the answers) or a
        student (an answer once revealed)."""

        def work(conn: Connection, now: float) -> tuple[Question, ...]:
            row = self._member(conn, code, token, now)
            teacher = self._is_teacher(conn, row, token)
            rows = conn.execute(
                select(questions).where(questions.c.class_code == row.code).order_by(questions.c.id)
            ).all()
            return tuple(
                Question(
                    qid=q.id,
                    prompt=q.prompt,
                    choices=None if q.choices is None else tuple(json.loads(q.choices)),
                    closed=q.closed,
                    revealed=q.revealed,
                    answer=q.answer if teacher or q.revealed else None,
                    working=tuple(json.loads(q.working or "[]")) if teacher or q.revealed else (),
                    mistakes=_mistakes(q.mistakes) if teacher or q.revealed else (),
                    kind=q.kind,
                    asked_at=q.asked_at,
                    given=_given(q.given),
                )
                for q in rows
            )

        return self._unit(work, write=False)

    def role(self, code: str, token: str) -> str:
        """ "teacher" or "student": who holds this token in the class (PermissionError for
        neither). A screen opened with a token asks this before it shows anything."""

        def work(conn: Connection, now: float) -> str:
            row = self._member(conn, code, token, now)
            return "teacher" if self._is_teacher(conn, row, token) else "student"

        return self._unit(work, write=False)

    def lifetime(self, code: str) -> float:
        """Seconds the class with this code lives after its last activity (EXPIRY_SECONDS or
        COURSE_SECONDS): how long a seat's cookie is kept. A lookup of a code, refused as
        `join` is for an unknown one."""

        def work(conn: Connection, now: float) -> float:
            row = self._class(conn, code, now)
            return EXPIRY_SECONDS if row.lifetime is None else float(row.lifetime)

        return self._unit(work, write=False)

    def nickname(self, code: str, token: str) -> str | None:
        """A student's own nickname (None if they gave none): what a screen reopened from the
        browser's cookie says again ("You joined as Ada"). Only the student's token reads it."""

        def work(conn: Connection, now: float) -> str | None:
            row = self._class(conn, code, now)
            return self._student(conn, row, token, now).nickname

        return self._unit(work, write=False)

    def answers_of(self, code: str, token: str) -> dict[int, str]:
        """A student's own answers, by question id (as stored): what a screen that reconnected
        to another worker shows again."""

        def work(conn: Connection, now: float) -> dict[int, str]:
            row = self._class(conn, code, now)
            student = self._student(conn, row, token, now)
            found = conn.execute(
                select(answers.c.question_id, answers.c.value).where(
                    answers.c.student_id == student.id
                )
            ).all()
            return {qid: value for qid, value in found}

        return self._unit(work, write=False)

    def all_answers(self, code: str, teacher_token: str) -> list[tuple[int, str | None, str]]:
        """Every answer of the class as (question id, the student's nickname, the answer), in
        the order asked and answered: the teacher's download, never the projector's."""

        def work(conn: Connection, now: float) -> list[tuple[int, str | None, str]]:
            row = self._teacher(conn, code, teacher_token, now)
            rows = conn.execute(
                select(answers.c.question_id, students.c.nickname, answers.c.value)
                .join(students, students.c.id == answers.c.student_id)
                .join(questions, questions.c.id == answers.c.question_id)
                .where(questions.c.class_code == row.code)
                .order_by(answers.c.question_id, answers.c.answered_at)
            )
            return [(r.question_id, r.nickname, r.value) for r in rows]

        return self._unit(work, write=False)

    def answers_by_seat(self, code: str, teacher_token: str) -> list[tuple[int, int, str]]:
        """Every answer of the class as (question id, the student's seat, the answer): a seat
        is a number, 1 for the first student to join, never a name or a token, so a student's
        answers to two questions can be paired (the concept check's before and after)."""

        def work(conn: Connection, now: float) -> list[tuple[int, int, str]]:
            row = self._teacher(conn, code, teacher_token, now)
            seat = {
                r.id: number
                for number, r in enumerate(
                    conn.execute(
                        select(students.c.id)
                        .where(students.c.class_code == row.code)
                        .order_by(students.c.joined_at, students.c.id)
                    ),
                    start=1,
                )
            }
            rows = conn.execute(
                select(answers.c.question_id, answers.c.student_id, answers.c.value)
                .join(questions, questions.c.id == answers.c.question_id)
                .where(questions.c.class_code == row.code)
                .order_by(answers.c.question_id, answers.c.student_id)
            )
            return [(r.question_id, seat[r.student_id], r.value) for r in rows]

        return self._unit(work, write=False)

    def send_view(self, code: str, teacher_token: str, url: str) -> None:
        """Send the class to a view: a relative link into this app ("/page?x=1" or "?x=1")."""
        link = str(url)
        if not re.fullmatch(r"(/(?![/\\])|\?)[^\s\\]*", link) or len(link) > VIEW_CHARS:
            raise ValueError("A view is a relative link into this app, like /lesson?x=1.")

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            conn.execute(
                update(classes)
                .where(classes.c.code == row.code)
                .values(view_url=link, view_at=now, active_at=now)
            )

        self._unit(work)

    def current_view(self, code: str, token: str) -> View | None:
        """The last view the teacher sent, for a student (or the teacher) of the class."""

        def work(conn: Connection, now: float) -> View | None:
            row = self._member(conn, code, token, now)
            return None if row.view_url is None else View(url=row.view_url, sent_at=row.view_at)

        return self._unit(work, write=False)

    # -- the teacher's other devices ------------------------------------------------------------

    def request_device(self) -> tuple[str, str]:
        """A screen that wants to run a class it did not start (the teacher's laptop, the class
        started on the projector): its pairing code, to be typed by the teacher where the class
        runs (`add_device`), and its own secret token, which becomes a teacher's once added.
        No token travels between the screens, and the store keeps only its digest."""
        token = secrets.token_urlsafe(TOKEN_BYTES)

        def work(conn: Connection, now: float) -> str:
            conn.execute(delete(devices).where(_unused_devices(now)))
            recent = (
                select(func.count())
                .select_from(devices)
                .where(devices.c.class_code.is_(None), devices.c.requested_at >= now - WINDOW)
            )
            if conn.execute(recent).scalar_one() >= PAIRS_PER_MINUTE:
                raise RateLimited("Too many screens are asking to be added: try in a minute.")
            pair = _fresh_code(conn, devices.c.pair_code, PAIR_LENGTH)
            conn.execute(
                insert(devices).values(pair_code=pair, token_hash=digest(token), requested_at=now)
            )
            return pair

        return self._unit(work), token

    def add_device(self, code: str, teacher_token: str, pair_code: str) -> None:
        """The teacher adds the screen showing `pair_code` (typed as shown, any case, spaces
        and dashes ignored) to the class: its token is a teacher's from now on. LookupError when
        no screen waits with that code (mistyped, used, or older than PAIR_SECONDS)."""
        pair = normalise_code(pair_code)

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            waiting = (
                (devices.c.pair_code == pair)
                & devices.c.class_code.is_(None)
                & (devices.c.requested_at >= now - PAIR_SECONDS)
            )
            added = conn.execute(
                update(devices).where(waiting).values(class_code=row.code, pair_code=None)
            ).rowcount
            if not added:
                raise LookupError(
                    f"No screen is waiting with the code {pair or pair_code!r}: check it, or "
                    "press *Show a code for this screen* again on that screen (a code works "
                    "once, for 10 minutes)."
                )
            self._touch(conn, row.code, now)

        self._unit(work)

    def device_class(self, device_token: str) -> str | None:
        """The class a waiting screen was added to (its code), or None while it waits;
        LookupError when its code expired unused or its class went."""

        def work(conn: Connection, now: float) -> str | None:
            row = conn.execute(
                select(devices).where(devices.c.token_hash == digest(device_token or ""))
            ).first()
            if row is None or (row.class_code is None and row.requested_at < now - PAIR_SECONDS):
                raise LookupError("This screen's code expired: ask for a new one.")
            return row.class_code

        return self._unit(work, write=False)

    def delete_class(self, code: str, teacher_token: str) -> None:
        """The class and everything in it, gone now."""

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            _delete_classes(conn, classes.c.code == row.code)

        self._unit(work)

    # -- a class kept outside the database (archive.py writes and reads the file) --------------

    def export_class(self, code: str, teacher_token: str) -> dict:
        """The whole class as plain data, for its teacher: its lifetime, the digests of its
        teacher's and screens' tokens, its students by seat (a number and a token's digest: no
        token, and no nickname, as the concept check promises), its questions in the order
        asked and every answer by seat."""

        def work(conn: Connection, now: float) -> dict:
            row = self._teacher(conn, code, teacher_token, now)
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
            screens = conn.execute(
                select(devices.c.token_hash).where(devices.c.class_code == row.code)
            ).scalars()
            return {
                "code": row.code,
                "created_at": row.created_at,
                "active_at": row.active_at,
                "lifetime": EXPIRY_SECONDS if row.lifetime is None else float(row.lifetime),
                "teacher_hash": row.teacher_hash,
                "screens": sorted(screens),
                "view": None if row.view_url is None else [row.view_url, row.view_at],
                "students": [
                    {"seat": seat_of[s.id], "token_hash": s.token_hash, "joined_at": s.joined_at}
                    for s in joined
                ],
                "questions": [
                    {"number": number_of[q.id], "prompt": q.prompt,
                     "choices": None if q.choices is None else json.loads(q.choices),
                     "answer": q.answer, "working": json.loads(q.working or "[]"),
                     "mistakes": json.loads(q.mistakes or "[]"), "kind": q.kind,
                     "closed": bool(q.closed), "revealed": bool(q.revealed), "asked_at": q.asked_at,
                     "given": json.loads(q.given) if q.given else None}
                    for q in asked
                ],
                "answers": [
                    [number_of[a.question_id], seat_of[a.student_id], a.value, a.answered_at]
                    for a in given
                ],
            }  # fmt: skip

        return self._unit(work, write=False)

    def restore_class(self, saved: dict, teacher_token: str) -> ClassInfo:
        """Put back a class `export_class` gave, under its own code, for one of its teachers
        (the token's digest must be its teacher's or one of its screens'): its students keep
        their seats (their cookies' tokens find them again; nicknames are not kept), its
        questions and answers as they were. ValueError when the data is not a class's,
        ClassExists when a live class has the code (nothing is merged)."""
        rows = _restorable(saved)
        mine = digest(teacher_token or "")
        if mine != rows["class"]["teacher_hash"] and mine not in rows["screens"]:
            raise PermissionError("Only the class's teacher can continue it.")
        self.purge_expired()

        def work(conn: Connection, now: float) -> ClassInfo:
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
            conn.execute(
                delete(devices).where(devices.c.token_hash.in_(rows["screens"]))
            )  # a screen's waiting request, if any, gives way to its place in the class
            for screen in rows["screens"]:
                conn.execute(
                    insert(devices).values(token_hash=screen, class_code=code, requested_at=now)
                )
            return ClassInfo(
                code=code,
                teacher_token=teacher_token,
                created_at=rows["class"]["created_at"],
                lifetime=rows["class"]["lifetime"],
            )

        return self._unit(work)

    def purge_expired(self, now: float | None = None) -> int:
        """Delete the classes idle for their lifetime (and old misses, and screens' pairing codes
        never used); how many classes went."""

        def work(conn: Connection, clock_now: float) -> int:
            at = clock_now if now is None else now
            conn.execute(delete(misses).where(misses.c.at < at - WINDOW))
            conn.execute(delete(devices).where(_unused_devices(at)))
            return _delete_classes(conn, classes.c.active_at < at - LIFETIME)

        return self._unit(work)


def _question_row(
    prompt: object,
    choices: Sequence[object] | None,
    answer: object,
    working: Sequence[object],
    mistakes: Sequence[tuple[object, Sequence[tuple[object, object]]]],
    kind: object,
    given: Given | None = None,
) -> dict:
    """A question's columns as stored, checked (ValueError): what `ask` and a class continued
    from a file both write."""
    text_prompt = plain(prompt, PROMPT_CHARS)
    if not text_prompt:
        raise ValueError("A question needs a prompt.")
    listed = None
    if choices is not None:
        listed = [plain(choice, CHOICE_CHARS) for choice in choices]
        if not 2 <= len(listed) <= MAX_CHOICES or len(set(listed)) != len(listed):
            raise ValueError(f"Give 2 to {MAX_CHOICES} different choices.")
        if not all(listed):
            raise ValueError("A choice cannot be empty.")
    if kind not in (None, WHOLE, WEIGHT) or (kind is not None and listed is not None):
        raise ValueError("Only a question without choices can be a whole number or a weight.")
    right = _normalise(answer, listed, kind)
    lines = [plain(line, PROMPT_CHARS) for line in working][:MAX_WORKING]
    causes = [
        [plain(choice, CHOICE_CHARS), [[plain(b, 60), plain(t, 200)] for b, t in named]]
        for choice, named in mistakes
    ]
    if listed is not None and any(choice not in listed for choice, _ in causes):
        raise ValueError("A mistake must name one of the choices.")
    return {
        "prompt": text_prompt,
        "choices": None if listed is None else json.dumps(listed),
        "answer": right,
        "working": json.dumps(lines) if lines else None,
        "mistakes": json.dumps(causes) if causes else None,
        "kind": kind,
        "given": None if given is None else json.dumps(_table(given)),
    }


def _table(given: Given) -> dict:
    """A question's table as stored, checked: at most MAX_GIVEN rows and columns, every row as
    long as the columns, every name and cell plain text."""
    columns = [plain(c, CHOICE_CHARS) for c in given.columns]
    rows = [[plain(n, CHOICE_CHARS), [plain(c, CHOICE_CHARS) for c in cells]]
            for n, cells in given.rows]  # fmt: skip
    if not (0 < len(columns) <= MAX_GIVEN and 0 < len(rows) <= MAX_GIVEN) or any(
        len(cells) != len(columns) for _, cells in rows
    ):
        raise ValueError(f"A question's table has 1 to {MAX_GIVEN} rows, each one per column.")
    return {"columns": columns, "rows": rows}


DIGEST = re.compile(r"[0-9a-f]{64}")


def _restorable(saved: object) -> dict:
    """The rows of a class `export_class` gave, each checked as the store checks what it is
    given (ValueError naming the first thing wrong): the code, digests, the lifetime, seats in
    the order they joined, questions, and answers that are each one of their question's."""
    try:
        return _rows(saved)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise ValueError(f"This is not a class's data ({type(error).__name__}: {error}).") from None


def _moment(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"A time must be a number of seconds, not {value!r}.")
    return float(value)


def _digest(value: object) -> str:
    if not isinstance(value, str) or not DIGEST.fullmatch(value):
        raise ValueError("A token's digest must be 64 hexadecimal digits.")
    return value


def _rows(saved) -> dict:
    code = normalise_code(saved["code"])
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise ValueError(f"{saved['code']!r} is not a class code.")
    if saved["lifetime"] not in LIFETIMES:
        raise ValueError(f"A class lives {EXPIRY_SECONDS} s or {COURSE_SECONDS} s.")
    view = saved["view"]
    if view is not None and not (isinstance(view[0], str) and len(view[0]) <= VIEW_CHARS):
        raise ValueError("A view is a relative link into this app.")
    seated = saved["students"]
    if [s["seat"] for s in seated] != list(range(1, len(seated) + 1)):
        raise ValueError("Seats must be numbered 1, 2, 3, ... in the order the students joined.")
    joined = [_moment(s["joined_at"]) for s in seated]
    if joined != sorted(joined):
        raise ValueError("Seats must be in the order the students joined.")
    hashes = [_digest(s["token_hash"]) for s in seated]
    if len(set(hashes)) != len(hashes):
        raise ValueError("Two seats have the same token.")
    asked = saved["questions"]
    if [q["number"] for q in asked] != list(range(1, len(asked) + 1)):
        raise ValueError("Questions must be numbered 1, 2, 3, ... in the order asked.")
    rows = [
        {"number": q["number"], "closed": q["closed"] is True, "revealed": q["revealed"] is True,
         "asked_at": _moment(q["asked_at"]),
         **_question_row(q["prompt"], q["choices"], q["answer"], q["working"], q["mistakes"],
                         q["kind"], _given(json.dumps(q["given"])) if q.get("given") else None)}
        for q in asked
    ]  # fmt: skip
    given, pairs = [], set()
    for number, seat, value, at in saved["answers"]:
        if not (1 <= number <= len(rows) and 1 <= seat <= len(seated)) or (number, seat) in pairs:
            raise ValueError("An answer must be one seat's, to one question of the class, once.")
        question = rows[number - 1]
        choices = None if question["choices"] is None else json.loads(question["choices"])
        given.append((number, seat, _normalise(value, choices, question["kind"]), _moment(at)))
        pairs.add((number, seat))
    return {
        "class": {
            "code": code, "teacher_hash": _digest(saved["teacher_hash"]),
            "created_at": _moment(saved["created_at"]), "lifetime": float(saved["lifetime"]),
            "view_url": None if view is None else view[0],
            "view_at": None if view is None else _moment(view[1]),
        },
        "screens": [_digest(screen) for screen in saved["screens"]],
        "students": [
            {"seat": s["seat"], "token_hash": h, "joined_at": at}
            for s, h, at in zip(seated, hashes, joined, strict=True)
        ],
        "questions": rows,
        "answers": given,
    }  # fmt: skip


def _insert_each(conn: Connection, table: Table, code: str, rows: list[dict], by: str) -> dict:
    """Insert each row into `table` for class `code`; {the row's `by` (a seat, a question's
    number): the id the database gave it}."""
    return {
        row[by]: conn.execute(
            insert(table).values(class_code=code, **{k: v for k, v in row.items() if k != by})
        ).inserted_primary_key[0]
        for row in rows
    }


def _fresh_code(conn: Connection, column, length: int) -> str:
    """`length` random symbols of CODE_ALPHABET that no row holds in `column` yet."""
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))
        if conn.execute(select(column).where(column == code)).first() is None:
            return code


def _unused_devices(now: float):
    """Screens whose pairing code expired before the teacher typed it."""
    return devices.c.class_code.is_(None) & (devices.c.requested_at < now - PAIR_SECONDS)


def _class_size(conn: Connection, code: str) -> int:
    joined = select(func.count()).select_from(students).where(students.c.class_code == code)
    return conn.execute(joined).scalar_one()


def _delete_classes(conn: Connection, which) -> int:
    """Delete the classes matching `which` and their rows, children first (no reliance on
    ON DELETE CASCADE, which SQLite only honours with its pragma on)."""
    codes = select(classes.c.code).where(which)
    asked = select(questions.c.id).where(questions.c.class_code.in_(codes))
    conn.execute(delete(answers).where(answers.c.question_id.in_(asked)))
    conn.execute(delete(questions).where(questions.c.class_code.in_(codes)))
    conn.execute(delete(students).where(students.c.class_code.in_(codes)))
    conn.execute(delete(devices).where(devices.c.class_code.in_(codes)))
    return conn.execute(delete(classes).where(which)).rowcount
