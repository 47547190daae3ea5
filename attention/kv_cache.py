"""Generation with a KV cache: a causal layer run one token at a time.

Step t computes one query row, q_t, and appends k_t and v_t to the cache; attention is then
softmax(q_t K_cache^T / sqrt(d)) V_cache. Without the cache, step t would recompute K and V for
all t + 1 tokens. The outputs equal the full causal pass, row for row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.layer import MultiHeadSelfAttention, merge_heads, split_heads
from attention.masks import sliding_window_mask


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One generation step: the cache after it, this step's weights, and the work done."""

    t: int  # the position decoded
    k_cache: Tensor  # (H_kv, cached, d_head) after appending k_t
    v_cache: Tensor  # (H_kv, cached, d_head)
    weights: Tensor  # (H, cached): q_t's attention over the cached keys
    output: Tensor  # (C,) the layer's output row t
    macs_cached: int  # multiply-adds with the cache: one token's projections + 2·cached·C (+ W_o)
    macs_uncached: (
        int  # re-running the layer on all t + 1 tokens: (t+1)x the projections + 2(t+1)²C
    )
    cache_bytes: int  # K and V cache size after the step


@dataclass(frozen=True, eq=False)
class Generation:
    outputs: Tensor  # (T, C), equal to the full causal pass
    steps: tuple[DecodeStep, ...]


def generate_with_cache(
    layer: MultiHeadSelfAttention, x: Tensor, *, window: int | None = None
) -> Generation:
    """Run a causal layer over x (T, C) one token at a time with a KV cache. With `window`, the
    cache rolls: it keeps the last `window` keys and values (sliding-window attention), and the
    outputs equal the full pass under `sliding_window_mask(T, window)`."""
    layer.check_input(x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (T, C), got {tuple(x.shape)}")
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise ValueError(f"window must be a whole number of at least 1, got {window!r}")
    T, C = x.shape
    H, H_kv, d_head = layer.n_heads, layer.n_kv_heads, layer.d_head
    group = H // H_kv  # query heads sharing one cached key/value head (grouped-query attention)
    item = x.element_size()
    k_cache = torch.empty(H_kv, 0, d_head, dtype=x.dtype)  # (H_kv, cached, d_head)
    v_cache = torch.empty(H_kv, 0, d_head, dtype=x.dtype)
    steps, outputs = [], []
    for t in range(T):
        x_t = x[t : t + 1][None]  # (1, 1, C)
        q_all, k_all, v_all = layer.project_qkv(x_t)  # 3 x (1, 1, C)
        q_t = split_heads(q_all, H)[0]  # (H, 1, d_head)
        k_cache = torch.cat([k_cache, split_heads(k_all, H_kv)[0]], dim=1)  # (H_kv, cached + 1, d)
        v_cache = torch.cat([v_cache, split_heads(v_all, H_kv)[0]], dim=1)
        if window is not None and k_cache.shape[1] > window:  # the rolling cache drops the oldest
            k_cache, v_cache = k_cache[:, -window:], v_cache[:, -window:]
        keys = k_cache.repeat_interleave(group, dim=0)  # (H, cached, d_head)
        values = v_cache.repeat_interleave(group, dim=0)  # (H, cached, d_head)
        scores = (q_t @ keys.transpose(-2, -1)) / math.sqrt(d_head)  # (H, 1, cached)
        weights = torch.softmax(scores, dim=-1)  # (H, 1, cached)
        z = weights @ values  # (H, 1, d_head)
        concat = merge_heads(z[None])  # (1, 1, C)
        out = concat if layer.W_o is None else layer._linear(layer.W_o, concat)  # (1, 1, C)
        cached = k_cache.shape[1]
        project = C * C + 2 * C * H_kv * d_head  # one token through W_q, W_k, W_v
        out_proj = C * C if layer.W_o is not None else 0
        n = t + 1  # tokens so far
        seen = n if window is None else min(n, window)  # keys one query row sees
        steps.append(
            DecodeStep(
                t=t, k_cache=k_cache, v_cache=v_cache, weights=weights[:, 0],
                output=out[0, 0], macs_cached=project + 2 * cached * C + out_proj,
                macs_uncached=n * (project + 2 * seen * C + out_proj),
                cache_bytes=2 * cached * H_kv * d_head * item,
            )
        )  # fmt: skip
        outputs.append(out[0, 0])
    return Generation(outputs=torch.stack(outputs), steps=tuple(steps))


def full_pass_difference(
    layer: MultiHeadSelfAttention, x: Tensor, outputs: Tensor, *, window: int | None = None
) -> float:
    """max |outputs - the full pass| for a decoding `outputs` (T, C) of x (T, C): the full pass
    runs all T tokens at once under the causal mask, or `sliding_window_mask(T, window)`."""
    mask = "causal" if window is None else sliding_window_mask(x.shape[0], window)
    with torch.inference_mode():
        full = layer(x, mask).output  # (T, C)
    return float((outputs - full).abs().max())
