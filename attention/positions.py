"""Where word order comes from: attention itself is blind to it (permute the tokens and the
output rows permute the same way), so position is added to X (sinusoidal encodings) or rotated
into q and k (RoPE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from attention.layer import MultiHeadSelfAttention
    from attention.masks import MaskSpec


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


def rope(x: Tensor, positions: Tensor | None = None, base: float = 10000.0) -> Tensor:
    """RoPE (RoFormer, Su et al. 2021): each pair (x_2i, x_2i+1) of the vector at position p is
    rotated by the angle p * base^(-2i/d). x (..., T, d) with d even; positions default to
    0..T-1. Then (R_m q) . (R_n k) depends on m - n only."""
    if not isinstance(x, Tensor) or x.ndim < 2 or not x.is_floating_point():
        raise ValueError("x must be a floating-point tensor of shape (..., T, d)")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of features: d must be even, got {d}")
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape (T,) = ({T},), got {tuple(positions.shape)}")
    theta = rope_angles(positions, d, base)  # (T, d/2)
    cos, sin = torch.cos(theta).to(x.dtype), torch.sin(theta).to(x.dtype)  # (T, d/2)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    rotated = torch.empty_like(x)
    rotated[..., 0::2] = x_even * cos - x_odd * sin
    rotated[..., 1::2] = x_even * sin + x_odd * cos
    return rotated


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


def shuffle_tokens(
    layer: MultiHeadSelfAttention, x: Tensor, perm: Tensor, mask: MaskSpec = None
) -> Shuffled:
    """Run the layer on x (T, C) and on x[perm] under the same mask, and measure how far
    Attn(P X) is from P Attn(X)."""
    with torch.inference_mode():
        outputs = layer(x, mask).output  # (T, C)
        permuted_outputs = layer(x[perm], mask).output  # (T, C)
    gap = equivariance_gap(outputs, permuted_outputs, perm)
    return Shuffled(perm, outputs, permuted_outputs, gap)


def rope_scores(q: Tensor, k: Tensor, t: int, base: float = 10000.0) -> Tensor:
    """(T, T): the score of query vector q at position m against key vector k at position n,
    after RoPE; constant along each diagonal (it depends on m - n only). q, k (d,)."""
    qs = rope(q.expand(t, -1), base=base)  # (T, d): q at every position
    ks = rope(k.expand(t, -1), base=base)  # (T, d)
    return qs @ ks.T  # (T, T)
