"""Check yourself: what every lesson's check-yourself questions are made with, graded by the
drills' grader (`attention.drills.grade`), with the full working.

Pure Python and PyTorch. Every question is a `Drill` (kind "number", "whole", "yesno", "shape" or
"mask"), so every lesson's questions share one grader and one rule: `number` and `whole` make one,
`masked_row` gives a row of scores as a table shows it (blocked keys empty), `softmax_weight` and
`softmax_working` give a weight and its working from the digits a table shows, and `fresh_weight`
asks a new query's weight (lessons 1 and 8 ask it). Each lesson's own question makers live beside
its maths (docs/architecture.md), one function per question they build: a question asks about
something the lesson's page does not print (a fresh query against the page's keys, another mask,
another head count, a position past the sequence, other tile sizes), so its answer is never on the
page before the question asks it (tests/dashboard/test_course.py checks).
"""

from __future__ import annotations

import math
import random

import torch
from torch import Tensor

from attention.drills import HINTS, TOLERANCE, Drill, Given, Mistake, exact_note, f4, factor, shown
from attention.trace import AttentionTrace

Row = tuple[float | None, ...]  # one row of scores, None where the key is blocked
SOFTMAX_STEP = "Subtract the row's largest allowed score"  # softmax_working's first line


def fresh_query(d: int, seed: int) -> Tensor:
    """A new query vector (d,) with one decimal, easy to multiply by hand; never all zero."""
    generator = torch.Generator().manual_seed(seed)
    q = torch.round(torch.randn(d, generator=generator) * 10) / 10  # (d,)
    return q if bool(q.abs().sum() > 0) else torch.ones(d) / 2


def masked_row(values: Tensor, allowed: Tensor) -> Row:
    """One row of scores (T,) as a table shows it: None where `allowed` (T,) blocks the key."""
    return tuple(
        v if bool(a) else None for v, a in zip(values.tolist(), allowed.tolist(), strict=True)
    )


def softmax_weight(row: Row, j: int) -> float:
    """The exact softmax weight of key j over the row's allowed entries (0 when blocked)."""
    if row[j] is None:
        return 0.0
    allowed = torch.tensor([v for v in row if v is not None], dtype=torch.float64)
    return float(torch.exp(torch.tensor(row[j], dtype=torch.float64) - allowed.logsumexp(0)))


def softmax_working(row: Row, j: int, name: str) -> tuple[float, tuple[str, ...]]:
    """Hand working of one softmax weight from the digits a table shows: (hand result, lines)."""
    allowed = [v for v in row if v is not None]
    if row[j] is None or not allowed:
        return 0.0, (f"Key {j} is blocked: its weight is 0.",)
    top = shown(max(allowed))
    exps = [shown(math.exp(shown(v) - top)) for v in allowed]
    total = sum(exps)
    mine = shown(math.exp(shown(row[j]) - top))
    hand = mine / shown(total)
    return hand, (
        f"{SOFTMAX_STEP}, {f4(top)}, before exp (the ratio does not change).",
        f"exp({f4(row[j])} − {factor(top)}) = {f4(mine)}",
        f"sum over the allowed keys = {' + '.join(f4(e) for e in exps)} = {f4(total)}",
        f"{name} = {f4(mine)} / {f4(total)} = {f4(hand)}",
    )


def number(
    prompt: str, given: Given | None, truth: float, hand: float, working, name: str, hint="",
    diagnose=None,
):  # fmt: skip
    """A number question: right within the drills' tolerance of the exact value. A softmax
    weight (its working is softmax_working's) gets the weight's hint unless it has one;
    `diagnose` computes the numbers the bug hunt's mistakes give for it (attention.diagnosis)."""
    weight = any(line.startswith(SOFTMAX_STEP) for line in working)  # a softmax weight
    if not hint and weight:
        hint = HINTS["weight"]
    return Drill(
        "number", prompt, given, truth, f4(truth), (*working, *exact_note(name, hand, truth)),
        hint=hint, diagnose=diagnose, percent=weight,
    )  # fmt: skip


def whole(prompt: str, given: Given | None, answer: int, working: tuple[str, ...]) -> Drill:
    """A whole-number question: right only when exact."""
    return Drill("whole", prompt, given, int(answer), str(int(answer)), working)


def key_names(labels, count: int) -> tuple[str, ...]:
    return tuple(labels[:count]) if labels else tuple(str(j) for j in range(count))


# A fresh query against the page's keys (lessons 1 and 8)


def fresh_row(trace: AttentionTrace, seed: int) -> tuple[float, ...]:
    """The scaled scores (T,) of a new query against every key of head 0."""
    k = trace.k[trace.kv_head(0)]  # (T, d_head)
    q = fresh_query(k.shape[-1], seed)
    return tuple((k.double() @ q.double() * trace.scale).tolist())


def fresh_weight(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """One weight of a new query's softmax row, from its scaled scores."""
    row = fresh_row(trace, seed)
    j = rng.randrange(len(row))
    hand, working = softmax_working(row, j, f"a*_{j}")
    return number(
        f"Head 0: another new query, placed after the sequence, sees every key; its scaled "
        f"scores are below. Compute its attention weight on key {j} ({labels[j]}).",
        Given(key_names(labels, len(row)), (("s′ of q*", row),)),
        softmax_weight(row, j),
        hand,
        working,
        f"a*_{j}",
    )


def grouped_mistakes(
    values: dict[str, float], truth: float, misconceptions: dict[str, str]
) -> tuple[Mistake, ...]:
    """The numbers misconceptions give (name -> value) as a question's mistakes: those within
    the tolerance of the answer (or not finite) left out, those within the tolerance of each
    other merged into one, described by `misconceptions[name]` (lessons 13 and 14)."""
    groups: list[list[tuple[str, float]]] = []
    for name, value in values.items():
        if not math.isfinite(value) or abs(value - truth) <= 2 * TOLERANCE:
            continue
        group = next((g for g in groups if all(abs(v - value) <= TOLERANCE for _, v in g)), None)
        (groups.append([(name, value)]) if group is None else group.append((name, value)))
    return tuple(
        Mistake(
            sum(v for _, v in g) / len(g), tuple(n for n, _ in g),
            tuple(misconceptions[n] for n, _ in g), tuple(v for _, v in g),
        )
        for g in groups
    )  # fmt: skip
