"""Why divide by sqrt(d_k): the numbers behind lesson 4.

If q and k have independent N(0, 1) entries, q . k = sum of d_k products, each of variance 1,
so Var(q . k) = d_k. Dividing by sqrt(d_k) brings the variance back to 1; without it the softmax
of large scores saturates (one weight near 1, the rest near 0) and its gradient vanishes.

Lesson 4's check-yourself questions: `why_sqrt_dk_questions`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.drills import Drill, Given, f4, shown
from attention.questions import number, softmax_weight, softmax_working


@dataclass(frozen=True, eq=False)
class DotProductSample:
    """Dot products of random q, k with N(0, 1) entries, raw and scaled, for one d_k."""

    d_k: int
    raw: Tensor  # (n,) q . k
    scaled: Tensor  # (n,) q . k / sqrt(d_k)

    @property
    def raw_variance(self) -> float:
        return float(self.raw.var())

    @property
    def scaled_variance(self) -> float:
        return float(self.scaled.var())


def sample_dot_products(d_k: int, n: int, seed: int) -> DotProductSample:
    """n dot products q . k for q, k ~ N(0, I_{d_k}), fixed by the seed."""
    if d_k < 1 or n < 2:
        raise ValueError(f"need d_k >= 1 and at least 2 samples, got d_k={d_k}, n={n}")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=generator)  # (n, d_k)
    k = torch.randn(n, d_k, generator=generator)  # (n, d_k)
    raw = (q * k).sum(dim=-1)  # (n,)
    return DotProductSample(d_k, raw, raw / math.sqrt(d_k))


ONE_HOT = 0.99  # a softmax row whose largest weight is at least this has collapsed onto one key


@dataclass(frozen=True, eq=False)
class Saturation:
    """A softmax row of n keys at one temperature: its weights, entropy, largest weight,
    gradient size. (n, the row's length, is the number of keys one query sees.)"""

    scale: float  # multiplies the scores before the softmax (1/temperature)
    weights: Tensor  # (n,) one weight per key
    entropy: float  # in nats; log(n) is uniform, 0 is one-hot
    max_weight: float
    gradient_norm: float  # Frobenius norm of d softmax / d scores (the Jacobian)

    @property
    def normalised_entropy(self) -> float:
        """entropy / log n for a row of n keys: 1 for uniform weights, 0 for one-hot (1 when
        n = 1)."""
        n = self.weights.numel()
        return 1.0 if n == 1 else self.entropy / math.log(n)

    @property
    def one_hot(self) -> bool:
        """The row has collapsed onto one key: its largest weight is at least ONE_HOT."""
        return self.max_weight >= ONE_HOT


def softmax_scale(d_k: int, temperature: float = 1.0) -> float:
    """What the scores are multiplied by before the softmax: 1 / (temperature * sqrt(d_k))."""
    if d_k < 1 or not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"need d_k >= 1 and a positive temperature, got {d_k}, {temperature}")
    return 1 / (temperature * math.sqrt(d_k))


def softmax_saturation(scores: Tensor, scale: float) -> Saturation:
    """How peaked softmax(scores x scale) is, and how much gradient flows back through it.

    The Jacobian of softmax is diag(p) - p p^T; it tends to 0 as p becomes one-hot."""
    if scores.ndim != 1 or scores.numel() == 0:
        raise ValueError("scores must be one non-empty row")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    p = torch.softmax(scores.double() * scale, dim=-1)  # (n,) in float64: tiny values matter
    jacobian = torch.diag(p) - torch.outer(p, p)  # (n, n) d p / d (scaled scores)
    entropy = float(-(p * torch.log(p.clamp_min(1e-300))).sum())
    return Saturation(
        scale=scale, weights=p, entropy=entropy, max_weight=float(p.max()),
        gradient_norm=float(jacobian.norm()),
    )  # fmt: skip


def random_scores(t: int, d_k: int, seed: int) -> Tensor:
    """One row of raw scores q . k_j (t,) for a random N(0, 1) query and t keys: variance d_k."""
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(d_k, generator=generator)  # (d_k,)
    k = torch.randn(t, d_k, generator=generator)  # (t, d_k)
    return k @ q  # (t,)


# Check yourself (lesson 4)


def why_sqrt_dk_questions(seed: int, shown_d_ks: tuple[int, ...]) -> tuple[Drill, ...]:
    """Lesson 4: the spread of q·k at a d_k the page does not show, one live pair scaled, and
    how far an unscaled softmax collapses."""
    rng = random.Random(seed)
    d_k = rng.choice([d for d in (8, 32, 128, 2048) if d not in shown_d_ks] or [8])
    generator = torch.Generator().manual_seed(seed + 17)
    q, k = torch.randn(d_k, generator=generator), torch.randn(d_k, generator=generator)
    raw = float(q.double() @ k.double())
    root = math.sqrt(d_k)
    scores = random_scores(4, d_k, seed + 29)  # (4,) raw q·k_j, variance d_k
    row = tuple(scores.tolist())
    top = max(range(4), key=row.__getitem__)
    hand, working = softmax_working(row, top, "largest weight")
    return (
        number(
            f"q and k have d_k = {d_k} independent entries, each N(0, 1). What is the standard "
            "deviation of q · k?",
            None,
            root,
            shown(root),
            (f"Var(q · k) = d_k = {d_k}, so its standard deviation is √{d_k} = {f4(root)}.",),
            "the standard deviation",
        ),
        number(
            f"One such pair, drawn live, has q · k = {f4(raw)} at d_k = {d_k}. What is its "
            "scaled score q · k / √d_k?",
            None,
            raw / root,
            shown(raw) / shown(root),
            (f"{f4(raw)} / √{d_k} = {f4(raw)} / {f4(root)} = {f4(shown(raw) / shown(root))}",),
            "the scaled score",
        ),
        number(
            f"One query against 4 keys at d_k = {d_k}: its raw scores q · k_j are below. "
            "Without the 1/√d_k, what is the largest softmax weight?",
            Given(("key 0", "key 1", "key 2", "key 3"), (("q · k_j", row),)),
            softmax_weight(row, top),
            hand,
            (
                *working,
                f"Scaled by 1/√{d_k} the same row's largest weight would be "
                f"{f4(softmax_weight(tuple(v / root for v in row), top))}.",
            ),
            "the largest weight",
        ),
    )
