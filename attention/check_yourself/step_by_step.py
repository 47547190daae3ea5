"""Lesson 1's check-yourself questions: a score, a weight and an output entry of new queries
against the page's keys and values (the weight is attention.questions.fresh_weight, which lesson
8 asks too)."""

from __future__ import annotations

import random
from functools import partial

import torch

from attention.diagnosis import scale_mistakes
from attention.drills import Drill, Given, f4, factor, shown
from attention.questions import fresh_query, fresh_row, fresh_weight, key_names, number
from attention.trace import AttentionTrace


def fresh_score(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """s′ = (q* · k_j) × scale for a new query q* and one of head 0's keys."""
    k = trace.k[trace.kv_head(0)]  # (T, d_head)
    q = fresh_query(k.shape[-1], seed)  # (d_head,)
    j = rng.randrange(k.shape[0])
    pairs = list(zip(q.tolist(), k[j].tolist(), strict=True))
    dot = sum(shown(a) * shown(b) for a, b in pairs)
    hand = shown(dot) * shown(trace.scale)
    exact_dot = float(q.double() @ k[j].double())
    truth = exact_dot * trace.scale
    products = " + ".join(f"{factor(a)} × {factor(b)}" for a, b in pairs)
    return number(
        f"Head 0: a new query q* arrives. Compute its scaled score against key {j} "
        f"({labels[j]}), s′ = (q* · k_{j}) × {f4(trace.scale)}.",
        Given(
            tuple(f"d{c}" for c in range(len(pairs))),
            (("q*", tuple(q.tolist())), (f"k_{j}", tuple(k[j].tolist()))),
        ),
        truth,
        hand,
        (
            f"q* · k_{j} = {products} = {f4(dot)}",
            f"s′ = {factor(shown(dot))} × {f4(trace.scale)} = {f4(hand)}",
        ),
        "s′",
        diagnose=partial(scale_mistakes, exact_dot, k.shape[-1], trace.d_model, truth),
    )


def fresh_output(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """One entry of a new query's output, z*[c] = Σ_j a*_j v_j[c], from its weights."""
    row = torch.tensor(fresh_row(trace, seed)).softmax(-1)  # (T,)
    v = trace.v[trace.kv_head(0)]  # (T, d_head)
    c = rng.randrange(v.shape[-1])
    pairs = list(zip(row.tolist(), v[:, c].tolist(), strict=True))
    hand = sum(shown(a) * shown(b) for a, b in pairs)
    truth = float(row.double() @ v[:, c].double())
    return number(
        f"Head 0: a third new query has the attention weights below. Compute entry {c} of its "
        f"output, z*[{c}] = Σ_j a*_j × v_j[{c}].",
        Given(
            key_names(labels, len(pairs)),
            (("a*", tuple(row.tolist())), (f"v[:, {c}]", tuple(v[:, c].tolist()))),
        ),
        truth,
        hand,
        (f"z*[{c}] = {' + '.join(f'{factor(a)} × {factor(b)}' for a, b in pairs)} = {f4(hand)}",),
        f"z*[{c}]",
    )


def step_by_step_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 1: a score, a weight and an output entry of new queries against the page's K, V."""
    rng = random.Random(seed)
    return (
        fresh_score(trace, labels, seed * 3 + 1, rng),
        fresh_weight(trace, labels, seed * 3 + 2, rng),
        fresh_output(trace, labels, seed * 3 + 3, rng),
    )
