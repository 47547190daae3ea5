"""What a teacher can ask a class: each lesson's "Check yourself" questions at the class's
settings (each lesson module's `lesson_questions`, the call its page makes), and lesson 7's
"which bug is this?" mystery, as questions the class store takes (a prompt, choices or a
number, the answer, the working).

A store question is plain text on one line, so a question's given numbers are written into its
prompt. Where a lesson's questions depend on more than the sidebar (a page's own widgets, a
trained model), its `class_questions` asks them at the page's own starting values, and the
question says so.
"""

from __future__ import annotations

import itertools
import random
import zlib
from dataclasses import dataclass, replace

from dashboard.classroom.store import MAX_GIVEN, PROMPT_CHARS, WEIGHT, WHOLE, Given
from dashboard.controls import Settings
from dashboard.frame import LESSONS


@dataclass(frozen=True)
class ClassQuestion:
    """One question as the store asks it; `view` is where the class should look to answer."""

    label: str  # how the teacher's list names it
    prompt: str
    choices: tuple[str, ...] | None  # None: the answer is a number
    answer: str | float
    working: tuple[str, ...]
    view: str | None = None  # a relative link sent with the question (the mystery's page)
    # a diagnostic's wrong choices and the classic mistakes behind each: (choice, ((bug, title),))
    mistakes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    kind: str | None = None  # store.WHOLE: a whole number, graded exactly; store.WEIGHT: % too
    given: Given | None = None  # the numbers it gives, as a table under the prompt


def number_text(value: object) -> str:
    """A given number as the lesson's tables print it (4 decimals), or "blocked"."""
    from attention.drills import f4

    if value is None:
        return "blocked"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f4(value) if isinstance(value, float) else str(value)


def given_table(drill) -> Given | None:
    """A drill's numbers as the question's table, each cell as the lesson prints it (a score
    map of lesson 13 was one run-on sentence of nine lines on the projector, issue 52, item 6)."""
    if drill.given is None:
        return None
    rows = tuple(
        (str(name), tuple(number_text(v) for v in values)) for name, values in drill.given.rows
    )
    if len(drill.given.columns) > MAX_GIVEN or len(rows) > MAX_GIVEN:
        return None
    return Given(tuple(str(c) for c in drill.given.columns), rows)


def shape_choices(answer: tuple[int, ...]) -> tuple[str, ...]:
    """The right shape and up to three orders of its sizes, in a fixed order."""
    orders = sorted({str(p) for p in itertools.permutations(answer)})
    right = str(tuple(answer))
    others = [o for o in orders if o != right][:3]
    return tuple(sorted([right, *others]))


def from_drill(lesson_title: str, number: int, drill, choices: bool = True) -> ClassQuestion | None:
    """A check-yourself drill as a store question (None for a kind the store cannot tally). A
    question with classic mistakes is multiple choice (`choices`), or typed, its tally then
    naming a typed answer a mistake gives."""
    prompt = f"{lesson_title}, question {number}: {drill.prompt}"
    given = given_table(drill)
    working = tuple(drill.working)
    label = f"Question {number}: {drill.prompt[:90]}{'…' if len(drill.prompt) > 90 else ''}"
    from attention.diagnosis import diagnosed

    drill = diagnosed(drill)  # the numbers its classic mistakes give, if it has any
    if drill.mistakes and choices:
        question = diagnostic(label, prompt, drill)
    elif drill.mistakes:  # typed: the mistakes' numbers name the answers near them
        question = ClassQuestion(
            f"{label} · diagnostic, typed", prompt, None, float(drill.answer), working,
            mistakes=mistake_choices(drill), kind=WEIGHT if drill.takes_percent else None,
        )  # fmt: skip
    elif drill.kind in ("number", "score", "output", "weight"):
        kind = WEIGHT if drill.takes_percent else None  # graded as the lesson grades it
        question = ClassQuestion(label, prompt, None, float(drill.answer), working, kind=kind)
    elif drill.kind == "whole":
        question = ClassQuestion(label, prompt, None, int(drill.answer), working, kind=WHOLE)
    elif drill.kind == "yesno":
        question = ClassQuestion(label, prompt, ("yes", "no"), drill.answer_text, working)
    elif drill.kind == "shape":
        choices = shape_choices(drill.answer)
        question = ClassQuestion(label, prompt, choices, str(tuple(drill.answer)), working)
    else:  # a set of keys (mask): many right spellings, no short list of choices
        return None
    if len(prompt) > PROMPT_CHARS or (drill.given is not None and given is None):
        return None
    return replace(question, given=given)


def mistake_choices(drill) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """A diagnosed drill's wrong numbers as the store keeps them: (the number as printed,
    ((bug, title), ...) of the classic mistakes that give it)."""
    from attention.drills import f4

    return tuple((f4(m.value), tuple(zip(m.bugs, m.titles, strict=True))) for m in drill.mistakes)


def diagnostic(label: str, prompt: str, drill) -> ClassQuestion:
    """A question with mistakes as multiple choice: the right number and each number the
    classic mistakes give (mistakes that coincide are one choice, and the prompt says so), in an
    order shuffled once per question, the same for every student and every worker."""

    right = drill.answer_text
    wrong = mistake_choices(drill)
    from attention.cross.questions import TYPED_HINT

    # the choices say how the number is written: not the typed answer's hint (issue 52, item 10)
    prompt = prompt.replace(f" {TYPED_HINT}", "")
    choices = [right, *(choice for choice, _ in wrong)]
    random.Random(zlib.crc32(prompt.encode())).shuffle(choices)
    merged = sum(len(named) - 1 for _, named in wrong)
    if merged:
        prompt += (
            f" ({merged + len(wrong)} classic mistakes give {len(wrong)} different numbers "
            "here: where two give the same number, it is one choice.)"
        )
    label = f"{label} · diagnostic, {len(choices)} choices"
    return ClassQuestion(
        label, prompt, tuple(choices), right, tuple(drill.working), None, tuple(wrong)
    )


ASKABLE = LESSONS  # every lesson declares its class questions (LessonSpec.missing)


def lesson_questions(
    path: str, settings: Settings, choices: bool = True
) -> tuple[ClassQuestion, ...]:
    """The lesson's check-yourself questions at these settings, as store questions (none when
    the settings give the lesson nothing to compute); `choices`: a question with classic
    mistakes as multiple choice, else typed (from_drill)."""
    from dashboard import lessons

    declared = next(lesson for lesson in ASKABLE if lesson.path == path)
    base = lessons.computed(settings)
    if base.trace is None and path != "pages/worked_example.py":
        return ()
    drills = declared.class_questions(settings)
    made = (
        from_drill(declared.title, n, drill, choices) for n, drill in enumerate(drills, start=1)
    )
    return tuple(q for q in made if q is not None)


def bug_hunt_params(bug: str) -> dict[str, str] | None:
    """The bug hunt's link parameters that open a named mistake there; None for a mistake the
    bug hunt does not have (lesson 13's cross-attention mistakes: its link fell back to
    another bug, issue 52, item 9)."""
    from attention.bugs import BUGS

    return {"mode": "explore", "bug": bug} if bug in BUGS else None


def is_right(question, value: str) -> bool:
    """Whether a stored answer to a revealed question is right: one of the choices exactly, or
    a number within the drills' tolerance of the answer (attention.drills.grade's rule)."""
    from attention.drills import Drill, grade

    if question.answer is None:
        return False
    if question.choices is not None:
        return value == question.answer
    if question.kind == WHOLE:  # exactly, as the lessons grade a whole number
        drill = Drill(
            "whole", question.prompt, None, int(float(question.answer)), question.answer, ()
        )
    else:
        kind = "weight" if question.kind == WEIGHT else "number"  # a weight takes "34 %"
        drill = Drill(kind, question.prompt, None, float(question.answer), question.answer, ())
    return grade(drill, value).status == "right"


def named(prompt: str) -> tuple[str, str]:
    """A stored prompt as (its name, what it asks): "2 · Multi-head, question 3" and the rest.
    The name is the lesson's own numbering, the only one the class reads (issue 29, item 7)."""
    name, colon, asks = prompt.partition(": ")
    return (name, asks) if colon and len(name) <= 60 else ("Your teacher's question", prompt)


def answer_text(question) -> str:
    """The revealed answer as the lessons print it: a choice, a whole number, or 4 decimals."""
    from attention.drills import f4

    if question.answer is None or question.choices is not None:
        return str(question.answer)
    value = float(question.answer)
    return str(int(value)) if value.is_integer() else f4(value)


def nearest_mistake(question, value: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The wrong choice, with the classic mistakes behind it, that this stored answer is: the
    choice itself, or for a typed number the nearest mistake's number within the drills'
    tolerance (None when none is, or when the answer is right)."""
    from attention.drills import TOLERANCE

    if question.answer is None or not question.mistakes or is_right(question, value):
        return None
    if question.choices is not None:
        return next(((c, named) for c, named in question.mistakes if c == value), None)
    try:
        typed = float(value)
    except ValueError:
        return None
    near = [
        (abs(float(choice) - typed), choice, named)
        for choice, named in question.mistakes
        if abs(float(choice) - typed) <= TOLERANCE + 1e-9
    ]
    return min(near)[1:] if near else None


def cause_of(question, value: str) -> str | None:
    """The classic mistakes that give this answer, in words ("softmax over the wrong axis"),
    or None (nearest_mistake)."""
    from attention.drills import in_sentence

    found = nearest_mistake(question, value)
    return None if found is None else in_sentence(title for _, title in found[1])


def mistakes_made(question, counts: dict[str, int]) -> list[tuple[int, str, tuple]]:
    """The mistakes behind a question's answers (`counts`: answer -> students), most common
    first: (students, the mistake's number or choice, ((bug, title), ...)); a typed answer
    counts for the mistake whose number it is (nearest_mistake)."""
    made: dict[str, list] = {}
    for value, n in counts.items():
        found = nearest_mistake(question, value)
        if found is not None and n:
            made.setdefault(found[0], [0, found[0], found[1]])[0] += n
    return sorted((tuple(item) for item in made.values()), key=lambda item: -item[0])


def grouped(question, counts: dict[str, int], revealed: bool = True) -> dict[str, int]:
    """A numeric question's answers as the grader sees them: every answer within the drills'
    tolerance of the right one is one bar, every answer a classic mistake gives
    (nearest_mistake) is the mistake's bar (named by its number, as mistakes_made counts it),
    and the others are grouped likewise, each group named by its most common answer; choices
    stay as they are. The right answers' bar is named by the answer as the reveal prints it
    (answer_text) once `revealed`, and before that by its most common typed answer, like any
    other: an open question's bars show what students typed, never the answer."""
    from attention.drills import TOLERANCE

    if question.choices is not None or question.answer is None:
        return counts
    right = float(question.answer)
    near = TOLERANCE + 1e-9
    bars: dict[str, int] = {}
    for n, choice, _ in mistakes_made(question, counts):
        bars[choice] = n
    made = {value for value in counts if nearest_mistake(question, value) is not None}
    on_right = sum(n for value, n in counts.items() if abs(float(value) - right) <= near)
    others = sorted(
        (float(v), v, n)
        for v, n in counts.items()
        if abs(float(v) - right) > near and v not in made
    )
    groups: list[list[tuple[float, str, int]]] = []
    for item in others:
        if groups and item[0] - groups[-1][0][0] <= near:
            groups[-1].append(item)
        else:
            groups.append([item])
    for group in groups:
        name = max(group, key=lambda item: item[2])[1]
        bars[name] = sum(n for _, _, n in group)
    if on_right:
        typed = [(n, v) for v, n in counts.items() if abs(float(v) - right) <= near]
        name = answer_text(question) if revealed else max(typed)[1]
        bars[name] = bars.get(name, 0) + on_right
    return dict(sorted(bars.items(), key=lambda item: float(item[0])))
