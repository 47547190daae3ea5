"""Lesson 2's check-yourself questions: the split for a head count the page is not using."""

from __future__ import annotations

import random

from attention.drills import Drill
from attention.questions import whole
from attention.trace import AttentionTrace


def multi_head_questions(trace: AttentionTrace, seed: int) -> tuple[Drill, ...]:
    """Lesson 2: d_k = C / H', which head owns a column, and q's shape after the split, for a
    head count H' the page is not using."""
    rng = random.Random(seed)
    n_heads, seq_len, d_head = trace.q.shape  # (H, T, d_head)
    d_model = n_heads * d_head
    others = [h for h in range(1, d_model + 1) if d_model % h == 0 and h != n_heads]
    heads = rng.choice(others or [n_heads])
    d_k = d_model // heads
    column = rng.randrange(d_model)
    batch = rng.randint(2, 4)
    owner = column // d_k
    return (
        whole(
            f"This layer has C = {d_model}. With H = {heads} heads instead, how many columns "
            "(d_k) does each head get?",
            None,
            d_k,
            (f"d_k = C / H = {d_model} / {heads} = {d_k}.",),
        ),
        whole(
            f"Still C = {d_model} and H = {heads}: which head owns column {column} of Q "
            "(heads and columns counted from 0)?",
            None,
            owner,
            (
                f"Head h owns columns h·d_k … h·d_k + d_k − 1, with d_k = {d_k}.",
                f"{column} // {d_k} = {owner}: head {owner} owns columns {owner * d_k} … "
                f"{owner * d_k + d_k - 1}.",
            ),
        ),
        Drill(
            "shape",
            f"q_all has shape ({batch}, {seq_len}, {d_model}), H = {heads}. What is the shape "
            f"after q_all.view(B, T, H, C // H).transpose(1, 2)? Give its sizes in order.",
            None,
            (batch, heads, seq_len, d_k),
            str((batch, heads, seq_len, d_k)),
            (
                f"view splits C = {d_model} into (H, d_k) = ({heads}, {d_k}); transpose(1, 2) "
                "swaps T and H.",
            ),
        ),
    )
