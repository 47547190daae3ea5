"""Lesson 13's check-yourself questions, on the shipped model's own numbers for a word.

Its diagnostic question offers the numbers cross-attention's own misconceptions give (not the
bug hunt's catalogue, which is about self-attention): a softmax over the target axis (as if each
source letter chose among the steps), Q taken from the source and K from the target (the map
transposed: with the scores given, its softmax runs over the target too, so the two give one
number), and a causal mask applied across (source position s blocked for step t < s).
"""

from __future__ import annotations

import math

import torch

from attention import questions
from attention.cross.model import EncoderDecoder, write
from attention.drills import TOLERANCE, Drill, Given, Mistake, f4, shown

# cross-attention's misconceptions: key -> title (the tally and the working name them)
MISCONCEPTIONS = {
    "cross_softmax_over_target": "Softmax over the target axis",
    "cross_swapped_qk": "Taking Q from the source and K from the target",
    "cross_causal_across": "A causal mask across",
}
ALIGNER = (1, 1)  # (decoder layer, head): the shipped model's aligner (tests/attention/test_cross)
# the head the questions read: not the one the page shows first (the aligner), whose weights
# table would hold question 1's answer
LAYER, HEAD = 0, 1


def step_labels(written: str) -> list[str]:
    """Row t of a decoder map: step t, named by the token it reads (<s>, then each letter)."""
    return ["0 <s>", *(f"{t} {c}" for t, c in enumerate(written, start=1))]


def scaled_map(model: EncoderDecoder, word: str) -> tuple[torch.Tensor, str]:
    """(T, S) scaled cross-attention scores of the aligner head for `word`, and what it wrote."""
    done = write(model, word)
    return done.output.cross[LAYER].scaled[0, HEAD], done.written


def cross_mistakes(scaled: torch.Tensor, t: int, s: int, right: float) -> tuple[Mistake, ...]:
    """The weight (t, s) each misconception computes from the scaled scores, merged where
    they give one number, left out where they give the right one."""
    over_target = float(torch.softmax(scaled[:, s], dim=0)[t])  # down the column
    causal = scaled[t].clone()
    causal[torch.arange(scaled.shape[1]) > t] = -math.inf  # step t may read s <= t only
    across = float(torch.softmax(causal, dim=0)[s])
    values = {
        "cross_softmax_over_target": over_target,
        "cross_swapped_qk": over_target,  # K Q^T = (Q K^T)^T: softmax over its rows = down ours
        "cross_causal_across": across,
    }
    groups: list[list[tuple[str, float]]] = []
    for name, value in values.items():
        if abs(value - right) <= 2 * TOLERANCE:
            continue
        group = next((g for g in groups if all(abs(v - value) <= TOLERANCE for _, v in g)), None)
        (groups.append([(name, value)]) if group is None else group.append((name, value)))
    return tuple(
        Mistake(
            sum(v for _, v in g) / len(g), tuple(n for n, _ in g),
            tuple(MISCONCEPTIONS[n] for n, _ in g), tuple(v for _, v in g),
        )
        for g in groups
    )  # fmt: skip


def cross_questions(model: EncoderDecoder, word: str) -> tuple[Drill, ...]:
    """Three questions on the model reversing `word`: a weight from the scaled scores (with
    the misconceptions' numbers), the size of the map, and which letter a step reads."""
    scaled, written = scaled_map(model, word)
    T, S = scaled.shape
    t = 1 if T > 1 else 0
    s = int(torch.softmax(scaled[t], dim=0).argmax())  # the letter step t reads most
    row = tuple(float(v) for v in scaled[t])
    truth = float(torch.softmax(scaled[t], dim=0)[s])
    _, working = questions.softmax_working(row, s, f"a[{t}, {s}]")
    mistakes = cross_mistakes(scaled, t, s, truth)
    given = Given(
        tuple(f"{j} {c}" for j, c in enumerate(word)),
        tuple((label, tuple(shown(float(v)) for v in scaled[i]))
              for i, label in enumerate(step_labels(written)[:T])),
    )  # fmt: skip
    weight = Drill(
        "number",
        f"Decoder layer {LAYER}, head {HEAD}: its scaled cross-attention scores for the source "
        f"'{word}' are given, one row per decoder step. What weight does step {t} put on "
        f"source position {s} ('{word[s]}')? (A decimal, or a percentage.)",
        given, truth, f4(truth), (*working, *(m.said() for m in mistakes)),
        mistakes=mistakes, percent=True,
    )  # fmt: skip
    size = questions.whole(
        f"The model reads the source '{word}' ({S} letters) and its decoder has read <s> and "
        f"the {T - 1} letters it wrote ({T} steps). How many scores does one head's "
        "cross-attention map hold (no pads)?",
        None, T * S,
        (f"one row per decoder step (T = {T}), one column per source position (S = {S})",
         f"T × S = {T} × {S} = {T * S}"),
    )  # fmt: skip
    size = Drill(
        size.kind, size.prompt, size.given, size.answer, size.answer_text, size.working,
        readings=(
            (float(T * T), f"{T * T} is T × T: the decoder's own self-attention map, not this one"),
            (float(S * S), f"{S * S} is S × S: the encoder's self-attention map, not this one"),
        ),
    )  # fmt: skip
    last = T - 2 if T > 2 else 0  # the last letter's step
    reads = int(torch.softmax(scaled[last], dim=0).argmax())
    where = questions.whole(
        f"From the same scores: which source position (0 to {S - 1}) does step {last} read "
        "most?",
        given, reads,
        (f"row {last}'s largest scaled score is at position {reads}: the softmax keeps the order",
         f"step {last} writes '{word[len(word) - 1 - last]}', the letter at source position "
         f"{len(word) - 1 - last}: "
         + ("this head reads it most" if reads == len(word) - 1 - last
            else "the aligner reads it; this head reads elsewhere")),
    )  # fmt: skip
    return (weight, size, where)
