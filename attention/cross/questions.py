"""Lesson 13's check-yourself questions, on the shipped model's own numbers for a word.

Its diagnostic question offers the numbers cross-attention's own misconceptions give (not the
bug hunt's catalogue, which is about self-attention): a softmax over the target axis (as if each
source letter chose among the steps), Q taken from the source and K from the target (the map
transposed: with the scores given, its softmax runs over the target too, so the two give one
number), and a causal mask applied across (source position s blocked for step t < s). Its
other two name their tempting wrong readings: the map's size with the step that reads <s> left
out, or another map's size; the position of the letter a step writes where the question asks
where one head reads. Every working is computed from what the model wrote and where each head
put its weight.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from attention import questions
from attention.cross.model import EncoderDecoder, Written, write
from attention.drills import Drill, Given, Mistake, f4, shown

# cross-attention's misconceptions: key -> title (the tally and the working name them)
MISCONCEPTIONS = {
    "cross_softmax_over_target": "Softmax over the target axis",
    "cross_swapped_qk": "Taking Q from the source and K from the target",
    "cross_causal_across": "A causal mask over the source, as on the decoder's own map",
}
TYPED_HINT = "(A decimal, or a percentage.)"  # how a typed weight may be written
ALIGNER = (1, 1)  # (decoder layer, head): the shipped model's aligner (tests/attention/test_cross)
# the head the questions read: not the one the page shows first (the aligner), whose weights
# table would hold question 1's answer
LAYER, HEAD = 0, 1


def step_labels(written: str) -> list[str]:
    """Row t of a decoder map: step t, named by the token it reads (<s>, then each letter)."""
    return ["0 <s>", *(f"{t} {c}" for t, c in enumerate(written, start=1))]


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
    return questions.grouped_mistakes(values, right, MISCONCEPTIONS)


def readings(answer: int, named: list[tuple[int, str]], tail: str) -> tuple[tuple[float, str], ...]:
    """Wrong readings of a whole-number question: each number with what gives it (readings that
    give one number merged, none that gives the answer), then `tail`."""
    merged: dict[int, list[str]] = {}
    for value, what in named:
        if value != answer and what not in merged.get(value, []):
            merged.setdefault(value, []).append(what)
    return tuple(
        (float(v), f"{v} is {', also '.join(whats)}: {tail}") for v, whats in merged.items()
    )


def weight_question(done: Written, word: str) -> Drill:
    """Question 1: a weight of the questions' head from its scaled scores, with the numbers
    cross-attention's misconceptions give."""
    scaled = done.output.cross[LAYER].scaled[0, HEAD]  # (T, S)
    T = scaled.shape[0]
    t = 1 if T > 1 else 0
    s = int(torch.softmax(scaled[t], dim=0).argmax())  # the letter step t reads most
    row = tuple(float(v) for v in scaled[t])
    truth = float(torch.softmax(scaled[t], dim=0)[s])
    _, working = questions.softmax_working(row, s, f"a[{t}, {s}]")
    mistakes = cross_mistakes(scaled, t, s, truth)
    return Drill(
        "number",
        f"Decoder layer {LAYER}, head {HEAD}: its scaled cross-attention scores for the source "
        f"'{word}' are given, one row per decoder step. What weight does step {t} put on "
        f"source position {s} ('{word[s]}')? {TYPED_HINT}",
        given_scores(done, word), truth, f4(truth), (*working, *(m.said() for m in mistakes)),
        mistakes=mistakes, percent=True,
    )  # fmt: skip


def given_scores(done: Written, word: str) -> Given:
    scaled = done.output.cross[LAYER].scaled[0, HEAD]  # (T, S)
    return Given(
        tuple(f"{j} {c}" for j, c in enumerate(word)),
        tuple((label, tuple(shown(float(v)) for v in scaled[i]))
              for i, label in enumerate(step_labels(done.written)[: scaled.shape[0]])),
    )  # fmt: skip


def size_question(done: Written, word: str) -> Drill:
    """Question 2: the map's size from what the model wrote (T is not given: one step per token
    read, <s> first)."""
    T, S = done.output.cross[LAYER].weights.shape[-2:]
    letters = len(done.written)
    then = "then </s>" if done.ended else "and is stopped there, with no </s>"
    working = (
        f"one row per decoder step; a step reads one token and writes the next: step 0 reads "
        f"<s>, then one step reads each of the {letters} letters written (the last of them "
        + ("writes </s>" if done.ended else "would write the next letter, where writing stops")
        + f"), so T = 1 + {letters} = {T}",
        f"one column per source position: S = {S}",
        f"T × S = {T} × {S} = {T * S}",
    )
    drill = questions.whole(
        f"The model reads the source '{word}' and writes '{done.written}', {then}, one token a "
        "step, each step reading the token written before it (the first reads <s>). How many "
        "scores does one head's cross-attention map over the whole writing hold (no pads)?",
        None, T * S, working,
    )  # fmt: skip
    wrong = [
        ((T - 1) * S, "(T − 1) × S, a row per letter written, leaving out the step that reads <s>"),
        (S * S, "S × S, the size of the encoder's self-attention map"),
        (T * T, "T × T, the size of the decoder's own causal self-attention map"),
    ]
    return replace(
        drill,
        readings=readings(
            T * S, wrong, "the map is one row per step, T, by one column per source position, S"
        ),
    )


def where_question(done: Written, word: str) -> Drill:
    """Question 3: where the questions' head reads at the step that writes the last letter, the
    working computed from what the model wrote and where each head put its weight."""
    scaled = done.output.cross[LAYER].scaled[0, HEAD]  # (T, S)
    S = scaled.shape[1]
    last = max(len(done.written) - 1, 0)  # the step that writes the last letter
    reads = int(torch.softmax(scaled[last], dim=0).argmax())
    writes = done.wrote[last]
    at = word.find(writes)  # -1: not a source letter (</s>)
    aligner, _ = done.reads(*ALIGNER, last)
    this, lead = f"layer {LAYER}, head {HEAD}", f"layer {ALIGNER[0]}, head {ALIGNER[1]}"
    written = f"step {last} writes '{writes}'" + (
        f", the letter at source position {at}" if at >= 0 else ", not a letter of the source"
    )
    verdict = (
        "this head reads the letter its step writes"
        if reads == at
        else "this head reads another position than the letter its step writes"
    )
    working = (
        f"row {last}'s largest scaled score is at position {reads} ('{word[reads]}'): the "
        "softmax keeps the order, so that position gets the most weight",
        f"{written}; the aligner ({lead}) puts most weight on position {aligner}, this head "
        f"({this}) on position {reads}: {verdict}",
    )
    drill = questions.whole(
        f"From the same scores: which source position (0 to {S - 1}) does step {last} read most?",
        given_scores(done, word), reads, working,
    )  # fmt: skip
    named = []
    if at >= 0:
        named.append((at, f"the position of the letter step {last} writes, '{writes}'"))
    named.append((aligner, f"where the aligner ({lead}) puts most weight at step {last}"))
    if S - 1 - last >= 0:
        named.append((S - 1 - last, f"S − 1 − t = {S} − 1 − {last}, the reversal's rule"))
    tail = (
        f"the question asks where this head ({this}) puts most weight: at row {last}'s largest "
        "score"
    )
    return replace(drill, readings=readings(reads, named, tail))


def cross_questions(model: EncoderDecoder, word: str) -> tuple[Drill, ...]:
    """Three questions on the model reversing `word`: a weight from the scaled scores (with
    the misconceptions' numbers), the size of the map, and which letter a step reads."""
    done = write(model, word)
    return (weight_question(done, word), size_question(done, word), where_question(done, word))
