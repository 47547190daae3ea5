"""What lesson 12 computes about the model reading a student's text: its loss per character,
with heads knocked out, where a head's query looks, the text written twice (what each copy
costs, the induction heads on it), and the lesson's check-yourself questions."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.drills import Drill, Given, f4
from attention.lm.corpus import GLYPHS, decode
from attention.lm.heads import HeadScore, head_scores
from attention.lm.model import CharGPT


@torch.no_grad()
def losses(model: CharGPT, ids: Tensor, ablate=()) -> Tensor:
    """(T - 1,) the cross-entropy (nats) of each next character of ids (T,), given the ones
    before it, with the heads in `ablate` knocked out."""
    logits = model(ids[None], ablate).logits[0]  # (T, vocab)
    return F.cross_entropy(logits[:-1], ids[1:], reduction="none")


@torch.inference_mode()
def mean_loss(model: CharGPT, ids: Tensor, ablate=()) -> float:
    """The mean cross-entropy (nats per character) of the next characters of ids (T,), T >= 2,
    with the heads in `ablate` knocked out: mean(losses(model, ids, ablate))."""
    return float(losses(model, ids, ablate).mean())


@dataclass(frozen=True)
class Attended:
    """A head's query and the key it gives its largest weight, with that weight."""

    query: int
    key: int
    weight: float


def attended_most(weights: Tensor, query: int) -> Attended:
    """Where query `query` of one head's weights (T, T) looks most: argmax of its row (the first
    of equal weights), and the weight there."""
    key = int(weights[query].argmax())
    return Attended(query, key, float(weights[query, key]))


def twice(ids: Tensor, context: int) -> Tensor:
    """The text written twice, each copy cut to half the context: (2 L,)."""
    half = ids[: context // 2]
    return torch.cat([half, half])


def glyph(token: int) -> str:
    c = decode([token])
    return GLYPHS.get(c, c)


@dataclass(frozen=True)
class CopyCost:
    """What each copy of a text written twice costs, in nats a character, to the `decimals` the
    page shows them: the saving is the difference of the two numbers as shown (a reader
    subtracts them), not of the unrounded ones."""

    first: float
    second: float
    decimals: int = 2

    @property
    def saved(self) -> float:
        """How much cheaper a character the second copy is (negative: dearer)."""
        return round(self.first - self.second, self.decimals)


def copy_cost(first: float, second: float, decimals: int = 2) -> CopyCost:
    """The two copies' costs (nats a character) rounded to `decimals`."""
    return CopyCost(round(first, decimals), round(second, decimals), decimals)


@dataclass(frozen=True, eq=False)
class TextTwice:
    """The model on a text written twice, each copy its first L characters (L at most half the
    context): each copy's loss per character, its first character not predicted (nothing
    announces a copy), every head's induction score on it, and every layer's weights."""

    ids: Tensor  # (2 L,)
    first: Tensor  # (L - 1,) nats: predicting characters 1 .. L - 1 of the first copy
    second: Tensor  # (L - 1,) nats: predicting characters 1 .. L - 1 of the second copy
    scores: tuple[HeadScore, ...]  # every head, layer by layer: the "induction" kind only
    weights: tuple[Tensor, ...]  # per layer (H, 2 L, 2 L)

    @property
    def copy_length(self) -> int:
        """L, the characters of one copy."""
        return len(self.ids) // 2

    @property
    def costed(self) -> bool:
        """Whether each copy has a character to predict after its first (L >= 2)."""
        return self.copy_length >= 2

    @property
    def glyphs(self) -> list[str]:
        """Its characters as the page draws them (a space as ␣, a newline as ⏎)."""
        return [glyph(t) for t in self.ids.tolist()]

    def cost(self, decimals: int = 2) -> CopyCost:
        """Each copy's mean loss per character, to `decimals` (ValueError when not costed)."""
        if not self.costed:
            raise ValueError("a copy of one character has nothing to predict after its first")
        return copy_cost(float(self.first.mean()), float(self.second.mean()), decimals)

    @property
    def induction_head(self) -> HeadScore:
        """The head with the best induction score on it (the first of equal scores)."""
        return max(self.scores, key=lambda s: s.scores["induction"])


@torch.inference_mode()
def read_twice(model: CharGPT, ids: Tensor) -> TextTwice:
    """The text ids (T,) written twice (`twice`: each copy at most half the context), read by
    the model: losses (2 L - 1,) split at the copies, induction scores, weights."""
    doubled = twice(ids, model.context)  # (2 L,)
    L = len(doubled) // 2
    per_char = losses(model, doubled)  # (2 L - 1,): entry i predicts character i + 1
    scores = head_scores(model, doubled[None], ("induction",))
    out = model(doubled[None])
    weights = tuple(t.weights[0] for t in out.traces)  # (H, 2 L, 2 L) each
    return TextTwice(doubled, per_char[: L - 1], per_char[L:], tuple(scores), weights)


def attends_most(weights: Tensor, labels: list[str], layer: int, head: int, i: int) -> Drill:
    """Which key does query i attend to most, from its row of weights (the head's map)?"""
    row = weights[i, : i + 1].tolist()  # causal: keys 0 .. i
    best = max(range(len(row)), key=row.__getitem__)
    return Drill(
        "whole",
        f"Layer {layer}, head {head}: which position does query {i} ({labels[i]}) attend to "
        "most? Type the key's position.",
        Given(tuple(labels[: i + 1]), ((f"weights of query {i}", tuple(row)),)),
        best,
        str(best),
        (
            f"Query {i}'s row: the largest weight is {f4(row[best])}, at key {best} "
            f"({labels[best]}).",
            "Under the causal mask it can only choose among keys 0 … i.",
        ),
    )


def top_k_probability(logits: Tensor, temperature: float, k: int, position: int) -> Drill:
    """The probability the sampler gives the most likely character, with top-k and a
    temperature, from the k largest logits (the others get 0)."""
    top = torch.topk(logits, k)
    values = [round(v, 2) for v in top.values.tolist()]
    chars = [glyph(t) for t in top.indices.tolist()]
    exps = [math.exp(v / temperature) for v in values]
    answer = exps[0] / sum(exps)
    return Drill(
        "number",
        f"After position {position}, the model's {k} largest logits are below. With top-k = {k} "
        f"and temperature {temperature:g}, what probability does the sampler give "
        f"{chars[0]!r}? (4 decimals)",
        Given(tuple(chars), (("logit", tuple(values)),)),
        answer,
        f4(answer),
        (
            f"Divide each logit by the temperature {temperature:g}, take exp, and normalise "
            f"over the top {k} only: e^({values[0]}/{temperature:g}) / sum = {f4(answer)}.",
        ),
    )


def induction_readings(tokens: list[int], i: int, j: int) -> tuple[tuple[float, str], ...]:
    """The wrong readings of the induction question for query i whose character occurred once
    before, at j: the earlier occurrence itself, the query itself, the character just before
    the query (a previous-token head's key). A position that is also the answer (j + 1) is not
    a wrong reading, so it is left out."""
    earlier = glyph(tokens[j])
    readings = (
        (j, f"{j} is the earlier {earlier!r} itself; an induction head looks one further, at "
            "the character that followed it"),
        (i, f"{i} is the query itself; an induction head looks back into the first copy"),
        (i - 1, f"{i - 1} is the character just before the query, where a previous-token head "
                f"looks; an induction head looks at what followed the earlier {earlier!r}"),
    )  # fmt: skip
    return tuple((float(p), words) for p, words in readings if p != j + 1)


def induction_question(ids: Tensor) -> Drill | None:
    """A text written twice (2 L,): for a query in the second copy whose character occurs once
    before it, which key does an induction head attend to? The position after that earlier
    occurrence. None when no character of the second copy occurs exactly once before it."""
    L = len(ids) // 2
    tokens = ids.tolist()
    for i in range(L, 2 * L):
        earlier = [j for j in range(i) if tokens[j] == tokens[i]]
        if len(earlier) == 1 and earlier[0] + 1 < i:
            j = earlier[0]
            return Drill(
                "whole",
                f"The text {decode(ids[:L])!r} is written twice ({2 * L} characters, the "
                f"second copy from position {L}). Query {i} is {glyph(tokens[i])!r}. Which key "
                "position does an induction head attend to from there?",
                None,
                j + 1,
                str(j + 1),
                (
                    f"{glyph(tokens[i])!r} occurred once before, at position {j}.",
                    f"An induction head looks at what followed it: position {j + 1} "
                    f"({glyph(tokens[j + 1])!r}), the character it then predicts comes next.",
                ),
                readings=induction_readings(tokens, i, j),
            )
    return None
