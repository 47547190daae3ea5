"""The class store: classes, students, questions and answers in a database that every worker and
replica shares (SQLAlchemy Core; SQLite by default, PostgreSQL by URL: database.py). This
module is the store's contract, `ClassStore` and what it returns; its parts live beside it:

    schema.py       the tables, how long a class lives, the migration of an older store
    bounds.py       how much a person may type (the columns and the checks share it)
    typed.py        what people type, checked as stored (answers read by attention.drills)
    limits.py       the rate limits (joins, unknown codes, pairing requests)
    pairing.py      the teacher's other screens
    saved_class.py  a class as plain data, out of the database and back (archive.py's file)

One transaction per unit of work, the same statements on both databases (the one exception is
the answer upsert, written per dialect). The names the app and its tests imported from here
before the parts were split off (CHOICE_CHARS, WHOLE, ClassExists, the tables, ...) are still
here, imported `name as name`. Plain Python: nothing here imports Streamlit. The
contract, the limits and why they are what they are: docs/classroom.md.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection

from dashboard.classroom import limits, pairing, saved_class
from dashboard.classroom.bounds import CHOICE_CHARS as CHOICE_CHARS
from dashboard.classroom.bounds import MAX_CHOICES as MAX_CHOICES
from dashboard.classroom.bounds import MAX_GIVEN as MAX_GIVEN
from dashboard.classroom.bounds import NICKNAME_CHARS
from dashboard.classroom.bounds import PROMPT_CHARS as PROMPT_CHARS
from dashboard.classroom.database import TOKEN_BYTES, Database, digest, plain, retry, upsert
from dashboard.classroom.limits import JOINS_PER_MINUTE, MISSES_PER_MINUTE, RateLimited
from dashboard.classroom.saved_class import ClassExists as ClassExists
from dashboard.classroom.schema import CODE_ALPHABET as CODE_ALPHABET
from dashboard.classroom.schema import (
    CODE_LENGTH,
    COURSE_SECONDS,
    EXPIRY_SECONDS,
    LIFETIME,
    LIFETIMES,
    TABLES,
    answers,
    class_size,
    classes,
    delete_classes,
    fresh_code,
    questions,
    students,
    upgrade,
)
from dashboard.classroom.schema import devices as devices
from dashboard.classroom.typed import WEIGHT as WEIGHT
from dashboard.classroom.typed import WHOLE as WHOLE
from dashboard.classroom.typed import (
    Given,
    Mistakes,
    given_of,
    mistakes_of,
    normalise_code,
    question_row,
    stored_answer,
    view_link,
)

T = TypeVar("T")
log = logging.getLogger(__name__)

ACTIVITY_STEP = 60.0  # last activity is written at most once a minute (60 answers, one write)


class UnknownClass(LookupError):
    """No live class has that code (never created, deleted or expired)."""

    unknown_code = True

    def __init__(self) -> None:
        super().__init__("No class has that code (or it has expired).")


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
    mistakes: Mistakes = ()
    kind: str | None = None  # WHOLE: a whole number, graded exactly; WEIGHT: % accepted
    asked_at: float | None = None  # when the teacher asked it
    given: Given | None = None  # the numbers it gives, as a table (shown under the prompt)


@dataclass(frozen=True)
class View:
    """The view the teacher sent: a relative link into the app, and when."""

    url: str
    sent_at: float


@dataclass(frozen=True)
class Follow:
    """What a following screen asks for at each poll: the view the teacher sent, and where the
    class's last question stands."""

    view: View | None
    last_question: int | None  # its id; None: no question asked yet
    closed: bool = False
    revealed: bool = False


class ClassStore(Database):
    """Classes in a database: `ClassStore(url)` with a SQLAlchemy URL ("sqlite:///path.db",
    "postgresql+psycopg://..."), or ATTENTION_CLASS_DB, or data/classroom.db."""

    TABLES = TABLES
    upgrade = staticmethod(upgrade)

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: Callable[[], float] = time.time,
        joins_per_minute: int = JOINS_PER_MINUTE,
        misses_per_minute: int = MISSES_PER_MINUTE,
        on_news: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(url, clock=clock)
        self.joins_per_minute = joins_per_minute
        self.misses_per_minute = misses_per_minute
        # told the code of a class whose `news` a write of this store has just changed (a view
        # sent, a question asked, closed or revealed, the class ended): the server's watch
        # reads them then instead of at its next tick (wake.soon)
        self.on_news = on_news

    def _told(self, code: str) -> None:
        """Tell `on_news` (after the write committed: a failure to tell is logged, never the
        write's; the watch then finds the news at its next read)."""
        if self.on_news is None:
            return
        try:
            self.on_news(normalise_code(code))
        except Exception:
            log.exception("the class store could not tell of class %s's news", code)

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
                limits.record_miss(conn, now)

    def _over_limit(self, conn: Connection, now: float) -> bool:
        return limits.too_many_misses(conn, now, self.misses_per_minute)

    def _refuse(self, conn: Connection, now: float, error: Exception, unknown: bool) -> None:
        """Raise `error`; while unknown codes are being tried faster than the limit, raise
        RateLimited instead, whatever the code, so that no answer tells a live code apart."""
        if self._over_limit(conn, now):
            raise RateLimited(limits.WRONG_CODES, unknown)
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
        return pairing.is_screen_of(conn, row.code, mine)

    def _teacher(self, conn: Connection, code: str, token: str, now: float):
        row = self._class(conn, code, now)
        if not self._is_teacher(conn, row, token):
            self._refuse(conn, now, PermissionError("Only the class's teacher can do that."), False)
        return row

    def _seated(self, conn: Connection, row, token: str):
        """The seat of class `row` whose token this is, or None."""
        return conn.execute(
            select(students).where(
                students.c.token_hash == digest(token or ""),
                students.c.class_code == row.code,
            )
        ).first()

    def _student(self, conn: Connection, row, token: str, now: float):
        """The student of class `row` whose token this is."""
        student = self._seated(conn, row, token)
        if student is None:
            self._not_seated(conn, now)
        return student

    def _not_seated(self, conn: Connection, now: float) -> None:
        """Refuse a token that holds no seat of the class (and is not its teacher's)."""
        self._refuse(conn, now, PermissionError("That is not a student of this class."), False)

    def _member(self, conn: Connection, code: str, token: str, now: float):
        """The class, for its teacher or one of its students (the seat is looked up first: a
        class has one teacher and sixty students, so most readers cost one query less)."""
        row = self._class(conn, code, now)
        if self._seated(conn, row, token) is None and not self._is_teacher(conn, row, token):
            self._not_seated(conn, now)
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
            code = fresh_code(conn, classes.c.code, CODE_LENGTH)
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
                raise RateLimited(limits.WRONG_CODES)
            row = self._class(conn, code, now)
            limits.check_joins(conn, row.code, now, self.joins_per_minute)
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
        asked = question_row(prompt, choices, answer, working, mistakes, kind, given)

        def work(conn: Connection, now: float) -> int:
            row = self._teacher(conn, code, teacher_token, now)
            self._touch(conn, row.code, now)
            return conn.execute(
                insert(questions).values(
                    class_code=row.code, closed=False, revealed=False, asked_at=now, **asked
                )
            ).inserted_primary_key[0]

        qid = self._unit(work)
        self._told(code)
        return qid

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
            stored = stored_answer(value, choices, question.kind)
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
            joined = class_size(conn, row.code)
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
            return class_size(conn, row.code)

        return self._unit(work, write=False)

    def close(self, code: str, teacher_token: str, qid: int) -> None:
        """No more answers to this question."""
        self._set(code, teacher_token, qid, closed=True)

    def reveal(self, code: str, teacher_token: str, qid: int) -> str:
        """The right answer, now shown to the students; revealing closes the question."""
        return self._set(code, teacher_token, qid, closed=True, revealed=True)

    def _set(self, code: str, teacher_token: str, qid: int, **flags: bool) -> str:
        def work(conn: Connection, now: float) -> tuple[str, bool]:
            row = self._teacher(conn, code, teacher_token, now)
            self._touch(conn, row.code, now)
            question = self._question(conn, row.code, qid)
            conn.execute(update(questions).where(questions.c.id == question.id).values(**flags))
            last = conn.execute(
                select(func.max(questions.c.id)).where(questions.c.class_code == row.code)
            ).scalar()
            # `news` says the last question's flags: an older question's, or flags already
            # set, change nothing a follower would find
            moved = question.id == last and any(
                bool(getattr(question, flag)) != value for flag, value in flags.items()
            )
            return question.answer, moved

        answer, moved = self._unit(work)
        if moved:
            self._told(code)
        return answer

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
                    mistakes=mistakes_of(q.mistakes) if teacher or q.revealed else (),
                    kind=q.kind,
                    asked_at=q.asked_at,
                    given=given_of(q.given),
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
        link = view_link(url)

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            conn.execute(
                update(classes)
                .where(classes.c.code == row.code)
                .values(view_url=link, view_at=now, active_at=now)
            )

        self._unit(work)
        self._told(code)

    def current_view(self, code: str, token: str) -> View | None:
        """The last view the teacher sent, for a student (or the teacher) of the class."""

        def work(conn: Connection, now: float) -> View | None:
            row = self._member(conn, code, token, now)
            return None if row.view_url is None else View(url=row.view_url, sent_at=row.view_at)

        return self._unit(work, write=False)

    def follow(self, code: str, token: str) -> Follow:
        """`current_view` and the last question's state in one read, for a student (or the
        teacher) of the class: every follower's screen asks it every few seconds, so it reads
        three rows (the class, the seat, the last question), where `current_view` and
        `questions` read eight and every question asked."""

        def work(conn: Connection, now: float) -> Follow:
            row = self._member(conn, code, token, now)
            last = conn.execute(
                select(questions.c.id, questions.c.closed, questions.c.revealed)
                .where(questions.c.class_code == row.code)
                .order_by(questions.c.id.desc())
                .limit(1)
            ).first()
            view = None if row.view_url is None else View(url=row.view_url, sent_at=row.view_at)
            if last is None:
                return Follow(view, None)
            return Follow(view, last.id, bool(last.closed), bool(last.revealed))

        return self._unit(work, write=False)

    def news(self, codes: Collection[str]) -> dict[str, tuple | None]:
        """What a following screen would find changed, per class code, for the server's watch
        (wake.py): the view's time, the last question's id and whether it is closed and
        revealed; None for a code with no live class (never made, ended or expired). One read
        for every class a process follows, without tokens (it tells no view nor question, only
        that one changed), and it keeps no class alive."""

        def work(conn: Connection, now: float) -> dict[str, tuple | None]:
            found: dict[str, tuple | None] = dict.fromkeys(codes)
            live = classes.c.code.in_(list(codes)) & (classes.c.active_at >= now - LIFETIME)
            for row in conn.execute(select(classes.c.code, classes.c.view_at).where(live)):
                found[row.code] = (row.view_at, None, False, False)
            last = (
                select(func.max(questions.c.id).label("id"))
                .where(questions.c.class_code.in_(list(codes)))
                .group_by(questions.c.class_code)
                .subquery()
            )
            asked = select(
                questions.c.class_code, questions.c.id, questions.c.closed, questions.c.revealed
            ).join(last, questions.c.id == last.c.id)
            for row in conn.execute(asked):
                known = found.get(row.class_code)
                if known is not None:  # a live class (an expired one's questions say nothing)
                    found[row.class_code] = (known[0], row.id, bool(row.closed), bool(row.revealed))
            return found

        return self._unit(work, write=False)

    # -- the teacher's other devices ------------------------------------------------------------

    def request_device(self) -> tuple[str, str]:
        """A screen that wants to run a class it did not start (the teacher's laptop, the class
        started on the projector): its pairing code, to be typed by the teacher where the class
        runs (`add_device`), and its own secret token, which becomes a teacher's once added.
        No token travels between the screens, and the store keeps only its digest."""
        token = secrets.token_urlsafe(TOKEN_BYTES)

        def work(conn: Connection, now: float) -> str:
            pairing.forget_unused(conn, now)
            limits.check_pairs(conn, now)
            return pairing.request(conn, digest(token), now)

        return self._unit(work), token

    def add_device(self, code: str, teacher_token: str, pair_code: str) -> None:
        """The teacher adds the screen showing `pair_code` (typed as shown, any case, spaces
        and dashes ignored) to the class: its token is a teacher's from now on. LookupError when
        no screen waits with that code (mistyped, used, or older than pairing.PAIR_SECONDS)."""
        pair = normalise_code(pair_code)

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            pairing.add(conn, row.code, pair, pair_code, now)
            self._touch(conn, row.code, now)

        self._unit(work)

    def device_class(self, device_token: str) -> str | None:
        """The class a waiting screen was added to (its code), or None while it waits;
        LookupError when its code expired unused or its class went."""

        def work(conn: Connection, now: float) -> str | None:
            return pairing.class_of(conn, digest(device_token or ""), now)

        return self._unit(work, write=False)

    def delete_class(self, code: str, teacher_token: str) -> None:
        """The class and everything in it, gone now."""

        def work(conn: Connection, now: float) -> None:
            row = self._teacher(conn, code, teacher_token, now)
            delete_classes(conn, classes.c.code == row.code)

        self._unit(work)
        self._told(code)

    # -- a class kept outside the database (archive.py writes and reads the file) --------------

    def export_class(self, code: str, teacher_token: str) -> dict:
        """The whole class as plain data, for its teacher: its lifetime, the digests of its
        teacher's and screens' tokens, its students by seat (a number and a token's digest: no
        token, and no nickname, as the concept check promises), its questions in the order
        asked and every answer by seat."""

        def work(conn: Connection, now: float) -> dict:
            row = self._teacher(conn, code, teacher_token, now)
            return saved_class.export(conn, row, pairing.screens_of(conn, row.code))

        return self._unit(work, write=False)

    def restore_class(self, saved: dict, teacher_token: str) -> ClassInfo:
        """Put back a class `export_class` gave, under its own code, for one of its teachers
        (the token's digest must be its teacher's or one of its screens'): its students keep
        their seats (their cookies' tokens find them again; nicknames are not kept), its
        questions and answers as they were. ValueError when the data is not a class's,
        ClassExists when a live class has the code (nothing is merged)."""
        rows = saved_class.restorable(saved)
        mine = digest(teacher_token or "")
        if mine != rows["class"]["teacher_hash"] and mine not in rows["screens"]:
            raise PermissionError("Only the class's teacher can continue it.")
        self.purge_expired()

        def work(conn: Connection, now: float) -> ClassInfo:
            code = rows["class"]["code"]
            saved_class.restore(conn, rows, now)
            pairing.seat_screens(conn, code, rows["screens"], now)
            return ClassInfo(
                code=code,
                teacher_token=teacher_token,
                created_at=rows["class"]["created_at"],
                lifetime=rows["class"]["lifetime"],
            )

        restored = self._unit(work)
        self._told(restored.code)  # a screen still following the ended code finds it again
        return restored

    def purge_expired(self, now: float | None = None) -> int:
        """Delete the classes idle for their lifetime (and old misses, and screens' pairing codes
        never used); how many classes went."""

        def work(conn: Connection, clock_now: float) -> int:
            at = clock_now if now is None else now
            limits.forget_misses(conn, at)
            pairing.forget_unused(conn, at)
            return delete_classes(conn, classes.c.active_at < at - LIFETIME)

        return self._unit(work)
