"""Wrong answers with a cause. Peer instruction writes a question's wrong choices from the
mistakes students make; the bug hunt's catalogue (attention.bugs) holds the classic mistakes of
self-attention code, each one replaced step of the forward. Here a question's wrong answers are
computed by running each mistake at the question's own settings, never typed:

    for each mistake in the catalogue:   run the layer with that one step replaced
                                         read the entry the question asks for
    mistakes giving the same number      one choice, naming every one of them
    a mistake giving the right number    no choice (it cannot be told apart here)

The first question built this way: a weight of the page's own layer on a new input, from
its raw scores.
"""

from __future__ import annotations

import math
import random

import torch
from torch import Tensor

from attention.bugs.catalogue import BUGS, SILENT_BUGS, run_buggy
from attention.drills import TOLERANCE, Drill, Given, Mistake, f4
from attention.inputs import random_embeddings
from attention.layer import MultiHeadSelfAttention
from attention.ops import NEG_INF

# Silent, deterministic mistakes: dropout at eval draws at random, so it has no one number
QUESTION_SEED = 70_001  # the diagnostic's input stream, apart from the page's own
DIAGNOSTIC_BUGS = tuple(name for name in SILENT_BUGS if name != "dropout_at_eval")


@torch.no_grad()  # numbers to read, nothing to train
def mistakes_at(
    layer: MultiHeadSelfAttention,
    x: Tensor,  # (T, C)
    mask: Tensor | None,  # (T, T) bool, True = may attend
    stage: str,
    index: tuple[int, ...],
    right: float,
    mask_value: float = NEG_INF,
) -> tuple[Mistake, ...]:
    """The numbers the catalogue's mistakes give for one entry of one stage, in the catalogue's
    order: those within the tolerance of each other merged, those within it of the right answer
    (or not finite) left out."""
    found: list[Mistake] = []
    for name in DIAGNOSTIC_BUGS:
        trace = run_buggy(name, layer, x, mask, mask_value=mask_value)
        value = float(trace.stage(stage)[index])
        if not math.isfinite(value) or abs(value - right) <= 2 * TOLERANCE:
            continue
        same = next((m for m in found if abs(m.value - value) <= TOLERANCE), None)
        if same is None:
            found.append(Mistake(value, (name,), (BUGS[name].title,)))
        else:
            merged = Mistake(same.value, (*same.bugs, name), (*same.titles, BUGS[name].title))
            found[found.index(same)] = merged
    return tuple(found)


def named(mistake: Mistake) -> str:
    """A mistake's titles inside a sentence: "softmax over the wrong axis or …"."""
    return " or ".join(title[0].lower() + title[1:] for title in mistake.titles)


def question_input(T: int, d_model: int, seed: int) -> Tensor:
    """The diagnostic's own X (T, C): new tokens for the page's layer, so that the numbers it
    asks for are printed nowhere on the page."""
    return random_embeddings(T, d_model, QUESTION_SEED + seed).x


@torch.no_grad()
def weight_question(
    layer: MultiHeadSelfAttention,
    mask: Tensor,  # (T, T) bool, True = may attend: the page's mask
    seed: int,
    mask_value: float = NEG_INF,
) -> Drill | None:
    """A weight of the page's own layer, under its mask, on a new input (question_input), asked
    from that input's raw scores, with the numbers the classic mistakes give for it; None when
    every mistake gives the right number here (nothing to diagnose) or no query sees two keys."""
    T = mask.shape[-1]
    x = question_input(T, layer.d_model, seed)  # (T, C)
    trace = layer(x, mask, mask_value=mask_value)
    allowed = mask.expand(trace.weights.shape)  # (H, T, T)
    H = trace.weights.shape[0]
    rng = random.Random(seed)
    cells = [
        (h, i, j)
        for h in range(H)
        for i in range(T)
        if int(allowed[h, i].sum()) >= 2
        for j in range(T)
        if bool(allowed[h, i, j])
    ]
    rng.shuffle(cells)
    for h, i, j in cells[:8]:  # the first cell where mistakes give other numbers
        right = float(trace.weights[h, i, j])
        found = mistakes_at(layer, x, mask, "weights", (h, i, j), right, mask_value)
        if found:
            break
    else:
        return None
    d_k = trace.q.shape[-1]
    raw = trace.scores[h]  # (T, T)
    positions = tuple(str(t) for t in range(T))
    rows = tuple((f"S row {r}", tuple(raw[r].tolist())) for r in range(T))
    blocked = [k for k in range(T) if not bool(allowed[h, i, k])]
    return Drill(
        "number",
        f"The page's layer reads a new input (other tokens, the same weights and mask). Head {h}, "
        f"d_k = {d_k}: from its raw scores S = QKᵀ below, what weight does query {i} give key "
        f"{j}? "
        + (
            f"Query {i} may not attend to key{'s' if len(blocked) > 1 else ''} "
            f"{', '.join(str(k) for k in blocked)}."
            if blocked
            else f"Query {i} may attend to every key."
        ),
        Given(positions, rows),
        right,
        f4(right),
        (
            f"Scale row {i} by 1/√d_k = 1/√{d_k}, set the blocked keys to −∞, then softmax "
            f"along the row (over the keys): a_{i},{j} = {f4(right)}.",
            *(f"{f4(m.value)} is what {named(m)} gives." for m in found),
        ),
        positions,
        found,
    )
