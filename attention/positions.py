"""Where word order comes from: attention itself is blind to it (permute the tokens and the
output rows permute the same way), so position is added to X (sinusoidal encodings) or rotated
into q and k (RoPE). Lesson 9's check-yourself questions: `position_questions`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from attention.drills import Drill, Given, f4, factor, shown
from attention.questions import number, whole

if TYPE_CHECKING:
    from attention.layer import MultiHeadSelfAttention
    from attention.masks import MaskSpec
    from attention.trace import AttentionTrace


def sinusoidal_positions(t: int, d_model: int) -> Tensor:
    """PE (T, C): PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(same)."""
    position = torch.arange(t, dtype=torch.float32)[:, None]  # (T, 1)
    i2 = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(C/2),)
    angle = position / torch.pow(10000.0, i2 / d_model)  # (T, ceil(C/2))
    pe = torch.zeros(t, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe


def rope_angles(positions: Tensor, d: int, base: float = 10000.0) -> Tensor:
    """theta (T, d/2): pair i of position p turns by p * base^(-2i/d)."""
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    return positions.double()[:, None] * inv_freq[None, :]  # (T, d/2)


def rope_input(x: Tensor, positions: Tensor | None, base: float) -> tuple[Tensor, Tensor]:
    """Check x (..., T, d) for RoPE and return cos, sin (T, d/2) of its angles, in x's dtype."""
    if not isinstance(x, Tensor) or x.ndim < 2 or not x.is_floating_point():
        raise ValueError("x must be a floating-point tensor of shape (..., T, d)")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of features: d must be even, got {d}")
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape (T,) = ({T},), got {tuple(positions.shape)}")
    theta = rope_angles(positions, d, base)  # (T, d/2)
    return torch.cos(theta).to(x.dtype), torch.sin(theta).to(x.dtype)


def rope(x: Tensor, positions: Tensor | None = None, base: float = 10000.0) -> Tensor:
    """RoPE with interleaved pairs (RoFormer, Su et al. 2021; Meta's Llama `apply_rotary_emb`,
    which reads (x_2i, x_2i+1) as one complex number): each pair of the vector at position p is
    rotated by the angle p * base^(-2i/d). x (..., T, d) with d even; positions default to
    0..T-1. Then (R_m q) . (R_n k) depends on m - n only."""
    cos, sin = rope_input(x, positions, base)  # (T, d/2) each
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rotated = torch.empty_like(x)
    rotated[..., 0::2] = x_even * cos - x_odd * sin
    rotated[..., 1::2] = x_even * sin + x_odd * cos
    return rotated


def rope_half(x: Tensor, positions: Tensor | None = None, base: float = 10000.0) -> Tensor:
    """RoPE with half-split pairs (Hugging Face's Llama: x * cos + rotate_half(x) * sin, where
    rotate_half(x) = cat(-x2, x1)): feature i turns with feature i + d/2 by the angle
    p * base^(-2i/d). x (..., T, d) with d even. The same rotation as `rope` on the features
    reordered by `half_split_order(d)`; on the same features it gives other numbers."""
    cos, sin = rope_input(x, positions, base)  # (T, d/2) each
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]  # (..., T, d/2) each
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)  # (..., T, d)


def half_split_order(d: int) -> Tensor:
    """P (d,) = [0, 2, ..., d-2, 1, 3, ..., d-1]: the features reordered so that interleaved
    pairs become half-split pairs, rope_half(x[..., P]) = rope(x)[..., P]. Hugging Face's Llama
    conversion applies it to each head's rows of W_q and W_k ("permute for sliced rotary")."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 2 or d % 2:
        raise ValueError(
            f"RoPE rotates pairs of features: d must be even and at least 2, got {d!r}"
        )
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])  # (d,)


@dataclass(frozen=True, eq=False)
class RopePairings:
    """RoPE's two pairings on the same q and k (T, d): one rotation, two orders of features."""

    order: Tensor  # (d,): half_split_order(d)
    interleaved: Tensor  # (T, d): rope(q), pairs (x_2i, x_2i+1)
    half_split: Tensor  # (T, d): rope_half(q) on the same features, pairs (x_i, x_i+d/2)
    interleaved_permuted: Tensor  # (T, d): rope(q)[:, order], the interleaved in P's order
    half_split_permuted: Tensor  # (T, d): rope_half(q[:, order]), equal to it
    same_features_gap: float  # max |rope_half(q) - rope(q)|: other numbers
    permuted_gap: float  # max |rope_half(q[:, P]) - rope(q)[:, P]|: 0, the same rotation
    score_gap: float  # max |scores of the half-split on P q, P k - scores of the interleaved|


def compare_rope_pairings(q: Tensor, k: Tensor, base: float = 10000.0) -> RopePairings:
    """Rotate q and k (T, d) with both pairings and measure how far apart they are: on the same
    features, and after reordering the features by half_split_order(d) (then equal), and the
    scores (R q)(R k)^T each pairing gives (equal: a permutation of both leaves dot products)."""
    if not isinstance(k, Tensor) or not isinstance(q, Tensor) or q.shape != k.shape:
        raise ValueError("q and k must be tensors of the same shape (T, d)")
    order = half_split_order(q.shape[-1])
    interleaved = rope(q, base=base)  # (T, d)
    half_split = rope_half(q, base=base)  # (T, d)
    half_split_permuted = rope_half(q[..., order], base=base)  # (T, d)
    scores = interleaved @ rope(k, base=base).T  # (T, T)
    scores_half = half_split_permuted @ rope_half(k[..., order], base=base).T  # (T, T)
    return RopePairings(
        order=order, interleaved=interleaved, half_split=half_split,
        interleaved_permuted=interleaved[..., order], half_split_permuted=half_split_permuted,
        same_features_gap=float((half_split - interleaved).abs().max()),
        permuted_gap=float((half_split_permuted - interleaved[..., order]).abs().max()),
        score_gap=float((scores_half - scores).abs().max()),
    )  # fmt: skip


def random_permutation(t: int, seed: int) -> Tensor:
    """A permutation of 0..T-1 fixed by the seed (not the identity when T > 1)."""
    perm = torch.randperm(t, generator=torch.Generator().manual_seed(seed))
    if t > 1 and bool((perm == torch.arange(t)).all()):
        perm = perm.roll(1)
    return perm


def equivariance_gap(outputs: Tensor, permuted_outputs: Tensor, perm: Tensor) -> float:
    """max |Attn(P X) - P Attn(X)|: 0 when attention is permutation-equivariant."""
    return float((permuted_outputs - outputs[perm]).abs().max())


@dataclass(frozen=True, eq=False)
class Shuffled:
    """A layer on X and on X with its rows shuffled by perm (P X)."""

    perm: Tensor  # (T,): new position i takes token perm[i]
    outputs: Tensor  # (T, C): Attn(X)
    permuted_outputs: Tensor  # (T, C): Attn(P X)
    gap: float  # max |Attn(P X) - P Attn(X)|: 0 up to rounding when attention is equivariant
    row_gaps: Tensor  # (T,): per new position i, max_c |Attn(P X)[i, c] - Attn(X)[perm[i], c]|


def changed_rows(shuffle: Shuffled, atol: float = 1e-5) -> list[int]:
    """The new positions whose output row is not the shuffled original's (row gap above atol)."""
    return [i for i, gap in enumerate(shuffle.row_gaps.tolist()) if gap > atol]


def shuffle_tokens(
    layer: MultiHeadSelfAttention, x: Tensor, perm: Tensor, mask: MaskSpec = None
) -> Shuffled:
    """Run the layer on x (T, C) and on x[perm] under the same mask, and measure how far
    Attn(P X) is from P Attn(X)."""
    with torch.inference_mode():
        outputs = layer(x, mask).output  # (T, C)
        permuted_outputs = layer(x[perm], mask).output  # (T, C)
    gap = equivariance_gap(outputs, permuted_outputs, perm)
    row_gaps = (permuted_outputs - outputs[perm]).abs().amax(dim=-1)  # (T,)
    return Shuffled(perm, outputs, permuted_outputs, gap, row_gaps)


def rope_scores(q: Tensor, k: Tensor, t: int, base: float = 10000.0) -> Tensor:
    """(T, T): the score of query vector q at position m against key vector k at position n,
    after RoPE; constant along each diagonal (it depends on m - n only). q, k (d,)."""
    qs = rope(q.expand(t, -1), base=base)  # (T, d): q at every position
    ks = rope(k.expand(t, -1), base=base)  # (T, d)
    return qs @ ks.T  # (T, T)


# Check yourself (lesson 9)


def position_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 9: where a shuffled token's output goes, a sinusoidal entry past the sequence,
    and one RoPE rotation at a position past it."""
    rng = random.Random(seed)
    T = len(labels)
    C = trace.x.shape[-1]
    page = random_permutation(T, seed)
    perm = random_permutation(T, seed + 101)
    if T > 2 and bool((perm == page).all()):
        perm = perm.roll(1)
    i = rng.randrange(T)
    pos = T + rng.randint(1, 20)
    col = rng.randrange(C)
    questions = [shuffle_question(perm, labels, i), sinusoidal_question(C, pos, col)]
    if trace.q.shape[-1] % 2 == 0:
        questions.append(rope_question(trace, rng.randrange(T), pos))
    return tuple(questions)


def shuffle_question(perm: Tensor, labels, i: int) -> Drill:
    """With no mask, attention moves outputs with their tokens: which row of Attn(PX) holds
    Attn(X)[i]?"""
    T = len(labels)
    r = int((perm == i).nonzero()[0, 0])
    return whole(
        f"No mask. X is shuffled: row r of PX is token perm[r] of X (perm below). Output "
        f"row {i} of Attn(X) ({labels[i]}) turns up as which row of Attn(PX)?",
        Given(tuple(f"r={p}" for p in range(T)), (("perm[r]", tuple(perm.tolist())),)),
        r,
        (
            f"perm[{r}] = {i}: row {r} of PX is token {i}, and with no mask attention moves "
            f"outputs with their tokens, so Attn(PX)[{r}] = Attn(X)[{i}].",
        ),
    )


def sinusoidal_question(C: int, pos: int, col: int) -> Drill:
    """The sinusoidal entry PE[pos, col] for a position past the sequence."""
    pe = float(sinusoidal_positions(pos + 1, C)[pos, col])
    pair = col // 2
    angle = pos / 10000 ** (2 * pair / C)
    fn = "sin" if col % 2 == 0 else "cos"
    hand = math.sin(shown(angle)) if fn == "sin" else math.cos(shown(angle))
    return number(
        f"C = {C}. What is the sinusoidal position entry PE[{pos}, {col}], for a token at "
        f"position {pos} (past this sequence)? Angles are in radians.",
        None,
        pe,
        hand,
        (
            f"Column {col} is pair i = {pair}: angle = {pos} / 10000^({2 * pair}/{C}) = "
            f"{f4(angle)}",
            f"PE[{pos}, {col}] = {fn}({f4(angle)}) = {f4(hand)}",
        ),
        f"PE[{pos}, {col}]",
    )


def rope_question(trace: AttentionTrace, j: int, pos: int) -> Drill:
    """RoPE, head 0: query j's first pair moved to position pos, where pair 0 turns by pos
    radians; the rotated q₀."""
    a, b = trace.q[0, j, 0].item(), trace.q[0, j, 1].item()
    theta = float(rope_angles(torch.tensor([pos]), trace.q.shape[-1])[0, 0])  # pos radians
    truth = a * math.cos(theta) - b * math.sin(theta)
    c, s = shown(math.cos(theta)), shown(math.sin(theta))
    hand = shown(a) * c - shown(b) * s
    return number(
        f"RoPE, head 0: query {j}'s first pair is (q₀, q₁) = ({f4(a)}, {f4(b)}). Moved "
        f"to position {pos}, pair 0 turns by {pos} radians. What is the rotated q₀?",
        None,
        truth,
        hand,
        (
            f"q₀′ = q₀ cos θ − q₁ sin θ with θ = {pos}: cos θ = {f4(c)}, sin θ = {f4(s)}",
            f"q₀′ = {factor(a)} × {factor(c)} − {factor(b)} × {factor(s)} = {f4(hand)}",
        ),
        "q₀′",
    )
