"""What people type into the class store, checked and put as the store keeps it: a class code,
an answer (read by `attention.drills`' own parsers, with its messages), a question with its
choices, working, mistakes and table of numbers, a view's link. Each check raises ValueError
with a message the person reads. Plain Python: nothing here imports Streamlit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from dashboard.classroom.bounds import (
    ANSWER_CHARS,
    CHOICE_CHARS,
    MAX_CHOICES,
    MAX_GIVEN,
    MAX_WORKING,
    PROMPT_CHARS,
    VIEW_CHARS,
)
from dashboard.classroom.database import plain

WHOLE = "whole"  # a question kind: a whole number, graded exactly as the lessons grade it
WEIGHT = "weight"  # a question kind: a weight, which may be typed as a percentage ("34 %")

Mistakes = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (choice, ((bug, title), ...))


@dataclass(frozen=True)
class Given:
    """A question's numbers as a table: named rows over named columns, each cell as printed."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]


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


def stored_answer(typed: object, choices: Sequence[str] | None, kind: str | None = None) -> str:
    """An answer as stored: one of `choices`, or (choices None) a number, a whole number
    (`kind` WHOLE, refused with the lessons' own message when it has decimals) or a weight
    (`kind` WEIGHT); ValueError otherwise."""
    if choices is None:
        number = stored_weight(typed) if kind == WEIGHT else stored_number(typed)
        if kind == WHOLE and not float(number).is_integer():
            from attention.drills import WHOLE_ONLY

            raise ValueError(WHOLE_ONLY)
        return number
    value = plain(typed, CHOICE_CHARS)
    if value not in choices:
        raise ValueError(f"“{value[:40]}” is not one of the choices.")
    return value


def question_row(
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
    listed = None if choices is None else checked_choices(choices)
    if kind not in (None, WHOLE, WEIGHT) or (kind is not None and listed is not None):
        raise ValueError("Only a question without choices can be a whole number or a weight.")
    right = stored_answer(answer, listed, kind)
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
        "given": None if given is None else json.dumps(stored_table(given)),
    }


def checked_choices(choices: Sequence[object]) -> list[str]:
    """A question's choices as plain text: 2 to MAX_CHOICES, all different, none empty."""
    listed = [plain(choice, CHOICE_CHARS) for choice in choices]
    if not 2 <= len(listed) <= MAX_CHOICES or len(set(listed)) != len(listed):
        raise ValueError(f"Give 2 to {MAX_CHOICES} different choices.")
    if not all(listed):
        raise ValueError("A choice cannot be empty.")
    return listed


def stored_table(given: Given) -> dict:
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


def given_of(stored: str | None) -> Given | None:
    """A question's table as its column holds it (JSON), or None."""
    if not stored:
        return None
    table = json.loads(stored)
    return Given(tuple(table["columns"]), tuple((n, tuple(c)) for n, c in table["rows"]))


def mistakes_of(stored: str | None) -> Mistakes:
    """The mistakes behind a question's wrong choices as their column holds them (JSON)."""
    return tuple(
        (choice, tuple((bug, title) for bug, title in named))
        for choice, named in json.loads(stored or "[]")
    )


def view_link(url: object) -> str:
    """A view the teacher sends: a relative link into this app ("/page?x=1" or "?x=1")."""
    link = str(url)
    if not re.fullmatch(r"(/(?![/\\])|\?)[^\s\\]*", link) or len(link) > VIEW_CHARS:
        raise ValueError("A view is a relative link into this app, like /lesson?x=1.")
    return link
