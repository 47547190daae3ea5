"""Class mode's concept check (issue 45): the teacher gives form A before the course and form B
after it; each student answers every item of a check on one screen; the report pairs each
student's two scores by seat (never a name) and gives the class's gain, per concept, per
misconception and per item. The items and the figures are attention/concepts.py's.

A check is stored as ten ordinary questions whose prompts start with its name ("Concept check,
before · item 3: ..."), so the store, the tally and the class report need nothing new.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from attention import concepts
from dashboard.classroom.store import ClassStore, Question

NAMES = {"before": "Concept check, before", "after": "Concept check, after"}


def prompt_of(when: str, item: concepts.Item) -> str:
    return f"{NAMES[when]} · item {item.number}: {item.prompt}"


def check_of(prompt: str) -> tuple[str, int] | None:
    """(when, item number) of a stored concept-check prompt; None for any other question."""
    for when, name in NAMES.items():
        head = f"{name} · item "
        if prompt.startswith(head):
            number, _, _ = prompt[len(head) :].partition(":")
            if number.isdigit():
                return when, int(number)
    return None


def ask(store: ClassStore, code: str, teacher_token: str, when: str) -> list[int]:
    """Ask every item of the check's form, in order; the question ids."""
    form = concepts.WHEN_FORM[when]
    return [
        store.ask(
            code,
            teacher_token,
            prompt_of(when, item),
            item.choices,
            item.right,
            (f"Concept: {item.concept}.", f"The answer: {item.right}."),
            [
                (choice, [(key, concepts.misconception_title(key)) for key in keys])
                for choice, keys in item.wrong
            ],
        )
        for item in concepts.FORMS[form]
    ]


def open_items(questions: tuple[Question, ...]) -> tuple[str, list[Question]] | None:
    """The check the class is taking now (the latest question is one of its items, still
    open) and its open items, in order; None when the latest question is not a check's."""
    if not questions or questions[-1].closed:
        return None
    found = check_of(questions[-1].prompt)
    if found is None:
        return None
    when = found[0]
    items = [q for q in questions if (check_of(q.prompt) or ("",))[0] == when and not q.closed]
    return when, items


@dataclass(frozen=True)
class Giving:
    """One time a form of the check was given: its items' ids, when, and whether it is closed."""

    when: str  # "before" or "after"
    qids: tuple[int, ...]
    asked_at: float | None
    closed: bool


def givings(questions: tuple[Question, ...]) -> dict[str, list[Giving]]:
    """Each form's givings in the order given (a giving asks items 1 to 10 in order; its item 1
    starts it): what the teacher is shown before giving a form again, and, the latest of each,
    what the report reads."""
    found: dict[str, list[list[Question]]] = {when: [] for when in NAMES}
    for question in questions:
        check = check_of(question.prompt)
        if check is None:
            continue
        when, number = check
        if number == 1 or not found[when]:
            found[when].append([])
        found[when][-1].append(question)
    return {
        when: [
            Giving(when, tuple(q.qid for q in items), items[0].asked_at,
                   all(q.closed for q in items))
            for items in runs
        ]
        for when, runs in found.items()
    }  # fmt: skip


@dataclass(frozen=True)
class CheckReport:
    gain: concepts.Gain
    given: dict[str, list[Giving]]  # each form's givings; the figures read the latest of each
    students: pd.DataFrame  # one row per seat that took both: before %, after %, c
    per_concept: pd.DataFrame  # share right before and after
    per_misconception: pd.DataFrame  # share who chose it at least once, before and after
    per_item: pd.DataFrame  # difficulty and discrimination, each form


@dataclass(frozen=True)
class Taken:
    """The checks as the class took them: each seat's choices, and each item's right answer as
    stored when it was asked (not today's items: a check given before an item changed, by an
    update or a class continued from its file, keeps its grading)."""

    chosen: dict[str, dict[int, dict[int, str]]]  # when -> seat -> item number -> choice
    right_of: dict[tuple[str, int], str]  # (when, item number) -> the right choice
    forms: dict[str, tuple[concepts.Item, ...]]  # when -> its form's items

    @property
    def both(self) -> list[int]:
        """The seats that took both checks: the figures pair them."""
        return sorted(set(self.chosen["before"]) & set(self.chosen["after"]))

    def score(self, when: str, seat: int) -> float:
        """A seat's share of a check's items right, in %."""
        mine = self.chosen[when][seat]
        items = self.forms[when]
        right = sum(mine.get(i.number) == self.right_of.get((when, i.number)) for i in items)
        return 100 * right / len(items)


def report(store: ClassStore, code: str, teacher_token: str) -> CheckReport | None:
    """The concept check's figures from the stored answers; None before both checks were given.
    A form given more than once: its latest giving's answers (`CheckReport.given` lists all).
    A student who answered at least one item of a check took it (an unanswered item counts
    wrong); the figures pair the students who took both."""
    questions = store.questions(code, teacher_token)
    given = givings(questions)
    if not all(given.values()):
        return None
    taken = taken_checks(store, code, teacher_token, questions, given)
    both = taken.both
    scores = {when: {seat: taken.score(when, seat) for seat in both} for when in NAMES}
    pairs = [(scores["before"][seat], scores["after"][seat]) for seat in both]
    students = pd.DataFrame(
        {
            "seat": both,
            "before %": [p for p, _ in pairs],
            "after %": [q for _, q in pairs],
            "normalized change c": [concepts.normalized_change(p, q) for p, q in pairs],
        }
    )
    per_item, misconceptions = item_figures(taken, scores)
    return CheckReport(
        concepts.gain(pairs), given, students, concept_figures(taken), misconceptions, per_item
    )


def taken_checks(
    store: ClassStore,
    code: str,
    teacher_token: str,
    questions: tuple[Question, ...],
    given: dict[str, list[Giving]],
) -> Taken:
    """What each seat chose in the latest giving of each form (a form given again: its
    latest), and each item's right answer as stored then."""
    used = {when: runs[-1] for when, runs in given.items()}
    latest = {qid for giving in used.values() for qid in giving.qids}
    asked = {q.qid: check_of(q.prompt) for q in questions if q.qid in latest}
    right_of = {check_of(q.prompt): q.answer for q in questions if q.qid in latest}
    chosen: dict[str, dict[int, dict[int, str]]] = {when: defaultdict(dict) for when in NAMES}
    for qid, seat, value in store.answers_by_seat(code, teacher_token):
        if qid in asked:
            when, number = asked[qid]
            chosen[when][seat][number] = value
    forms = {when: concepts.FORMS[concepts.WHEN_FORM[when]] for when in NAMES}
    return Taken(chosen, right_of, forms)


def concept_figures(taken: Taken) -> pd.DataFrame:
    """Each concept's share right before and after, among the seats that took both."""
    both = taken.both
    rows = []
    for index, concept in enumerate(concepts.CONCEPTS):
        row = {"concept": concept}
        for when in NAMES:
            item = taken.forms[when][index]
            answer = taken.right_of.get((when, item.number))
            right = [taken.chosen[when][seat].get(item.number) == answer for seat in both]
            row[f"right {when}"] = sum(right) / len(both) if both else None
        rows.append(row)
    return pd.DataFrame(rows)


def item_figures(
    taken: Taken, scores: dict[str, dict[int, float]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each item's difficulty and discrimination, each form; and each misconception's share of
    the seats that chose it at least once, before and after."""
    both, chosen = taken.both, taken.chosen
    per_item, per_misconception = [], defaultdict(dict)
    for when in NAMES:
        held: dict[str, set[int]] = defaultdict(set)
        for item in taken.forms[when]:
            for seat in both:
                for key in item.diagnosis(chosen[when][seat].get(item.number, "")):
                    held[key].add(seat)
            rights = [
                chosen[when][seat].get(item.number) == taken.right_of[when, item.number]
                for seat in both
            ]
            rest = [
                scores[when][seat] * len(taken.forms[when]) / 100 - right
                for seat, right in zip(both, rights, strict=True)
            ]
            per_item.append({
                "form": concepts.WHEN_FORM[when], "when": when, "item": item.number,
                "concept": item.concept,
                "difficulty (share right)": sum(rights) / len(both) if both else None,
                "discrimination (point-biserial)": concepts.point_biserial(rights, rest),
            })  # fmt: skip
        for key, seats_holding in held.items():
            per_misconception[key][when] = len(seats_holding) / len(both)
    misconceptions = pd.DataFrame(
        [
            {"misconception": concepts.misconception_title(key),
             "held before": shares.get("before", 0.0), "held after": shares.get("after", 0.0)}
            for key, shares in sorted(per_misconception.items())
        ],
        columns=["misconception", "held before", "held after"],
    )  # fmt: skip
    return pd.DataFrame(per_item), misconceptions


def summary(figures: concepts.Gain) -> pd.DataFrame:
    """The class's figures as one table of text ("undefined" where a figure is: Gain.why says
    why), with Hake's physics courses beside them for context."""
    g, c, d = figures.g, figures.c, figures.d
    low, high = figures.d_interval or (None, None)
    rows = [
        ("students who took both", figures.students),
        ("mean before, %", round(figures.pre, 1) if figures.students else None),
        ("mean after, %", round(figures.post, 1) if figures.students else None),
        ("class gain <g> (Hake)", None if g is None else round(g, 3)),
        ("mean normalized change c (Marx & Cummings)", None if c is None else round(c, 3)),
        ("students left out of c (0 or 100 % both times)", figures.c_left_out),
        ("Cohen's d_z, paired (mean change / its spread)", None if d is None else round(d, 2)),
        ("Cohen's d_z, 95 % interval (a normal approximation: rough below 20 students)",
         None if low is None else f"{low:.2f} to {high:.2f}"),
        ("Cohen's d, pooled spread of before and after",
         None if figures.d_pooled is None else round(figures.d_pooled, 2)),
        ("for context: <g> of lecture courses, physics (Hake 1998)", 0.23),
        ("for context: <g> of interactive-engagement courses, physics (Hake 1998)", 0.48),
    ]  # fmt: skip
    shown = [(name, "undefined" if value is None else str(value)) for name, value in rows]
    return pd.DataFrame(shown, columns=["figure", "value"])  # text: one type a column


def rounded(figures: CheckReport) -> dict[str, pd.DataFrame]:
    """The report's tables under their titles, rounded as the screen shows them: a share as a
    whole percentage (a column named "… %"), c and the discrimination to two decimals, seats and
    item numbers whole; <NA> where a figure is undefined. Misconceptions, most held before
    first, in sentence case."""

    def percent(values) -> pd.Series:
        return (100 * pd.Series(values, dtype="Float64")).round(0).astype("Int64")

    def two(values) -> pd.Series:
        return pd.Series(values, dtype="Float64").round(2)

    students, concept = figures.students, figures.per_concept
    held = figures.per_misconception.sort_values(
        ["held before", "held after", "misconception"], ascending=[False, False, True]
    )
    items = figures.per_item
    return {
        "Each student, by seat": pd.DataFrame({
            "seat": students["seat"].astype("Int64"),
            "before %": percent(students["before %"] / 100),
            "after %": percent(students["after %"] / 100),
            "normalized change c": two(students["normalized change c"]),
        }),
        "Right per concept": pd.DataFrame({
            "concept": concept["concept"],
            "right before %": percent(concept["right before"]),
            "right after %": percent(concept["right after"]),
        }),
        "Misconceptions held (a wrong choice that shows it, at least once)": pd.DataFrame({
            "misconception": [t[:1].upper() + t[1:] for t in held["misconception"]],
            "held before %": percent(held["held before"]),
            "held after %": percent(held["held after"]),
        }),
        "Per item: difficulty and discrimination": pd.DataFrame({
            "form": items["form"], "when": items["when"],
            "item": items["item"].astype("Int64"), "concept": items["concept"],
            "right (difficulty) %": percent(items["difficulty (share right)"]),
            "discrimination (point-biserial)": two(items["discrimination (point-biserial)"]),
        }),
    }  # fmt: skip


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A rounded table as text for the screen: "67 %" in a "… %" column, "undefined" for <NA>."""

    def cell(column: str, value) -> str:
        if pd.isna(value):
            return "undefined"
        return f"{value} %" if column.endswith(" %") else str(value)

    return pd.DataFrame({
        column.removesuffix(" %"): [cell(column, value) for value in frame[column]]
        for column in frame.columns
    })  # fmt: skip


def csv(figures: CheckReport) -> str:
    """Every table of the report in one long CSV, a column naming each row's table: numbers
    rounded as on the screen (whole percentages, two decimals), empty where undefined."""
    parts = {"The class's figures": summary(figures.gain), **rounded(figures)}
    return pd.concat(
        [frame.astype(object).assign(table=title) for title, frame in parts.items()]
    ).to_csv(index=False)
