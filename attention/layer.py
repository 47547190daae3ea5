"""MultiHeadSelfAttention: the layer of "Attention Is All You Need", returning every intermediate.

MultiHead(X) = Concat(head_1, ..., head_H) W_o,  head_h = Attention(X W_q^h, X W_k^h, X W_v^h)

The forward is the step functions of attention/ops.py composed, in the order of `Steps`; a layer
built with other steps (attention.bugs: one replaced by a student's) runs those instead.
"""

from __future__ import annotations

import threading

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention.masks import MaskSpec, resolve_mask
from attention.ops import (
    NEG_INF,
    PLAIN,
    Steps,
    attend,
    check_finite,
    check_mask_value,
    check_scale,
    merge_heads,
    split_heads,
)
from attention.trace import AttentionTrace

__all__ = [
    "MultiHeadSelfAttention",
    "head_columns",
    "merge_heads",
    "seeded_layer",
    "split_heads",
    "unbatch",
]


def head_columns(d_model: int, n_heads: int, head: int) -> range:
    """The columns of Q (and K, V, concat) that belong to one head."""
    d_head = d_model // n_heads
    return range(head * d_head, (head + 1) * d_head)


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention whose forward returns an AttentionTrace.

    The projections are created in the order W_q, W_k, W_v, W_o, so `torch.manual_seed(s)` right
    before construction fixes the weights exactly as the classic tutorials do. The forward runs
    `steps` (attention/ops.py's PLAIN unless given others)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        *,
        bias: bool = False,
        out_proj: bool = True,
        dropout: float = 0.0,
        n_kv_heads: int | None = None,
        steps: Steps = PLAIN,
    ) -> None:
        for name, value in (("d_model", d_model), ("n_heads", n_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if d_model % n_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by n_heads ({n_heads}) so every head "
                "gets the same number of columns"
            )
        if not (isinstance(dropout, (int, float)) and 0.0 <= dropout < 1.0):
            raise ValueError(f"dropout must lie in [0, 1), got {dropout!r}")
        kv = n_heads if n_kv_heads is None else n_kv_heads
        if isinstance(kv, bool) or not isinstance(kv, int) or kv < 1 or n_heads % kv:
            raise ValueError(
                f"n_kv_heads must be a whole number that divides n_heads ({n_heads}): each "
                f"key/value head serves a group of query heads; got {n_kv_heads!r}"
            )
        if not isinstance(steps, Steps):
            raise ValueError(f"steps must be a Steps record, got {type(steps).__name__}")
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.n_kv_heads = kv  # grouped-query attention when fewer than n_heads; 1 = multi-query
        self.dropout = float(dropout)
        d_kv = kv * self.d_head  # K and V are narrower when heads share them
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_kv, bias=bias)
        self.W_v = nn.Linear(d_model, d_kv, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias) if out_proj else None
        self.steps = steps  # the forward's step functions (attention/ops.py)

    def project_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Q, K, V = X W_q, X W_k, X W_v: three (B, T, C) tensors."""
        return self.steps.project_qkv(x, self.W_q, self.W_k, self.W_v)

    def project_qkv_fused(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The same Q, K, V from one fused C -> 3C projection, as nanoGPT's c_attn does."""
        W_qkv = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])  # (3C, C)
        biases = [layer.bias for layer in (self.W_q, self.W_k, self.W_v)]
        b_qkv = None if biases[0] is None else torch.cat(biases)  # (3C,)
        qkv = F.linear(x, W_qkv.to(x.dtype), None if b_qkv is None else b_qkv.to(x.dtype))
        d_kv = self.n_kv_heads * self.d_head
        q, k, v = qkv.split([self.d_model, d_kv, d_kv], dim=-1)  # (B, T, C), 2 x (B, T, d_kv)
        return q, k, v

    def check_input(self, x: Tensor) -> None:
        """ValueError unless x is a finite float tensor of shape (T, C) or (B, T, C)."""
        if not isinstance(x, Tensor):
            raise ValueError(f"x must be a tensor, got {type(x).__name__}")
        if x.ndim not in (2, 3):
            raise ValueError(f"x must have shape (T, C) or (B, T, C), got {tuple(x.shape)}")
        if x.shape[-1] != self.d_model:
            raise ValueError(
                f"x's last dimension must be d_model = {self.d_model}, got {x.shape[-1]}"
            )
        if x.shape[-2] == 0 or (x.ndim == 3 and x.shape[0] == 0):
            raise ValueError("x is an empty sequence: T (and B) must be at least 1")
        if not x.is_floating_point():
            raise ValueError(f"x must be a floating-point tensor, got {x.dtype}")
        check_finite("x", x)

    def forward(
        self,
        x: Tensor,
        mask: MaskSpec = None,
        *,
        mask_value: float = NEG_INF,
        scale: float | None = None,
        generator: torch.Generator | None = None,
    ) -> AttentionTrace:
        """Self-attention of x (T, C) or (B, T, C); returns every intermediate.

        Dropout (training mode only) draws from `generator`, or torch's global generator."""
        self.check_input(x)
        steps = self.steps
        batched = x.ndim == 3
        x3 = x if batched else x.unsqueeze(0)  # (B, T, C)
        B, T, C = x3.shape
        H = self.n_heads
        if isinstance(mask, str) and mask == "causal":
            allowed = steps.build_causal_mask(T)  # (T, T)
        else:
            allowed = resolve_mask(mask, (B, H, T, T))  # broadcasts to (B, H, T, T)
        if scale is None:
            scale = steps.choose_scale(self.d_head, C)
        else:
            scale = check_scale(scale, self.d_head)
        mask_value = check_mask_value(mask_value)

        q_all, k_all, v_all = steps.project_qkv(x3, self.W_q, self.W_k, self.W_v)  # 3 x (B, T, C)
        q = steps.split_heads(q_all, H)  # (B, H, T, d_head)
        k = steps.split_heads(k_all, self.n_kv_heads)  # (B, H_kv, T, d_head)
        v = steps.split_heads(v_all, self.n_kv_heads)  # (B, H_kv, T, d_head)
        group = H // self.n_kv_heads  # query heads per key/value head
        k_shared = k.repeat_interleave(group, dim=1)  # (B, H, T, d_head): head h uses h // group
        v_shared = v.repeat_interleave(group, dim=1)  # (B, H, T, d_head)
        stages = attend(
            q, k_shared, v_shared, allowed, scale, mask_value,
            dropout=self.dropout, training=self.training, generator=generator, steps=steps,
        )  # fmt: skip
        concat = steps.merge_heads(stages["heads"])  # (B, T, C)
        output = steps.project_out(concat, self.W_o)  # (B, T, C)

        trace = AttentionTrace(
            x=x3, q=q, k=k, v=v, concat=concat, output=output, allowed=allowed, scale=scale,
            mask_value=mask_value, **stages,
        )  # fmt: skip
        return trace if batched else unbatch(trace)


def unbatch(trace: AttentionTrace) -> AttentionTrace:
    """The same trace without the leading batch axis of size 1."""

    def drop(t: Tensor | None) -> Tensor | None:
        return None if t is None else t[0]

    allowed = trace.allowed
    if allowed.ndim == 4:
        allowed = allowed[0]
    return AttentionTrace(
        x=drop(trace.x), q=drop(trace.q), k=drop(trace.k), v=drop(trace.v),
        scores=drop(trace.scores), scaled=drop(trace.scaled), masked=drop(trace.masked),
        weights=drop(trace.weights), heads=drop(trace.heads), concat=drop(trace.concat),
        output=drop(trace.output), allowed=allowed, scale=trace.scale,
        mask_value=trace.mask_value, dropped=drop(trace.dropped),
    )  # fmt: skip


# nn.Linear draws its initial weights from torch's global generator; the lock keeps two threads
# (two students on one server) from interleaving between the seed and the draws.
_SEEDING = threading.Lock()


def seeded_layer(seed: int, d_model: int, n_heads: int, **options) -> MultiHeadSelfAttention:
    """`torch.manual_seed(seed)` right before construction, as the tutorials do, without
    disturbing the caller's global random state or racing another thread."""
    with _SEEDING, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MultiHeadSelfAttention(d_model, n_heads, **options)
