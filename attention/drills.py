"""Drills: an exercise (`Drill`: the question, the numbers it gives, the answer and the working),
its grading and its hints, shared by every lesson's questions.

Pure Python (no Streamlit): `grade(drill, typed)` says right, wrong or why the answer cannot be
read, never raising on what a student types. Lesson 8's exercise sets, made from a trace's own
numbers, are attention.drill_set; the numbers classic mistakes give, attention.diagnosis (both
build on this module; it imports neither).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

TOLERANCE = 0.005  # a number is right within 0.005 of the exact value: rounded to 2 decimals or
# more it always is; cut short ("0.17" for 0.17604) it can be up to 0.01 off, and then it is wrong
RULE_EXAMPLE = 0.17604  # the value rule() grades as its example
HUGE = 1e6  # no number in these drills comes near this
KINDS = ("argmax", "score", "weight", "output", "shape", "mask")  # make_drills, one of each
# The lessons' check-yourself questions (made with attention.questions) add: any decimal
# within TOLERANCE, an exact whole number, yes or no
QUESTION_KINDS = ("number", "whole", "yesno")
SHAPE_EXAMPLE = "(3, 5)"  # two sizes: every shape drill's answer has three or four, so never it
WHOLE_ONLY = "Type a whole number: this answer has no decimals."  # a decimal for a whole number


@dataclass(frozen=True)
class Given:
    """What a drill shows: named rows over named columns. A row holds numbers (float, None = a
    blocked cell), yes/no (bool: may the query attend?) or positions (int)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[float | bool | int | None, ...]], ...]


@dataclass(frozen=True)
class Mistake:
    """A wrong answer with a cause: the number that classic mistakes of the bug hunt's catalogue
    give for a question (attention.diagnosis runs each one), named by the catalogue."""

    value: float  # the choice's number: within the tolerance of what each mistake gives
    bugs: tuple[str, ...]  # keys of attention.bugs.BUGS
    titles: tuple[str, ...]  # their titles, as the bug hunt names them
    values: tuple[float, ...] = ()  # what each of them gives, in the same order

    def said(self) -> str:
        """Each mistake named with the number it gives: "0.0680 is what masking after the
        softmax gives", or, merged, "0.0666 is what A (0.0680) or B (0.0652) gives"."""
        if len(self.bugs) == 1 or not self.values:
            return f"{f4(self.value)} is what {in_sentence(self.titles)} gives."
        named = [
            f"{title[0].lower() + title[1:]} ({f4(v)})"
            for title, v in zip(self.titles, self.values, strict=True)
        ]
        return f"{f4(self.value)} is what {' or '.join(named)} gives, within the tolerance."


@dataclass(frozen=True)
class Drill:
    """One exercise: the question, the numbers it needs, the answer and the working."""

    kind: str  # one of KINDS or QUESTION_KINDS
    prompt: str  # plain text
    given: Given | None
    answer: float | int | bool | tuple[int, ...] | frozenset[int]  # number, shape, positions
    answer_text: str  # the answer as the page prints it
    working: tuple[str, ...]  # plain-text lines, shown after an answer
    labels: tuple[str, ...] = ()  # token labels, for answers that name a key
    mistakes: tuple[Mistake, ...] = ()  # the numbers classic mistakes give (a diagnostic)
    # computes `mistakes` when asked (attention.diagnosis.diagnosed); not part of equality
    diagnose: Callable[[], tuple[Mistake, ...]] | None = field(default=None, compare=False)
    hint: str = ""  # what to check before a second try; "" for its kind's (HINTS)
    percent: bool = False  # a weight asked as a number: "34 %" is read as 0.34, as for "weight"
    # wrong readings of the question: (the number a reading gives, the sentence naming it,
    # "0 is the earlier 'R' itself; ..."), for hints that say what the answer misread
    readings: tuple[tuple[float, str], ...] = ()

    @property
    def takes_percent(self) -> bool:
        """Whether a percentage is an answer here: a weight (kind "weight", or `percent`)."""
        return self.kind == "weight" or self.percent


@dataclass(frozen=True)
class Grade:
    """The verdict on one typed answer; `mistake` when a wrong number is what a classic mistake
    gives."""

    status: str  # "right" | "wrong" | "invalid"
    message: str
    mistake: Mistake | None = None
    reading: str = ""  # the wrong reading of the question the number is (Drill.readings)


# What to check before a second try, by the kind of question: the step it turns on, never
# its numbers (a first wrong answer gets this; the answer and the working come after a
# second, or on request)
HINTS = {
    "argmax": "The largest scaled score in the query's row wins; blocked keys are out of the "
    "running.",
    "score": "Multiply the two vectors entry by entry, add the products, then multiply by the "
    "scale; keep 4 decimals until the end.",
    "weight": "Softmax over the query's row: e to the power of each allowed score (after "
    "subtracting the row's largest), divided by their sum. A blocked key gets 0.",
    "output": "A weighted sum down V's column: each weight times the same key's value, added.",
    "shape": "view cuts the last size into the sizes it names; transpose(1, 2) swaps the "
    "second and third.",
    "mask": "Causal: a key after a query is in its future. Padding: a filler key is hidden "
    "from every query.",
    "number": "Go back to the formula the question names and work it step by step from the "
    "numbers it gives, keeping 4 decimals until the end.",
    "whole": "Count again from the definition the question gives, positions from 0.",
    "yesno": "Read the question's condition again against the numbers it gives.",
}


def hint(drill: Drill, verdict: Grade) -> str:
    """What to check before a second try: the classic mistake the wrong number matches, where
    one does, else the step the kind of question turns on."""
    if verdict.mistake is not None:
        titles = in_sentence(verdict.mistake.titles)
        return f"that number is what you get with {titles}: check that step."
    if verdict.reading:
        return f"{verdict.reading}."
    return drill.hint or HINTS.get(drill.kind, HINTS["number"])


def in_sentence(titles) -> str:
    """Mistakes' titles inside a sentence: "softmax over the wrong axis or no scaling at all"."""
    return " or ".join(title[0].lower() + title[1:] for title in titles)


def mistake_of(drill: Drill, value: float) -> Mistake | None:
    """The classic mistake whose number a typed value is (within the drills' tolerance)."""
    near = [m for m in drill.mistakes if abs(value - m.value) <= TOLERANCE + 1e-9]
    return min(near, key=lambda m: abs(value - m.value), default=None)


def f4(value: float) -> str:
    """A number to 4 decimals, as the tables print it."""
    return "0.0000" if abs(value) < 5e-5 else f"{value:.4f}"


def shown(value: float) -> float:
    """The number a student reads in a table (4 decimals): hand working starts from these."""
    return float(f4(value))


def factor(value: float) -> str:
    """A number printed as a factor of a product: a negative one in brackets, 0.2 × (-0.1)."""
    text = f4(value)
    return f"({text})" if text.startswith("-") else text


def exact_note(name: str, hand: float, truth: float) -> tuple[str, ...]:
    """A line for when working from the 4-decimal numbers lands on other digits than the
    exact answer, saying whether the hand result counts as right too."""
    if f4(hand) == f4(truth):
        return ()
    counts = abs(hand - truth) <= TOLERANCE
    return (
        f"From the unrounded numbers {name} = {f4(truth)}"
        + (f"; the working's {f4(hand)} counts as right too." if counts else "."),
    )


def rule(percent: bool = True) -> str:
    """The grading rule in words, its example graded by `grade` itself (tests check). With
    `percent`, it says a weight may be typed as a percentage: say so only above questions that
    ask for a weight (Drill.takes_percent), the only questions `grade` takes a percentage for."""
    x = RULE_EXAMPLE
    cut = math.floor(x * 100) / 100
    return (
        f"A number counts as right within {TOLERANCE} of the exact value, so round it to 2 "
        f"decimals or more: for {x}, {x:.2f} and {x:.3f} are right; {cut:.2f} (cut short, "
        f"{x - cut:.4f} off) is not. A decimal comma is fine"
        + (f", and a weight may be typed as a percentage ({100 * x:.0f} %)." if percent else ".")
    )


def ascii_digits(text: str) -> str:
    """Any script's decimal digits (٣, ३, ３, ...) as 0-9; other characters unchanged."""
    return "".join(
        str(unicodedata.decimal(ch))
        if not ch.isascii() and unicodedata.decimal(ch, None) is not None
        else ch
        for ch in unicodedata.normalize("NFKC", text)
    )


def parse_number(typed: str) -> float:
    """A typed number, tolerant of spaces, a decimal comma, a Unicode minus and other scripts'
    digits; ValueError with a message a student reads otherwise."""
    text = ascii_digits(re.sub(r"\s+", "", str(typed)))
    text = text.replace("−", "-").replace("–", "-").replace("\u066b", ".")  # Arabic decimal mark
    if not text:
        raise ValueError("Type a number first.")
    if text.endswith(PERCENT_SIGNS):
        raise ValueError(
            "Only a weight can be a percentage: type this one as a plain number, like 0.1234."
        )
    if "," in text:
        if "." in text or text.count(",") > 1:
            raise ValueError(f"“{str(typed)[:20]}” is not a number: use one decimal separator.")
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"“{str(typed)[:20]}” is not a number.") from None
    if math.isnan(value):
        raise ValueError("NaN is not an answer: every number here is finite.")
    if math.isinf(value) or abs(value) >= HUGE:
        raise ValueError("That number is far too large: every answer here is well below a million.")
    return value


PERCENT_SIGNS = ("%", "\u066a", "\uff05")  # %, Arabic ٪, full-width ％
YES, NO = ("yes", "y", "true"), ("no", "n", "false")


def parse_percent(typed: str) -> float:
    """A weight: a number, or a percentage ("18 %" is 0.18)."""
    text = str(typed).strip()
    if text.endswith(PERCENT_SIGNS):
        return parse_number(text[:-1]) / 100
    return parse_number(text)


def parse_integers(typed: str) -> tuple[int, ...]:
    """Whole numbers separated by commas, spaces, x or ×, with optional brackets."""
    text = str(typed).strip().strip("()[]{} ")
    if not text:
        return ()
    parts = [p for p in re.split(r"[\s,;x×*]+", text) if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"“{str(typed)[:30]}” is not a list of whole numbers.") from None
    if any(abs(v) >= HUGE for v in values):
        raise ValueError("That number is far too large for a position or a size.")
    return values


def grade(drill: Drill, typed: str) -> Grade:
    """Right, wrong, or invalid (with the reason) for what a student typed; never raises."""
    typed = "" if typed is None else str(typed)[:200]
    if not typed.strip():
        return Grade("invalid", "Type an answer first.")
    value = None  # the number typed, for the kinds that read one (reading_of)
    try:
        if drill.kind in ("score", "weight", "output", "number"):
            value = parse_percent(typed) if drill.takes_percent else parse_number(typed)
            right = abs(value - float(drill.answer)) <= TOLERANCE + 1e-9
            shown = f4(value)
        elif drill.kind == "argmax":
            return grade_key(drill, typed)
        elif drill.kind == "whole":
            value = parse_number(typed)
            if value != int(value):
                return Grade("invalid", WHOLE_ONLY)
            right, shown = int(value) == drill.answer, str(int(value))
        elif drill.kind == "yesno":
            word = typed.strip().lower()
            if word not in YES + NO:
                return Grade("invalid", "Type yes or no.")
            right, shown = (word in YES) == drill.answer, "yes" if word in YES else "no"
        elif drill.kind == "shape":
            value = parse_integers(typed)
            if not value:
                return Grade("invalid", f"Type a shape: its sizes in order, like {SHAPE_EXAMPLE}.")
            right = value == drill.answer
            shown = str(value)
        else:  # mask
            if typed.strip().lower() in ("none", "no", "nothing", "-", "0 keys"):
                value = frozenset()
            else:
                value = frozenset(parse_integers(typed))
            T = len(drill.given.columns)
            outside = sorted(p for p in value if not 0 <= p < T)
            if outside:
                return Grade(
                    "invalid", f"Positions run from 0 to {T - 1}; {outside[0]} is not one."
                )
            right = value == drill.answer
            shown = " ".join(str(p) for p in sorted(value)) or "none"
    except ValueError as error:
        return Grade("invalid", str(error))
    if right:
        return Grade("right", f"Right: {drill.answer_text}.")
    said = f"Not quite: you gave {shown}, the answer is {drill.answer_text}."
    mistake = mistake_of(drill, value) if drill.mistakes else None
    if mistake is not None:
        said += f" {shown} is what you get with a classic mistake: {in_sentence(mistake.titles)}."
    reading = reading_of(drill, value)
    if reading:
        said += f" {reading}."
    return Grade("wrong", said, mistake, reading)


def reading_of(drill: Drill, value) -> str:
    """The sentence of the wrong reading of the question whose number the answer is, or ""."""
    if not isinstance(value, int | float):
        return ""
    return next((words for number, words in drill.readings
                 if abs(value - number) <= TOLERANCE + 1e-9), "")  # fmt: skip


def grade_key(drill: Drill, typed: str) -> Grade:
    """A key named by its position or by its token label."""
    text = typed.strip()
    labels = drill.labels
    if text in labels:
        position = labels.index(text)
    else:
        lowered = [label.lower() for label in labels]
        if text.lower() in lowered and lowered.count(text.lower()) == 1:
            position = lowered.index(text.lower())
        else:
            try:
                number = parse_number(text)
            except ValueError:
                return Grade("invalid", f"“{text[:20]}” is neither a position nor a token here.")
            if number != int(number) or not 0 <= number < len(labels):
                return Grade("invalid", f"Positions run from 0 to {len(labels) - 1}.")
            position = int(number)
    if position in drill.answer:
        return Grade("right", f"Right: {drill.answer_text}.")
    return Grade(
        "wrong", f"Not quite: you gave {position} ({labels[position]}), the answer is "
        f"{drill.answer_text}."
    )  # fmt: skip
