"""Lesson 6's check-yourself questions: where an induction head looks in a repeated sequence,
and a trained head's previous-token score from its weights."""

from __future__ import annotations

import random

from torch import Tensor

from attention.drills import Drill, Given, f4, shown
from attention.questions import number, whole


def what_heads_learn_questions(weights: Tensor, seed: int) -> tuple[Drill, ...]:
    """Lesson 6: where an induction head looks in a repeated sequence, and a head's
    previous-token score from its weights (H, T, T) on the example."""
    rng = random.Random(seed)
    length = rng.randint(3, 5)
    segment = rng.sample(range(10), length)
    tokens = segment + segment
    m = rng.randrange(length)
    i = length + m
    H, T = weights.shape[0], weights.shape[-1]
    if T < 2:
        raise ValueError(f"a previous-token score needs two tokens or more, got {T}")
    head = rng.randrange(H)
    n = min(T - 1, 8)
    diagonal = tuple(float(weights[head, r, r - 1]) for r in range(1, n + 1))
    mean = sum(diagonal) / n
    hand = sum(shown(w) for w in diagonal) / n
    return (
        whole(
            f"The sequence below repeats a segment. Query {i} holds token {tokens[i]}: which "
            "key does an induction head attend to most? Type its position.",
            Given(tuple(str(p) for p in range(len(tokens))), (("token", tuple(tokens)),)),
            m + 1,
            (
                f"Token {tokens[i]} appeared before at position {m}; an induction head attends to "
                f"the token that followed it, position {m + 1} (token {tokens[m + 1]}), to predict "
                "it comes next again.",
            ),
        ),
        number(
            f"Layer 0, head {head} on the example: its weight on the previous token for query "
            f"rows 1 … {n} is below. What is its previous-token score on these rows (the mean)?",
            Given(tuple(f"row {r}" for r in range(1, n + 1)), (("a[i, i−1]", diagonal),)),
            mean,
            hand,
            (f"({' + '.join(f4(w) for w in diagonal)}) / {n} = {f4(hand)}",),
            "the score",
        ),
    )
