"""Scaled dot-product attention as small step functions, each keeping its result.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (Vaswani et al., 2017, eq. 1)

Rows of every (T, T) matrix are query positions, columns are key positions.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attention.masks import MaskSpec, resolve_mask
from attention.trace import AttentionTrace

NEG_INF = float("-inf")


def dot_scores(q: Tensor, k: Tensor) -> Tensor:
    """scores = q k^T: (..., T_q, d) x (..., T_k, d) -> (..., T_q, T_k)."""
    return q @ k.transpose(-2, -1)


def scale_scores(scores: Tensor, scale: float) -> Tensor:
    """scaled = scores x scale, scale = 1/sqrt(d_k) by default: keeps the variance near 1."""
    return scores * scale


def apply_mask(scaled: Tensor, allowed: Tensor, mask_value: float = NEG_INF) -> Tensor:
    """masked = scaled where allowed, mask_value where blocked (one pass over the T x T grid)."""
    fill = torch.tensor(mask_value, dtype=scaled.dtype)
    return torch.where(allowed, scaled, fill)


def softmax_rows(masked: Tensor, allowed: Tensor, mask_value: float = NEG_INF) -> Tensor:
    """weights = softmax over the allowed keys of each row; blocked keys get exactly 0, and a row
    with no allowed key gets all zeros (as PyTorch's SDPA), never NaN.

    The softmax runs on -inf fills whatever mask_value `masked` shows, so a -1e9 fill can never
    leak weight onto blocked keys (see `naive_softmax` for what it would do)."""
    logits = masked if mask_value == NEG_INF else masked.masked_fill(~allowed, NEG_INF)
    weights = torch.softmax(logits, dim=-1)  # exp(-inf) = 0; NaN in rows with no allowed key
    if bool(allowed.any(dim=-1).all()):
        return weights  # every row has a key: blocked weights are already exactly 0
    return weights.masked_fill(~allowed, 0.0)


def naive_softmax(masked: Tensor) -> Tensor:
    """softmax(masked) as a from-scratch implementation computes it: a fully blocked row gives
    NaN with a -inf fill and a uniform 1/T_k leak with a -1e9 fill. For teaching only."""
    return torch.softmax(masked, dim=-1)


def dropout_weights(weights: Tensor, p: float, generator: torch.Generator | None) -> Tensor:
    """Inverted dropout on the attention weights: zero each with probability p, scale by 1/(1-p)."""
    keep = torch.rand(weights.shape, generator=generator, dtype=weights.dtype) >= p
    return weights * keep / (1.0 - p)


def mix_values(weights: Tensor, v: Tensor) -> Tensor:
    """heads = weights v: (..., T_q, T_k) x (..., T_k, d) -> (..., T_q, d)."""
    return weights @ v


def check_scale(scale: float | None, d_k: int) -> float:
    """The scale to use: 1/sqrt(d_k) by default; a given one must be positive and finite."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ValueError(f"scale must be a number, got {type(scale).__name__}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be positive and finite, got {scale}")
    return float(scale)


def check_mask_value(mask_value: float) -> float:
    """Blocked positions must hold -inf or a negative number (-1e9 in many tutorials)."""
    if isinstance(mask_value, bool) or not isinstance(mask_value, (int, float)):
        raise ValueError(f"mask_value must be a number, got {type(mask_value).__name__}")
    if math.isnan(mask_value) or mask_value >= 0:
        raise ValueError(f"mask_value must be -inf or a negative number, got {mask_value}")
    return float(mask_value)


def check_finite(name: str, tensor: Tensor, hint: str = "") -> None:
    """ValueError when a tensor holds NaN or infinity, naming where it appeared."""
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"{name} contains NaN or infinite values{hint}")


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    allowed: Tensor,
    scale: float,
    mask_value: float,
    dropout: float = 0.0,
    generator: torch.Generator | None = None,
) -> dict[str, Tensor | None]:
    """The attention steps on validated inputs, every intermediate kept in its own name."""
    scores = dot_scores(q, k)  # (..., T_q, T_k)
    scaled = scale_scores(scores, scale)  # (..., T_q, T_k)
    masked = apply_mask(scaled, allowed, mask_value)  # (..., T_q, T_k)
    weights = softmax_rows(masked, allowed, mask_value)  # (..., T_q, T_k)
    dropped = dropout_weights(weights, dropout, generator) if dropout > 0 else None
    heads = mix_values(weights if dropped is None else dropped, v)  # (..., T_q, d_v)
    # An overflow anywhere upstream (q k^T beyond the dtype's range) ends as NaN here; checking
    # the small (T, d) result costs far less than checking every (T, T) stage.
    hint = f": q k^T overflowed {scores.dtype}, the inputs are too large; scale them down"
    check_finite("the attention output", heads, hint)
    return dict(
        scores=scores, scaled=scaled, masked=masked, weights=weights, dropped=dropped, heads=heads
    )


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: MaskSpec = None,
    *,
    scale: float | None = None,
    mask_value: float = NEG_INF,
) -> AttentionTrace:
    """softmax(q k^T x scale, masked) v for q (..., T_q, d), k (..., T_k, d), v (..., T_k, d_v).

    Returns the trace with x and concat None and output = heads; `allowed` has the mask."""
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        if not isinstance(tensor, Tensor) or tensor.ndim < 2:
            raise ValueError(f"{name} must be a tensor of shape (..., T, d)")
        if not tensor.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got {tensor.dtype}")
        if tensor.shape[-2] == 0:
            raise ValueError(f"{name} is an empty sequence: T must be at least 1")
        check_finite(name, tensor)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k need the same last dimension, got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v need the same length T_k, got {k.shape[-2]} and {v.shape[-2]}")
    target = (*q.shape[:-1], k.shape[-2])  # (..., T_q, T_k)
    allowed = resolve_mask(mask, target)
    steps = attend(q, k, v, allowed, check_scale(scale, q.shape[-1]), check_mask_value(mask_value))
    return AttentionTrace(
        x=None, q=q, k=k, v=v, concat=None, output=steps["heads"], allowed=allowed,
        scale=check_scale(scale, q.shape[-1]), mask_value=float(mask_value), **steps,
    )  # fmt: skip
