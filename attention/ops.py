"""Scaled dot-product attention as small step functions, each keeping its result.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (Vaswani et al., 2017, eq. 1)

Rows of every (T, T) matrix are query positions, columns are key positions. `Steps` names the
step functions the layer's forward is made of, in pipeline order; `PLAIN` holds this module's.
A classic mistake (attention.bugs) is one of them replaced by the function a student wrote.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention.masks import MaskSpec, resolve_mask
from attention.trace import AttentionTrace

NEG_INF = float("-inf")


# --- the steps, in pipeline order ------------------------------------------------------------


def project_qkv(
    x: Tensor, W_q: nn.Linear, W_k: nn.Linear, W_v: nn.Linear
) -> tuple[Tensor, Tensor, Tensor]:
    """Q, K, V = X W_q, X W_k, X W_v: (B, T, C) -> (B, T, C) each (K, V narrower if shared)."""
    return linear(x, W_q), linear(x, W_k), linear(x, W_v)


def split_heads(t: Tensor, n_heads: int) -> Tensor:
    """(B, T, C) -> (B, H, T, d_head): head h owns columns h*d_head .. (h+1)*d_head - 1."""
    B, T, C = t.shape
    return t.view(B, T, n_heads, C // n_heads).transpose(1, 2)  # (B, H, T, d_head)


def build_causal_mask(T: int) -> Tensor:
    """allowed = tril(ones(T, T)): query i may attend to keys 0..i; (T, T) bool, True = allowed."""
    return torch.tril(torch.ones(T, T), diagonal=0).bool()  # query i: keys 0..i


def dot_scores(q: Tensor, k: Tensor) -> Tensor:
    """scores = q k^T: (..., T_q, d) x (..., T_k, d) -> (..., T_q, T_k)."""
    return q @ k.transpose(-2, -1)


def choose_scale(d_head: int, d_model: int) -> float:
    """scale = 1/sqrt(d_head), the length of one head's q and k (not d_model = H d_head)."""
    return 1.0 / math.sqrt(d_head)


def scale_scores(scores: Tensor, scale: float) -> Tensor:
    """scaled = scores x scale (1/sqrt(d_k): keeps the variance near 1): (..., T_q, T_k)."""
    return scores * scale


def mask_and_softmax(
    scaled: Tensor,
    allowed: Tensor,
    mask_value: float,
) -> tuple[Tensor, Tensor]:
    """masked = scaled, mask_value where blocked; weights = softmax over keys: (..., T_q, T_k)."""
    masked = apply_mask(scaled, allowed, mask_value)  # blocked pairs hold mask_value
    weights = softmax_rows(masked, allowed, mask_value)  # over the keys: rows sum to 1
    return masked, weights


def dropout_weights(
    weights: Tensor, p: float, training: bool, generator: torch.Generator | None
) -> Tensor | None:
    """dropped = weights x keep / (1 - p), keep ~ Bernoulli(1 - p): (..., T_q, T_k), in training."""
    if not training or p == 0.0:
        return None  # nothing dropped: the heads mix the weights themselves
    keep = torch.rand(weights.shape, generator=generator, dtype=weights.dtype) >= p
    return weights * keep / (1.0 - p)  # (..., T_q, T_k)


def mix_values(weights: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """heads = weights v: (..., T_q, T_k) x (..., T_k, d_v) -> (..., T_q, d_v); k is unused."""
    return weights @ v


def merge_heads(heads: Tensor) -> Tensor:
    """(B, H, T, d_head) -> (B, T, C): the heads side by side again."""
    B, H, T, d_head = heads.shape
    return heads.transpose(1, 2).contiguous().view(B, T, H * d_head)  # (B, T, C)


def project_out(concat: Tensor, W_o: nn.Linear | None) -> Tensor:
    """output = concat W_o: (B, T, C) -> (B, T, C); concat itself for a layer without W_o."""
    return concat if W_o is None else linear(concat, W_o)


@dataclass(frozen=True)
class Steps:
    """The step functions the layer's forward is made of, by name, in pipeline order; each field
    holds a function with the signature of the plain step of that name above."""

    project_qkv: Callable[[Tensor, nn.Linear, nn.Linear, nn.Linear], tuple[Tensor, Tensor, Tensor]]
    split_heads: Callable[[Tensor, int], Tensor]
    build_causal_mask: Callable[[int], Tensor]
    dot_scores: Callable[[Tensor, Tensor], Tensor]
    choose_scale: Callable[[int, int], float]
    scale_scores: Callable[[Tensor, float], Tensor]
    mask_and_softmax: Callable[[Tensor, Tensor, float], tuple[Tensor, Tensor]]
    dropout_weights: Callable[[Tensor, float, bool, torch.Generator | None], Tensor | None]
    mix_values: Callable[[Tensor, Tensor, Tensor], Tensor]
    merge_heads: Callable[[Tensor], Tensor]
    project_out: Callable[[Tensor, nn.Linear | None], Tensor]


PLAIN = Steps(
    project_qkv=project_qkv,
    split_heads=split_heads,
    build_causal_mask=build_causal_mask,
    dot_scores=dot_scores,
    choose_scale=choose_scale,
    scale_scores=scale_scores,
    mask_and_softmax=mask_and_softmax,
    dropout_weights=dropout_weights,
    mix_values=mix_values,
    merge_heads=merge_heads,
    project_out=project_out,
)
STEP_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Steps))


# --- what the steps use ----------------------------------------------------------------------


def linear(x: Tensor, W: nn.Linear) -> Tensor:
    """x W^T + b in x's dtype, so float64 input stays float64: (..., C_in) -> (..., C_out)."""
    bias = None if W.bias is None else W.bias.to(x.dtype)
    return F.linear(x, W.weight.to(x.dtype), bias)


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


# --- the steps composed ----------------------------------------------------------------------


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    allowed: Tensor,
    scale: float,
    mask_value: float,
    *,
    dropout: float = 0.0,
    training: bool = False,
    generator: torch.Generator | None = None,
    steps: Steps = PLAIN,
) -> dict[str, Tensor | None]:
    """The attention steps on validated inputs, every intermediate kept in its own name."""
    scores = steps.dot_scores(q, k)  # (..., T_q, T_k)
    scaled = steps.scale_scores(scores, scale)  # (..., T_q, T_k)
    masked, weights = steps.mask_and_softmax(scaled, allowed, mask_value)  # (..., T_q, T_k)
    dropped = steps.dropout_weights(weights, dropout, training, generator)  # or None
    heads = steps.mix_values(weights if dropped is None else dropped, k, v)  # (..., T_q, d_v)
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
    scale = check_scale(scale, q.shape[-1])
    mask_value = check_mask_value(mask_value)
    stages = attend(q, k, v, allowed, scale, mask_value)
    return AttentionTrace(
        x=None, q=q, k=k, v=v, concat=None, output=stages["heads"], allowed=allowed,
        scale=scale, mask_value=mask_value, **stages,
    )  # fmt: skip
