"""Generation with a KV cache: a causal layer run one token at a time.

Step t computes one query row, q_t, and appends k_t and v_t to the cache; attention is then
softmax(q_t K_cache^T / sqrt(d)) V_cache. Without the cache, step t would recompute K and V for
all t + 1 tokens. The outputs equal the full causal pass, row for row.

Lesson 10's check-yourself questions, `kv_cache_questions`, ask the cache's bytes.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.drills import Drill
from attention.layer import MultiHeadSelfAttention, merge_heads, seeded_layer, split_heads
from attention.masks import sliding_window_mask
from attention.ops import project_out
from attention.questions import whole
from attention.trace import AttentionTrace


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
        out = project_out(concat, layer.W_o)  # (1, 1, C)
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


def full_pass(
    layer: MultiHeadSelfAttention, x: Tensor, *, window: int | None = None
) -> AttentionTrace:
    """All T tokens of x (T, C) at once: under the causal mask, or `sliding_window_mask(T,
    window)` when window is given; what decoding must equal."""
    mask = "causal" if window is None else sliding_window_mask(x.shape[0], window)
    with torch.inference_mode():
        return layer(x, mask)


def full_pass_difference(
    layer: MultiHeadSelfAttention, x: Tensor, outputs: Tensor, *, window: int | None = None
) -> float:
    """max |outputs - the full pass| for a decoding `outputs` (T, C) of x (T, C): the full pass
    runs all T tokens at once under the causal mask, or `sliding_window_mask(T, window)`."""
    full = full_pass(layer, x, window=window).output  # (T, C)
    return float((outputs - full).abs().max())


def pool_kv_heads(layer: MultiHeadSelfAttention, n_kv_heads: int) -> MultiHeadSelfAttention:
    """A grouped-query layer made from a multi-head one as the GQA paper does (Ainslie et al.
    2023, section 2.1): each group of H / n_kv_heads consecutive key and value heads is
    mean-pooled into one; W_q and W_o are kept. With n_kv_heads = H it is the same layer."""
    if layer.n_kv_heads != layer.n_heads:
        raise ValueError(
            f"pooling starts from a multi-head layer (as many K/V heads as query heads), this "
            f"one has {layer.n_kv_heads} K/V heads for {layer.n_heads} query heads"
        )
    H, C, d_head = layer.n_heads, layer.d_model, layer.d_head
    # seeded_layer: its initial weights (all replaced below) come from a forked generator under
    # the seeding lock, so building it disturbs no caller's random state and no other thread's
    pooled = seeded_layer(
        0, C, H, bias=layer.W_q.bias is not None, out_proj=layer.W_o is not None,
        dropout=layer.dropout, n_kv_heads=n_kv_heads, steps=layer.steps,
    ).to(layer.W_q.weight.dtype)  # fmt: skip
    group = H // n_kv_heads  # query heads per K/V head
    with torch.no_grad():
        pooled.W_q.load_state_dict(layer.W_q.state_dict())
        if layer.W_o is not None:
            pooled.W_o.load_state_dict(layer.W_o.state_dict())
        for name in ("W_k", "W_v"):
            source, target = getattr(layer, name), getattr(pooled, name)
            weight = source.weight.view(n_kv_heads, group, d_head, C)  # rows of each head
            target.weight.copy_(weight.mean(dim=1).reshape(n_kv_heads * d_head, C))
            if source.bias is not None:
                bias = source.bias.view(n_kv_heads, group, d_head)
                target.bias.copy_(bias.mean(dim=1).reshape(n_kv_heads * d_head))
    return pooled.train(layer.training)


@dataclass(frozen=True, eq=False)
class GroupedDecode:
    """A multi-head layer pooled to fewer K/V heads, decoded with its cache."""

    layer: MultiHeadSelfAttention  # the grouped-query (or multi-query) layer
    generation: Generation  # its decoding: caches of n_kv_heads heads
    full_pass_gap: float  # max |its decoding - its own full causal pass|
    output_change: float  # max |its outputs - the multi-head layer's|: another layer


def decode_grouped(layer: MultiHeadSelfAttention, x: Tensor, n_kv_heads: int) -> GroupedDecode:
    """Pool the layer's K/V heads to n_kv_heads (pool_kv_heads), decode x (T, C) with a cache,
    and measure it against its own full pass and against the multi-head layer's outputs."""
    pooled = pool_kv_heads(layer, n_kv_heads)
    with torch.inference_mode():
        generation = generate_with_cache(pooled, x)
    gap = full_pass_difference(pooled, x, generation.outputs)
    change = full_pass_difference(layer, x, generation.outputs)
    return GroupedDecode(pooled, generation, gap, change)


def cache_bytes_per_token(
    n_kv_heads: int, d_head: int, bytes_per_number: int = 4, n_layers: int = 1
) -> int:
    """The K and V cache one token adds: 2 · n_kv_heads · d_head numbers in each layer."""
    return 2 * n_kv_heads * d_head * bytes_per_number * n_layers


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a published model, for its cache sizes."""

    name: str
    n_heads: int  # query heads per layer
    n_kv_heads: int  # key/value heads per layer
    d_head: int
    n_layers: int
    bytes_per_number: int  # 2 for 16-bit weights and cache


# Llama 2 70B (Touvron et al. 2023; params.json: dim 8192, n_heads 64, n_kv_heads 8, n_layers 80)
LLAMA_2_70B = ModelShape("Llama 2 70B", 64, 8, 128, 80, 2)


# Check yourself (lesson 10)


def kv_cache_questions(trace: AttentionTrace, seed: int) -> tuple[Drill, ...]:
    """Lesson 10: the K and V cache's bytes after t tokens (more than the page decodes), plain
    and grouped-query."""
    rng = random.Random(seed)
    n_heads, seq_len, d_head = trace.q.shape  # (H, T, d_head)
    t = seq_len + rng.randint(1, 60)
    plain = t * cache_bytes_per_token(n_heads, d_head)
    groups = [g for g in range(1, n_heads) if n_heads % g == 0] or [1]
    kv = rng.choice(groups)
    t2 = seq_len + rng.randint(61, 120)
    grouped = t2 * cache_bytes_per_token(kv, d_head)
    return (
        whole(
            f"This layer has H = {n_heads} heads of d_k = {d_head}, in float32 (4 bytes). "
            f"After {t} tokens, how many bytes do its K and V caches hold together?",
            None,
            plain,
            (
                f"Each token adds a key and a value per head: 2 × {n_heads} × {d_head} × 4 = "
                f"{cache_bytes_per_token(n_heads, d_head)} bytes.",
                f"{t} tokens × {cache_bytes_per_token(n_heads, d_head)} = {plain} bytes.",
            ),
        ),
        whole(
            f"The same layer with grouped-query attention, {kv} K/V head"
            f"{'s' if kv != 1 else ''} shared by the {n_heads} query heads: how many bytes after "
            f"{t2} tokens?",
            None,
            grouped,
            (
                f"Only the K/V heads are cached: 2 × {kv} × {d_head} × 4 = "
                f"{cache_bytes_per_token(kv, d_head)} bytes a token.",
                f"{t2} × {cache_bytes_per_token(kv, d_head)} = {grouped} bytes.",
            ),
        ),
    )
