"""The class store's tables (SQLAlchemy Core, one `Table` per thing), the sizes of what they
hold, how long a class lives, and the hand-made migration of a store made by an older version.
Plain Python: nothing here imports Streamlit.
"""

from __future__ import annotations

import secrets

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
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection

from dashboard.classroom.bounds import ANSWER_CHARS, NICKNAME_CHARS
from dashboard.classroom.database import metadata

EXPIRY_SECONDS = 12 * 3600  # a class goes 12 hours after its last activity (a school day)
COURSE_SECONDS = 30 * 24 * 3600  # a course's class (several lectures, a check before and after)
LIFETIMES = (EXPIRY_SECONDS, COURSE_SECONDS)  # what a teacher may choose
# Codes: 6 symbols from 31 (no 0/O, 1/I/L), 31**6 ≈ 8.9e8 codes; typed case-insensitively
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
PAIR_LENGTH = 8  # a device's pairing code, typed by the teacher on the screen that runs the class


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

TABLES = (classes, students, questions, answers, devices, misses)


def upgrade(conn: Connection) -> None:
    """A store made before questions had a working, the mistakes behind their choices, a kind or
    a table of numbers, or before classes had a lifetime, gets the columns (create_all adds
    tables, never columns)."""
    present = {c["name"] for c in inspect(conn).get_columns("questions")}
    for name in ("working", "mistakes", "kind", "given"):
        if name not in present:
            conn.execute(text(f"ALTER TABLE questions ADD COLUMN {name} TEXT"))
    if "lifetime" not in {c["name"] for c in inspect(conn).get_columns("classes")}:
        conn.execute(text("ALTER TABLE classes ADD COLUMN lifetime FLOAT"))


def fresh_code(conn: Connection, column, length: int) -> str:
    """`length` random symbols of CODE_ALPHABET that no row holds in `column` yet."""
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))
        if conn.execute(select(column).where(column == code)).first() is None:
            return code


def class_size(conn: Connection, code: str) -> int:
    """How many students have joined the class."""
    joined = select(func.count()).select_from(students).where(students.c.class_code == code)
    return conn.execute(joined).scalar_one()


def delete_classes(conn: Connection, which) -> int:
    """Delete the classes matching `which` and their rows, children first (no reliance on
    ON DELETE CASCADE, which SQLite only honours with its pragma on)."""
    codes = select(classes.c.code).where(which)
    asked = select(questions.c.id).where(questions.c.class_code.in_(codes))
    conn.execute(delete(answers).where(answers.c.question_id.in_(asked)))
    conn.execute(delete(questions).where(questions.c.class_code.in_(codes)))
    conn.execute(delete(students).where(students.c.class_code.in_(codes)))
    conn.execute(delete(devices).where(devices.c.class_code.in_(codes)))
    return conn.execute(delete(classes).where(which)).rowcount
