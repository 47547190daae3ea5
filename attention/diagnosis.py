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
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import torch
from torch import Tensor

# Through the package, never `attention.bugs.catalogue` directly: two script threads importing
# the package and a submodule at once deadlocked on their import locks (a class's first load).
from attention.bugs import BUGS, SILENT_BUGS, run_buggy
from attention.drills import TOLERANCE, Drill, Given, Mistake, f4
from attention.inputs import random_embeddings
from attention.layer import MultiHeadSelfAttention
from attention.ops import NEG_INF

# Silent, deterministic mistakes: dropout at eval draws at random, so it has no one number
QUESTION_SEED = 70_001  # the diagnostic's input stream, apart from the page's own
DIAGNOSTIC_BUGS = tuple(name for name in SILENT_BUGS if name != "dropout_at_eval")


@torch.no_grad()  # numbers to read, nothing to train
def mistaken_stages(
    layer: MultiHeadSelfAttention,
    x: Tensor,  # (T, C)
    mask: Tensor | None,  # (T, T) bool, True = may attend
    stage: str,
    mask_value: float = NEG_INF,
    steps: tuple[str, ...] | None = None,
) -> dict[str, Tensor]:
    """One stage of the forward as each mistake of the catalogue computes it: one buggy
    forward per mistake (only those replacing one of `steps`, when given), read for every
    entry at once."""
    return {
        name: run_buggy(name, layer, x, mask, mask_value=mask_value).stage(stage)
        for name in DIAGNOSTIC_BUGS
        if steps is None or BUGS[name].replaces in steps
    }


def merged(values: dict[str, float], right: float) -> tuple[Mistake, ...]:
    """The numbers the catalogue's mistakes give (`values`: bug name -> number), in the
    catalogue's order: those within the tolerance of each other merged into one choice, whose
    number is their mean (within the tolerance of each: they are within it of each other) and
    which names each with its own number; those within it of the right answer (or not finite)
    left out, since a student making them is right."""
    groups: list[list[tuple[str, float]]] = []
    for name, value in values.items():
        if not math.isfinite(value) or abs(value - right) <= 2 * TOLERANCE:
            continue
        group = next((g for g in groups if all(abs(v - value) <= TOLERANCE for _, v in g)), None)
        if group is None:
            groups.append([(name, value)])
        else:
            group.append((name, value))
    return tuple(
        Mistake(
            sum(v for _, v in group) / len(group),
            tuple(name for name, _ in group),
            tuple(BUGS[name].title for name, _ in group),
            tuple(v for _, v in group),
        )
        for group in groups
    )


def mistakes_at(
    mistaken: dict[str, Tensor], index: tuple[int, ...], right: float
) -> tuple[Mistake, ...]:
    """The numbers the catalogue's mistakes give for one entry (`mistaken`: mistaken_stages),
    merged (see `merged`)."""
    return merged({name: float(tensor[index]) for name, tensor in mistaken.items()}, right)


def step_mistakes(
    step: str, right: float, value: Callable[[Callable], float]
) -> tuple[Mistake, ...]:
    """A question that runs one step of the forward on its own numbers: what it gives with that
    step replaced by each of the catalogue's mistakes of that step, `value(mistake)` (the
    mistake's function, with the plain step's signature), merged (see `merged`)."""
    return merged(
        {
            name: value(BUGS[name].mistake)
            for name in DIAGNOSTIC_BUGS
            if BUGS[name].replaces == step
        },
        right,
    )


@torch.no_grad()
def scale_mistakes(dot: float, d_k: int, d_model: int, right: float) -> tuple[Mistake, ...]:
    """A scaled score s′ = (q · k) × scale: the scale chosen by each mistake of choose_scale
    (no scaling, 1/√d_model) instead of 1/√d_k."""
    return step_mistakes("choose_scale", right, lambda choose: dot * choose(d_k, d_model))


@torch.no_grad()
def softmax_mistakes(
    scaled: Tensor,  # (T, T) one head's scaled scores
    allowed: Tensor,  # (T, T) bool, True = may attend: the question's mask
    cell: tuple[int, int],
    right: float,
) -> tuple[Mistake, ...]:
    """A weight a_ij under a mask: the weights each mistake of mask_and_softmax computes from
    the head's scaled scores (softmax down the columns, the mask applied after the softmax)."""
    return step_mistakes(
        "mask_and_softmax",
        right,
        lambda mask_and_softmax: float(mask_and_softmax(scaled, allowed, NEG_INF)[1][cell]),
    )


# A question that hands the student the raw scores S = QKᵀ: only the steps after S can go wrong
# in their hands (splitting heads or projecting happened before the numbers they are given).
AFTER_SCORES = ("choose_scale", "build_causal_mask", "mask_and_softmax")


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
    from that input's raw scores; None when no query sees two keys. One forward: the numbers
    the classic mistakes give are computed when they are needed (`diagnosed`), since a page
    shows the question on every rerun and an answer is typed on few."""
    T = mask.shape[-1]
    x = question_input(T, layer.d_model, seed)  # (T, C)
    trace = layer(x, mask, mask_value=mask_value)
    allowed = mask.expand(trace.weights.shape)  # (H, T, T)
    two_or_more = allowed.sum(-1, keepdim=True) >= 2  # (H, T, 1): a row with a choice
    cells = (allowed & two_or_more).nonzero()  # (N, 3): every (h, i, j) worth asking
    if len(cells) == 0:
        return None
    pick = int(torch.randint(len(cells), (), generator=torch.Generator().manual_seed(seed)))
    h, i, j = cells[pick].tolist()
    right = float(trace.weights[h, i, j])
    d_k = trace.q.shape[-1]
    raw = trace.scores[h]  # (T, T)
    positions = tuple(str(t) for t in range(T))
    rows = (  # what the right answer and the classic mistakes read: row i, and column j
        (f"S row {i}", tuple(raw[i].tolist())),  # query i against every key
        (f"S column {j}", tuple(raw[:, j].tolist())),  # every query against key j
    )
    blocked = [k for k in range(T) if not bool(allowed[h, i, k])]
    return Drill(
        "number",
        f"The page's layer reads a new input (other tokens, the same weights and mask). Head {h}, "
        f"d_model = {layer.d_model}, d_k = {d_k}: from its raw scores S = QKᵀ (below: row {i}, "
        f"query {i} against every key, and column {j}, every query against key {j}), what "
        f"weight does query {i} give key {j}? "
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
        ),
        positions,
        diagnose=partial(cell_mistakes, layer, x, mask, (h, i, j), right, mask_value),
        percent=True,  # a weight: "34 %" is an answer, as lesson 8 says
    )


def cell_mistakes(
    layer: MultiHeadSelfAttention,
    x: Tensor,
    mask: Tensor,
    cell: tuple[int, int, int],
    right: float,
    mask_value: float,
) -> tuple[Mistake, ...]:
    """The numbers the catalogue's mistakes give for one weight (h, i, j), from the steps after
    the raw scores the question gives (AFTER_SCORES)."""
    stages = mistaken_stages(layer, x, mask, "weights", mask_value, AFTER_SCORES)
    return mistakes_at(stages, cell, right)


def diagnosed(drill: Drill) -> Drill:
    """The drill with the numbers its classic mistakes give, each said in its working (one
    buggy forward per mistake); a drill with nothing to diagnose is returned as it is."""
    if drill.diagnose is None or drill.mistakes:
        return drill
    found = drill.diagnose()
    return replace(
        drill,
        mistakes=found,
        working=(
            *drill.working,
            *(m.said() for m in found),
        ),
    )
