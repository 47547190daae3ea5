"""CharGPT: a small GPT whose every attention layer is this package's MultiHeadSelfAttention.

    resid_0   = E[ids] + P[positions]                                  (n, T, C)
    mid_l     = resid_l + MultiHead_l(LN1_l(resid_l))   causal        (n, T, C)
    resid_l+1 = mid_l + MLP_l(LN2_l(mid_l))            C -> 4C -> C  (n, T, C)
    logits    = LN_f(resid_L) U                                        (n, T, vocab)

Pre-LayerNorm blocks as in GPT-2 and nanoGPT's model.py. Each layer's AttentionTrace is kept,
so a lesson can show any intermediate of any layer on a student's text; trace.x is the
layer-normed residual the attention read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention.layer import MultiHeadSelfAttention
from attention.tiny.model import check_token_ids, knock_out
from attention.trace import AttentionTrace


@dataclass(frozen=True)
class LMSize:
    """The architecture: layers, heads per layer, width C and context T."""

    n_layers: int
    n_heads: int
    d_model: int
    context: int


@dataclass(frozen=True, eq=False)
class LMOutput:
    """What the model computed: the logits and one AttentionTrace per layer."""

    logits: Tensor  # (n, T, vocab)
    traces: tuple[AttentionTrace, ...]  # one per layer


class Block(nn.Module):
    """One pre-LayerNorm transformer block: attention, then an MLP, each added to the stream."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, n_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, resid: Tensor, heads_off: list[int]) -> tuple[Tensor, AttentionTrace]:
        trace = self.attn(self.ln_1(resid), "causal")  # (n, T, C) in, trace out
        if heads_off:
            trace = knock_out(self.attn, trace, heads_off)
        mid = resid + trace.output  # (n, T, C)
        return mid + self.mlp(self.ln_2(mid)), trace  # (n, T, C)


class CharGPT(nn.Module):
    """A character-level GPT small enough to train on two CPU cores."""

    def __init__(self, vocab_size: int, size: LMSize) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.size = size
        C = size.d_model
        self.embed = nn.Embedding(vocab_size, C)  # E: token -> vector
        self.pos = nn.Embedding(size.context, C)  # P: position -> vector
        self.blocks = nn.ModuleList(Block(C, size.n_heads) for _ in range(size.n_layers))
        self.ln_f = nn.LayerNorm(C)
        self.unembed = nn.Linear(C, vocab_size, bias=False)  # U: vector -> logits

    @property
    def n_layers(self) -> int:
        return self.size.n_layers

    @property
    def heads(self) -> tuple[int, ...]:
        return (self.size.n_heads,) * self.size.n_layers

    @property
    def context(self) -> int:
        return self.size.context

    def check_ids(self, ids: Tensor) -> None:
        """ValueError unless ids is an integer tensor (n, T) of known tokens, 1 <= T <= context."""
        check_token_ids(ids, self.context, self.vocab_size)

    def forward(self, ids: Tensor, ablate: Iterable[tuple[int, int]] = ()) -> LMOutput:
        """Logits (n, T, vocab) and every layer's trace; `ablate` zeroes those heads' Z."""
        self.check_ids(ids)
        off = set(ablate)
        for layer, head in off:
            if not (0 <= layer < self.n_layers and 0 <= head < self.size.n_heads):
                raise ValueError(f"no head L{layer}H{head} in a model of {self.heads} heads")
        T = ids.shape[1]
        resid = self.embed(ids) + self.pos(torch.arange(T))  # (n, T, C)
        traces = []
        for index, block in enumerate(self.blocks):
            resid, trace = block(resid, sorted(h for layer, h in off if layer == index))
            traces.append(trace)
        logits = self.unembed(self.ln_f(resid))  # (n, T, vocab)
        return LMOutput(logits=logits, traces=tuple(traces))


def parameter_groups(model: CharGPT) -> dict[str, int]:
    """The model's parameters counted by part: the embeddings (characters and positions), the
    attention projections W_q, W_k, W_v, W_o (no biases), the MLPs (C -> 4 C -> C, with
    biases), the LayerNorms, and the output layer (its own weights, not tied to the embedding)."""
    groups = {"embeddings": 0, "attention": 0, "mlp": 0, "layer norms": 0, "output": 0}
    for name, p in model.named_parameters():
        part = name.split(".")
        if part[0] in ("embed", "pos"):
            key = "embeddings"
        elif part[0] == "unembed":
            key = "output"
        elif "attn" in part:
            key = "attention"
        elif "mlp" in part:
            key = "mlp"
        elif part[0] == "ln_f" or any(p_.startswith("ln_") for p_ in part):
            key = "layer norms"
        else:
            raise ValueError(f"a parameter of no known part: {name}")
        groups[key] += p.numel()
    return groups
