"""Sampling text from CharGPT, with and without a KV cache (the same text either way).

Without the cache every new character re-runs the model on the whole window. With it, each layer
keeps the keys and values of the characters already read, and a new character costs one query
row per layer (attention/kv_cache.py shows the same trick on one layer).

The model has learned positions 0 .. context - 1 only, so when the window is full both ways
keep its last half and go on from there (the cache is refilled from those characters).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.lm.corpus import decode, encode
from attention.lm.model import CharGPT
from attention.ops import dot_scores, merge_heads, softmax_rows, split_heads


@dataclass(frozen=True, eq=False)
class Sample:
    """Generated text: the prompt, what followed, and the seconds it took."""

    prompt: str
    new: str
    seconds: float

    @property
    def text(self) -> str:
        return self.prompt + self.new


def next_distribution(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float = 1.0
) -> Tensor:
    """p (vocab,) from one position's logits (vocab,): softmax(logits / temperature) over the
    top_k most likely characters (all when top_k is None), then over the smallest set of the
    likeliest whose probabilities reach top_p (nucleus sampling; 1.0 keeps them all), zero
    elsewhere."""
    if not (isinstance(temperature, (int, float)) and temperature > 0):
        raise ValueError(f"temperature must be a number above 0, got {temperature!r}")
    if top_k is not None and not (isinstance(top_k, int) and top_k >= 1):
        raise ValueError(f"top_k must be a whole number of at least 1, got {top_k!r}")
    if not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise ValueError(f"top_p must be a number in (0, 1], got {top_p!r}")
    scaled = logits / temperature  # (vocab,)
    if top_k is not None and top_k < len(logits):
        kth = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    p = torch.softmax(scaled, dim=-1)  # (vocab,)
    if top_p < 1:
        ordered, order = torch.sort(p, descending=True)  # (vocab,)
        before = torch.cumsum(ordered, 0) - ordered  # the mass of the likelier ones
        dropped = order[before >= top_p]  # kept: the likeliest until their sum reaches top_p
        p = p.index_fill(0, dropped, 0.0)
        p = p / p.sum()
    return p


def top_characters(p: Tensor, n: int) -> list[tuple[str, float]]:
    """The n most likely characters of a distribution p (vocab,) and their probabilities."""
    top = torch.topk(p, n)
    return [(decode([i]), float(v)) for i, v in zip(top.indices.tolist(), top.values, strict=True)]


@dataclass(frozen=True)
class NextCharacters:
    """The sampler's next character at one position: how many characters it can draw (those
    with a probability above 0), and the likeliest of them with their probabilities."""

    kept: int
    top: tuple[tuple[str, float], ...]  # at most `shown`, likeliest first, every one drawable


def next_characters(
    logits: Tensor, temperature: float, top_k: int | None, top_p: float, shown: int
) -> NextCharacters:
    """next_distribution's p (vocab,) from one position's logits (vocab,), summed up: the count
    of characters with p > 0 and the `shown` likeliest of them."""
    p = next_distribution(logits, temperature, top_k, top_p)  # (vocab,)
    kept = int((p > 0).sum())
    return NextCharacters(kept, tuple(top_characters(p, min(shown, kept))))


class Cache:
    """Per layer, the keys and values (1, H, t, d_head) of the characters read so far."""

    def __init__(self, model: CharGPT) -> None:
        self.model = model
        self.k: list[Tensor | None] = [None] * model.n_layers
        self.v: list[Tensor | None] = [None] * model.n_layers

    @property
    def length(self) -> int:
        return 0 if self.k[0] is None else self.k[0].shape[2]

    def read(self, token: int) -> Tensor:
        """Read one more character; its next-character logits (vocab,)."""
        model = self.model
        t = self.length
        resid = model.embed.weight[token] + model.pos.weight[t]  # (C,)
        resid = resid[None, None]  # (1, 1, C)
        for index, block in enumerate(model.blocks):
            attn = block.attn
            q_all, k_all, v_all = attn.project_qkv(block.ln_1(resid))  # 3 x (1, 1, C)
            q = split_heads(q_all, attn.n_heads)  # (1, H, 1, d_head)
            k_new = split_heads(k_all, attn.n_heads)
            v_new = split_heads(v_all, attn.n_heads)
            k = k_new if self.k[index] is None else torch.cat([self.k[index], k_new], 2)
            v = v_new if self.v[index] is None else torch.cat([self.v[index], v_new], 2)
            self.k[index], self.v[index] = k, v  # (1, H, t + 1, d_head)
            scaled = dot_scores(q, k) * (1 / attn.d_head**0.5)  # (1, H, 1, t + 1)
            allowed = torch.ones_like(scaled, dtype=torch.bool)  # every cached key is the past
            weights = softmax_rows(scaled, allowed)  # (1, H, 1, t + 1)
            out = attn.steps.project_out(merge_heads(weights @ v), attn.W_o)  # (1, 1, C)
            mid = resid + out
            resid = mid + block.mlp(block.ln_2(mid))
        return model.unembed(model.ln_f(resid))[0, 0]  # (vocab,)


@torch.no_grad()
def sample(
    model: CharGPT,
    prompt: str,
    n_new: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Sample:
    """n_new characters after the prompt, each drawn from next_distribution."""
    if not prompt:
        raise ValueError("the prompt needs at least one character")
    if isinstance(n_new, bool) or not isinstance(n_new, int) or n_new < 0:
        raise ValueError(f"n_new must be a whole number of at least 0, got {n_new!r}")
    ids = encode(prompt).tolist()
    keep = model.context // 2
    window = ids[-model.context :]
    start = time.perf_counter()
    cache = None
    new: list[int] = []
    for _ in range(n_new):
        if len(window) > model.context:
            window = window[-keep:]
            cache = None
        if use_cache:
            if cache is None:
                cache = Cache(model)
                for token in window[:-1]:
                    cache.read(token)
            logits = cache.read(window[-1])
        else:
            logits = model(torch.tensor([window])).logits[0, -1]  # (vocab,)
        p = next_distribution(logits, temperature, top_k, top_p)
        token = int(torch.multinomial(p, 1, generator=generator))
        new.append(token)
        window.append(token)
    return Sample(prompt, decode(new), time.perf_counter() - start)


def write_after(
    model: CharGPT,
    ids: Tensor,
    n_new: int,
    *,
    temperature: float,
    top_k: int | None,
    top_p: float,
    seed: int,
) -> Sample:
    """n_new characters after the characters the model read, ids (T,), drawn by `sample` with a
    generator seeded `seed`: the same seed and settings write the same text."""
    generator = torch.Generator().manual_seed(seed)
    return sample(model, decode(ids), n_new, temperature=temperature, top_k=top_k, top_p=top_p,
                  generator=generator)  # fmt: skip
