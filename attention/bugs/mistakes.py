"""The classic mistakes, each written as a student writes it: the plain step of attention/ops.py
with its signature and every line kept but one (sometimes two) written wrong.

The catalogue says which step each one replaces; the lesson shows the two functions' diff."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attention.ops import apply_mask, softmax_rows

# --- split_heads -----------------------------------------------------------------------------


def split_without_transpose(t: Tensor, n_heads: int) -> Tensor:
    """Reads (B, T, C) as (B, H, T, d_head) in memory order: each "head" holds pieces of tokens."""
    B, T, C = t.shape
    return t.view(B, n_heads, T, C // n_heads)  # the right shape, the wrong numbers


# --- build_causal_mask -----------------------------------------------------------------------


def mask_off_by_one(T: int) -> Tensor:
    """tril one diagonal too high: query i may also attend to key i + 1, the next token."""
    return torch.tril(torch.ones(T, T), diagonal=1).bool()  # query i: keys 0..i+1


def mask_blocks_self(T: int) -> Tensor:
    """tril one diagonal too low: no query may attend to its own key."""
    return torch.tril(torch.ones(T, T), diagonal=-1).bool()  # query i: keys 0..i-1


def mask_inverted(T: int) -> Tensor:
    """The blocked mask (True = blocked, nn.MultiheadAttention's convention) where True = allowed
    is expected: each query attends only to the future."""
    return torch.tril(torch.ones(T, T), diagonal=0) == 0  # True = blocked


# --- choose_scale ----------------------------------------------------------------------------


def scale_by_d_model(d_head: int, d_model: int) -> float:
    """1/sqrt(d_model): sqrt(H) times too small with H heads."""
    return 1.0 / math.sqrt(d_model)


def no_scaling(d_head: int, d_model: int) -> float:
    """No scaling: the scores stay sqrt(d_head) times too large."""
    return 1.0


# --- mask_and_softmax ------------------------------------------------------------------------


def softmax_over_queries(
    scaled: Tensor, allowed: Tensor, mask_value: float
) -> tuple[Tensor, Tensor]:
    """The softmax over the queries (dim=-2): each column sums to 1, not each row."""
    masked = apply_mask(scaled, allowed, mask_value)  # blocked pairs hold mask_value
    weights = torch.softmax(masked, dim=-2)  # over the queries: each column sums to 1
    return masked, weights


def mask_after_softmax(scaled: Tensor, allowed: Tensor, mask_value: float) -> tuple[Tensor, Tensor]:
    """The softmax over every key, the blocked ones zeroed after: rows sum to less than 1."""
    masked = scaled  # nothing masked before the softmax
    weights = torch.softmax(masked, dim=-1).masked_fill(~allowed, 0.0)  # mask after
    return masked, weights


def fill_1e9_fp16(scaled: Tensor, allowed: Tensor, mask_value: float) -> tuple[Tensor, Tensor]:
    """-1e9 as the fill under mixed precision: float16 stops at ±65504, so PyTorch raises."""
    masked = scaled.half().masked_fill(~allowed, -1e9)  # float16 under autocast
    weights = softmax_rows(masked, allowed, mask_value)  # over the keys: rows sum to 1
    return masked, weights


# --- dropout_weights -------------------------------------------------------------------------


def dropout_at_eval(
    weights: Tensor, p: float, training: bool, generator: torch.Generator | None
) -> Tensor | None:
    """Dropout that ignores training: model.eval() still drops weights."""
    if p == 0.0:
        return None  # nothing dropped: the heads mix the weights themselves
    keep = torch.rand(weights.shape, generator=generator, dtype=weights.dtype) >= p
    return weights * keep / (1.0 - p)  # (..., T_q, T_k)


# --- mix_values ------------------------------------------------------------------------------


def mix_with_keys(weights: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """heads = weights k: the keys averaged instead of the values (W_v is never used)."""
    return weights @ k


# --- merge_heads -----------------------------------------------------------------------------


def merge_without_transpose(heads: Tensor) -> Tensor:
    """Reads (B, H, T, d_head) as (B, T, C) in memory order: rows mix tokens and heads."""
    B, H, T, d_head = heads.shape
    return heads.reshape(B, T, H * d_head)  # (B, T, C), the wrong numbers on each row


def view_without_contiguous(heads: Tensor) -> Tensor:
    """view on the transposed heads: PyTorch raises for H > 1 and T > 1."""
    B, H, T, d_head = heads.shape
    return heads.transpose(1, 2).view(B, T, H * d_head)  # (B, T, C)


# --- project_out -----------------------------------------------------------------------------


def no_output_projection(concat: Tensor, W_o: nn.Linear | None) -> Tensor:
    """W_o forgotten: the heads are never mixed."""
    return concat  # W_o is never applied
