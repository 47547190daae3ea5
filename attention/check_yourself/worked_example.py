"""Lesson 5's check-yourself questions: its By hand, asked before the stages that hold the
answers, and a weight and an output entry under the mask the page does not show."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from attention.diagnosis import softmax_mistakes
from attention.drills import HINTS, Drill, Given, f4, factor, shown
from attention.masks import build_mask
from attention.questions import masked_row, number, softmax_weight, softmax_working
from attention.trace import AttentionTrace

if TYPE_CHECKING:
    from torch import Tensor


# The mask the page does not show, by the page's causal switch
OTHER_MASK = {True: "without the mask", False: "with the causal mask"}


def worked_example_by_hand(trace: AttentionTrace, labels) -> tuple[Drill, ...]:
    """Lesson 5's By hand, asked after the scores and before the stages that hold the answers:
    the scaled score of query 2 on key 1 from q and k, the weight of query 1 on key 0 from its
    scaled scores under the page's mask, and output entry 0 of query 2 from its weights and V.
    Positions count from 0, as everywhere; the tutorial's names x1, x2, x3 are the labels."""
    T = len(labels)
    if T < 3:
        raise ValueError(f"lesson 5's questions need its three tokens, got {T}")
    return (
        scaled_score_question(trace, labels, 2, 1),
        page_weight_question(trace, labels, 1, 0),
        output_entry_question(trace, labels, 2, 0),
    )


def scaled_score_question(trace: AttentionTrace, labels, i: int, j: int) -> Drill:
    """s′_i,j = (q_i · k_j) × 1/√d_k, from q_i and k_j of head 0."""
    q, k = trace.q[0, i], trace.k[trace.kv_head(0), j]  # (d_k,), (d_k,)
    pairs = list(zip(q.tolist(), k.tolist(), strict=True))
    dot = sum(shown(a) * shown(b) for a, b in pairs)
    products = " + ".join(f"{factor(a)} × {factor(b)}" for a, b in pairs)
    return number(
        f"Compute the scaled score of query {i} ({labels[i]}) against key {j} ({labels[j]}), "
        f"s′_{i},{j} = (q_{i} · k_{j}) × 1/√d_k = (q_{i} · k_{j}) × {f4(trace.scale)}.",
        Given(
            tuple(f"d{c}" for c in range(len(pairs))),
            ((f"q_{i}", tuple(q.tolist())), (f"k_{j}", tuple(k.tolist()))),
        ),
        float(trace.scaled[0, i, j]),
        shown(dot) * shown(trace.scale),
        (
            f"q_{i} · k_{j} = {products} = {f4(dot)}",
            f"s′_{i},{j} = {factor(dot)} × {factor(trace.scale)} = "
            f"{f4(shown(dot) * shown(trace.scale))}",
        ),
        f"s′_{i},{j}",
        hint=HINTS["score"],
    )


def page_weight_question(trace: AttentionTrace, labels, r: int, key: int) -> Drill:
    """a_r,key under the page's mask: the softmax of query r's scaled scores, head 0."""
    allowed = trace.allowed.expand(trace.weights.shape)[0]  # (T, T)
    row = masked_row(trace.scaled[0, r], allowed[r])
    hand, working = softmax_working(row, key, f"a_{r},{key}")
    return number(
        f"Compute the weight of query {r} ({labels[r]}) on key {key} ({labels[key]}), "
        f"a_{r},{key}, the softmax of query {r}'s scaled scores (a blocked key is left out).",
        Given(tuple(labels), ((f"s′ row {r}", row),)),
        float(trace.weights[0, r, key]),
        hand,
        working,
        f"a_{r},{key}",
    )


def output_entry_question(trace: AttentionTrace, labels, i: int, c: int) -> Drill:
    """z_i[c] = Σ_j a_i,j × v_j[c], from query i's weights and column c of V, head 0."""
    a, v = trace.weights[0, i].tolist(), trace.v[trace.kv_head(0), :, c].tolist()
    hand_out = sum(shown(w) * shown(x) for w, x in zip(a, v, strict=True))
    terms = " + ".join(f"{factor(w)} × {factor(x)}" for w, x in zip(a, v, strict=True))
    return number(
        f"Compute entry {c} of query {i}'s output, z_{i}[{c}] = Σ_j a_{i},j × v_j[{c}].",
        Given(tuple(labels), ((f"a row {i}", tuple(a)), (f"v[:, {c}]", tuple(v)))),
        float(trace.heads[0, i, c]),
        hand_out,
        (f"z_{i}[{c}] = {terms} = {f4(hand_out)}",),
        f"z_{i}[{c}]",
        hint=HINTS["output"],
    )


def worked_example_questions(trace: AttentionTrace, labels, causal: bool) -> tuple[Drill, ...]:
    """Lesson 5: a weight and an output entry under the mask the page does not show."""
    T = len(labels)
    other = build_mask(T, causal=not causal)  # (T, T)
    rows = [
        i
        for i in range(T)
        if int(other[i].sum()) >= 2
        and bool((other[i] != trace.allowed.expand(trace.weights.shape)[0, i]).any())
    ] or [T - 1]
    i = rows[len(rows) // 2]
    return (
        other_mask_weight_question(trace, labels, causal, other, i),
        other_mask_output_question(trace, labels, causal, other, i),
    )


def other_mask_weight_question(
    trace: AttentionTrace, labels, causal: bool, other: Tensor, i: int
) -> Drill:
    """a_i,0 with the causal switch flipped: the softmax of query i's scaled scores under
    `other` (T, T), the mask the page does not show; the bug hunt's mistakes diagnose it."""
    name, j = OTHER_MASK[causal], 0
    row = masked_row(trace.scaled[0, i], other[i])
    blocked = [k for k in range(len(labels)) if not bool(other[i, k])]
    hand, working = softmax_working(row, j, f"a_{i},{j}")
    return number(
        f"Switch the causal mask {'off' if causal else 'on'}: what is the weight of query "
        f"{i} ({labels[i]}) on key {j} ({labels[j]}) {name}? Below: its scaled scores s′ "
        f"(row {i}, query {i} against every key; column {j}, every query against key {j}), "
        "before any mask. "
        + (
            f"{name.capitalize()}, query {i} may not attend to "
            f"key{'s' if len(blocked) > 1 else ''} {', '.join(str(k) for k in blocked)}."
            if blocked
            else f"{name.capitalize()}, query {i} may attend to every key."
        ),
        Given(
            tuple(labels),
            (
                (f"s′ row {i}", tuple(trace.scaled[0, i].tolist())),
                (f"s′ column {j}", tuple(trace.scaled[0, :, j].tolist())),
            ),
        ),
        softmax_weight(row, j),
        hand,
        working,
        f"a_{i},{j}",
        diagnose=partial(softmax_mistakes, trace.scaled[0], other, (i, j), softmax_weight(row, j)),
    )


def other_mask_output_question(
    trace: AttentionTrace, labels, causal: bool, other: Tensor, i: int
) -> Drill:
    """z_i[0] under `other` (T, T): the weights of query i's row under that mask times V."""
    name, c, T = OTHER_MASK[causal], 0, len(labels)
    row = masked_row(trace.scaled[0, i], other[i])
    weights = [softmax_weight(row, key) for key in range(T)]
    values = trace.v[0, :, c].tolist()
    out = sum(w * v for w, v in zip(weights, values, strict=True))
    hand_weights = [softmax_working(row, key, "")[0] for key in range(T)]
    hand_out = sum(shown(w) * shown(v) for w, v in zip(hand_weights, values, strict=True))
    terms = " + ".join(
        f"{factor(w)} × {factor(v)}" for w, v in zip(hand_weights, values, strict=True)
    )
    return number(
        f"Still {name}: compute entry {c} of query {i}'s output, z_{i}[{c}] = Σ_j a_{i},j "
        f"× v_j[{c}], from its scaled scores and V.",
        Given(tuple(labels), ((f"s′ row {i} {name}", row), (f"v[:, {c}]", tuple(values)))),
        out,
        hand_out,
        (
            f"The weights {name}: " + ", ".join(f4(w) for w in hand_weights) + ".",
            f"z_{i}[{c}] = {terms} = {f4(hand_out)}",
        ),
        f"z_{i}[{c}]",
    )
