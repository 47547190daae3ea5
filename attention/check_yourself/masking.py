"""Lesson 3's check-yourself questions: the keys another padding blocks, and a weight under
that mask."""

from __future__ import annotations

import random

from attention.drills import Drill, Given
from attention.masks import build_mask
from attention.questions import number, softmax_weight, softmax_working
from attention.trace import AttentionTrace


def padding_choice(T: int, causal: bool, n_padding: int, rng: random.Random):
    """(padding, query) whose mask row differs from the page's, with two allowed keys or more
    when possible."""
    page = build_mask(T, causal=causal, n_padding=n_padding)
    best = []
    for pad in range(T):
        if pad == n_padding:
            continue
        mask = build_mask(T, causal=causal, n_padding=pad)
        for i in range(T):
            if not bool((mask[i] == page[i]).all()):
                best.append((int(mask[i].sum()) >= 2, pad, i, mask))
    if not best:
        return n_padding, T - 1, page
    rich = [b for b in best if b[0]] or best
    _, pad, i, mask = rng.choice(rich)
    return pad, i, mask


def masking_questions(
    trace: AttentionTrace, labels, causal: bool, n_padding: int, seed: int
) -> tuple[Drill, ...]:
    """Lesson 3: the keys another padding blocks for a query, and a weight under that mask."""
    rng = random.Random(seed)
    T = len(labels)
    pad, i, mask = padding_choice(T, causal, n_padding, rng)
    blocked = frozenset(j for j in range(T) if not bool(mask[i, j]))
    what = ("the causal mask and " if causal else "no causal mask and ") + (
        f"the last {pad} token{'s' if pad != 1 else ''} as padding" if pad else "no padding"
    )
    row = tuple(
        v if bool(a) else None
        for v, a in zip(trace.scaled[0, i].tolist(), mask[i].tolist(), strict=True)
    )
    keys = [j for j in range(T) if row[j] is not None] or [0]
    j = rng.choice(keys)
    hand, working = softmax_working(row, j, f"a_{i},{j}")
    text = " ".join(str(b) for b in sorted(blocked)) or "none"
    return (
        Drill(
            "mask",
            f"With {what}, which keys may query {i} ({labels[i]}) NOT attend to? Type their "
            "positions (like 3 4 5), or none.",
            Given(tuple(labels), (("position", tuple(range(T))),)),
            blocked,
            text,
            (
                f"Causal: query {i} sees keys 0 … {i} only." if causal else "No causal mask.",
                f"Padding: keys {T - pad} … {T - 1} are filler." if pad else "No padding.",
                f"Blocked: {text}.",
            ),
        ),
        number(
            f"Head 0, with {what}: query {i}'s scaled scores are below (blocked keys empty). "
            f"Compute its weight on key {j} ({labels[j]}).",  # stands alone: class mode asks it so
            Given(tuple(labels), ((f"s′ row {i}", row),)),
            softmax_weight(row, j),
            hand,
            working,
            f"a_{i},{j}",
        ),
    )
