"""Lesson 7's check-yourself questions: a weight through two of the classic bugs."""

from __future__ import annotations

import math
import random

from attention.drills import Drill, Given
from attention.questions import Row, masked_row, number, softmax_weight, softmax_working
from attention.trace import AttentionTrace

INVERTED_MASK = "The bug inverts the mask (True read as blocked)"


def bug_hunt_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 7: a weight through two bugs: no 1/√d_k, and an inverted mask (a wrong scale
    when there is no mask to invert)."""
    rng = random.Random(seed)
    allowed = trace.allowed.expand(trace.weights.shape)  # (H, T, T)
    H, T = allowed.shape[0], allowed.shape[-1]
    head = rng.randrange(H)
    rows = [i for i in range(T) if int(allowed[head, i].sum()) >= 2] or [T - 1]
    i = rng.choice(rows)
    raw = masked_row(trace.scores[head, i], allowed[head, i])
    j = rng.choice([key for key in range(T) if raw[key] is not None] or [0])
    inverted = ~allowed[head]  # (T, T): the bug lets each query see exactly what it should not
    rows2 = [r for r in range(T) if int(inverted[r].sum()) >= 2]
    if rows2:  # the inverted mask: the bug's own row, over the keys the mask should block
        q = rng.choice(rows2)
        row2, bug = masked_row(trace.scaled[head, q], inverted[q]), INVERTED_MASK
    else:  # no mask to invert: the scale 1/√C of the whole layer instead of 1/√d_head
        q = rng.choice(rows)
        row2, bug = wrong_scale_row(trace, head, q)
    col = rng.choice([key for key in range(T) if row2[key] is not None])
    return (
        no_scale_question(trace, labels, head, (i, j), raw),
        buggy_weight_question(labels, bug, head, (q, col), row2),
    )


def wrong_scale_row(trace: AttentionTrace, head: int, q: int) -> tuple[Row, str]:
    """Query q's scores scaled by 1/√C, the whole layer's width, instead of 1/√d_head, and the
    sentence naming the bug (with one head C = d_k: the scale is right, and it says so)."""
    allowed = trace.allowed.expand(trace.weights.shape)[head, q]  # (T,)
    C = trace.q.shape[0] * trace.q.shape[-1]
    raw_q = masked_row(trace.scores[head, q], allowed)  # query q's own raw row
    row = tuple(None if v is None else v / math.sqrt(C) for v in raw_q)
    bug = (
        f"The bug scales by 1/√C = 1/√{C} (the whole layer's width, not a head's)"
        if trace.q.shape[0] > 1  # one head: C = d_k, the right scale (no bug at all here)
        else f"The bug would scale by 1/√C = 1/√{C}, but with one head C = d_k: the scale "
        "is right here and the layer computes the correct weight"
    )
    return row, bug


def no_scale_question(
    trace: AttentionTrace, labels, head: int, at: tuple[int, int], raw: Row
) -> Drill:
    """The weight a_i,j the layer gives when it forgets the 1/√d_k: softmax of the raw row."""
    i, j = at
    hand, working = softmax_working(raw, j, f"a_{i},{j}")
    return number(
        (
            "The bug forgets the 1/√d_k. "
            if trace.q.shape[-1] > 1  # d_k = 1: nothing to forget, the weight is the right one
            else "The bug forgets the 1/√d_k; here d_k = 1, so it changes nothing. "
        )
        + f"Head {head}: query {i}'s raw scores q · k (not "
        f"scaled; blocked keys empty) are below. What weight does the buggy layer give "
        f"key {j} ({labels[j]})?",
        Given(tuple(labels), ((f"score row {i}", raw),)),
        softmax_weight(raw, j),
        hand,
        working,
        f"a_{i},{j}",
    )


def buggy_weight_question(labels, bug: str, head: int, at: tuple[int, int], row: Row) -> Drill:
    """The weight a_q,col the second bug gives, from its row as the buggy layer uses it."""
    q, col = at
    hand, working = softmax_working(row, col, f"a_{q},{col}")
    return number(
        f"{bug}. Head {head}: query {q}'s scaled scores as the buggy layer uses them are "
        f"below (keys it cannot see empty). What weight does it give key {col} "
        f"({labels[col]})?",
        Given(tuple(labels), ((f"buggy s′ row {q}", row),)),
        softmax_weight(row, col),
        hand,
        working,
        f"a_{q},{col}",
    )
