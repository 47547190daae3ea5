"""Cross-attention: one sequence reads another (Vaswani et al., 2017, section 3.2.3).

    CrossAttention(Y, X) = Concat(head_1, ..., head_H) W_o,
    head_h = softmax(Q_h K_h^T / sqrt(d_k), source padding masked) V_h,
    Q = Y W_q (from the target, T x C),  K = X W_k,  V = X W_v (from the source, S x C)

The same steps as self-attention (attention/ops.py), with the queries taken from one sequence and
the keys and values from another: the scores are T x S, not square. No causal mask runs across:
every target position may read the whole source, which is written before decoding starts; only
the source's padding is masked, so no query reads a pad. (The decoder's own self-attention, over
the target, keeps its causal mask.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention.ops import NEG_INF, attend, linear, merge_heads, split_heads


@dataclass(frozen=True, eq=False)
class CrossTrace:
    """Every intermediate of one cross-attention, batched (B, ...)."""

    y: Tensor  # (B, T, C) the target: where the queries come from
    x: Tensor  # (B, S, C) the source: where the keys and values come from
    q: Tensor  # (B, H, T, d_k)
    k: Tensor  # (B, H, S, d_k)
    v: Tensor  # (B, H, S, d_k)
    scores: Tensor  # (B, H, T, S) = q k^T
    scaled: Tensor  # (B, H, T, S) = scores / sqrt(d_k)
    masked: Tensor  # (B, H, T, S): a padded source position's score set to -inf
    weights: Tensor  # (B, H, T, S): softmax over the source axis (each row sums to 1)
    heads: Tensor  # (B, H, T, d_k) = weights v
    concat: Tensor  # (B, T, C)
    output: Tensor  # (B, T, C) = concat W_o
    allowed: Tensor  # (B, 1, 1, S) bool: True for a real source position
    scale: float  # 1 / sqrt(d_k)


def source_allowed(source_pad: Tensor | None, B: int, S: int) -> Tensor:
    """(B, 1, 1, S) bool, True = a real source position, from a (B, S) bool padding mask
    (True = padding); ValueError if a source is all padding (its row of weights would be 0/0)."""
    if source_pad is None:
        return torch.ones(B, 1, 1, S, dtype=torch.bool)
    if not isinstance(source_pad, Tensor) or source_pad.dtype != torch.bool:
        raise ValueError(
            "source_pad must be a bool tensor (B, S), True where the source is padding"
        )
    if tuple(source_pad.shape) != (B, S):
        raise ValueError(
            f"source_pad must have shape (B, S) = {(B, S)}, got {tuple(source_pad.shape)}"
        )
    if bool(source_pad.all(dim=1).any()):
        raise ValueError(
            "a source is all padding: no position to read, so its softmax would divide 0 by 0"
        )
    return ~source_pad[:, None, None, :]  # (B, 1, 1, S)


class CrossAttention(nn.Module):
    """Multi-head cross-attention whose forward returns a CrossTrace. Weights created in the
    order W_q, W_k, W_v, W_o, as the self-attention layer's."""

    def __init__(self, d_model: int, n_heads: int, *, bias: bool = False) -> None:
        super().__init__()
        for name, value in (("d_model", d_model), ("n_heads", n_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)  # reads the target
        self.W_k = nn.Linear(d_model, d_model, bias=bias)  # reads the source
        self.W_v = nn.Linear(d_model, d_model, bias=bias)  # reads the source
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def check_inputs(self, y: Tensor, x: Tensor) -> None:
        for name, t, length in (("the target y", y, "T"), ("the source x", x, "S")):
            if not isinstance(t, Tensor) or t.ndim != 3 or not t.is_floating_point():
                raise ValueError(f"{name} must be a float tensor (B, {length}, C)")
            if t.shape[1] == 0:
                raise ValueError(f"{name} has no positions ({length} = 0)")
        if y.shape[-1] != self.d_model or x.shape[-1] != self.d_model:
            raise ValueError(
                f"the target and the source must both have d_model = {self.d_model} columns "
                f"(W_q reads the target, W_k and W_v the source); got target {y.shape[-1]}, "
                f"source {x.shape[-1]}"
            )
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"target and source batches differ: {y.shape[0]} and {x.shape[0]}")

    def forward(self, y: Tensor, x: Tensor, source_pad: Tensor | None = None) -> CrossTrace:
        """Target y (B, T, C) reads source x (B, S, C); source_pad (B, S) True = padding."""
        self.check_inputs(y, x)
        B, S = x.shape[:2]
        H = self.n_heads
        allowed = source_allowed(source_pad, B, S)  # (B, 1, 1, S): the same for every query
        q = split_heads(linear(y, self.W_q), H)  # (B, H, T, d_k): from the target
        k = split_heads(linear(x, self.W_k), H)  # (B, H, S, d_k): from the source
        v = split_heads(linear(x, self.W_v), H)  # (B, H, S, d_k)
        scale = 1.0 / math.sqrt(self.d_head)
        stages = attend(q, k, v, allowed, scale, NEG_INF)  # scores ... heads, (B, H, T, S)
        concat = merge_heads(stages["heads"])  # (B, T, C)
        output = linear(concat, self.W_o)  # (B, T, C)
        return CrossTrace(
            y=y, x=x, q=q, k=k, v=v, scores=stages["scores"], scaled=stages["scaled"],
            masked=stages["masked"], weights=stages["weights"], heads=stages["heads"],
            concat=concat, output=output, allowed=allowed, scale=scale,
        )  # fmt: skip
