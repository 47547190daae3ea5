"""TinyTransformer: token and position embeddings, attention-only layers built from this package's
own MultiHeadSelfAttention (so every layer yields its AttentionTrace), a residual stream, and an
unembedding.

    resid_0 = E[ids] + P[positions]                      (n, T, C)
    resid_l+1 = resid_l + MultiHead_l(resid_l)           (n, T, C)
    logits = resid_L U                                   (n, T, vocab)

Attention-only, as in Elhage et al.'s "A Mathematical Framework for Transformer Circuits": every
task here is solved by moving tokens between positions, which is what attention does; an MLP
would only add parameters that hide the heads' role.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from attention.layer import MultiHeadSelfAttention
from attention.masks import as_blocked, causal_mask
from attention.ops import PLAIN, Steps
from attention.trace import AttentionTrace


@dataclass(frozen=True, eq=False)
class TinyOutput:
    """What the model computed: the logits and one AttentionTrace per layer."""

    logits: Tensor  # (n, T, vocab)
    traces: tuple[AttentionTrace, ...]  # one per layer; trace.x is that layer's residual input


class TinyTransformer(nn.Module):
    """An attention-only transformer small enough to train in seconds on a CPU.

    Every layer runs `steps` (attention/ops.py; the bug hunt trains through a student's mistake)
    with attention dropout `dropout` in training."""

    def __init__(
        self,
        vocab_size: int,
        seq_len: int,
        d_model: int,
        heads: tuple[int, ...],
        *,
        causal: bool,
        steps: Steps = PLAIN,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.seq_len = seq_len
        self.causal = causal
        self.embed = nn.Embedding(vocab_size, d_model)  # E: token -> vector
        self.pos = nn.Embedding(seq_len, d_model)  # P: position -> vector
        self.layers = nn.ModuleList(
            MultiHeadSelfAttention(d_model, n_heads, dropout=dropout, steps=steps)
            for n_heads in heads
        )
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)  # U: vector -> logits

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def heads(self) -> tuple[int, ...]:
        """The number of heads in each layer."""
        return tuple(layer.n_heads for layer in self.layers)

    @property
    def n_parameters(self) -> int:
        """Every weight the model learns, counted."""
        return sum(p.numel() for p in self.parameters())

    def blocked(self, T: int) -> Tensor | None:
        """(T, T) bool, True where query i may not attend to key j (the future, when the model
        is causal); None when every query sees every key."""
        return as_blocked(causal_mask(T)) if self.causal else None

    def check_ids(self, ids: Tensor) -> None:
        """ValueError unless ids is an integer tensor (n, T) of known tokens, 1 <= T <= seq_len."""
        check_token_ids(ids, self.seq_len, self.vocab_size)

    def check_ablate(self, ablate: Iterable[tuple[int, int]]) -> frozenset[tuple[int, int]]:
        """The (layer, head) pairs to knock out, checked."""
        pairs = frozenset(tuple(pair) for pair in ablate)
        for pair in pairs:
            layer, head = pair if len(pair) == 2 else (None, None)
            if not (
                isinstance(layer, int)
                and isinstance(head, int)
                and 0 <= layer < self.n_layers
                and 0 <= head < self.heads[layer]
            ):
                raise ValueError(
                    f"ablate needs (layer, head) pairs of this model's heads {self.heads} "
                    f"(layer 0 .. {self.n_layers - 1}), got {pair!r}"
                )
        return pairs

    def forward(
        self,
        ids: Tensor,
        ablate: Iterable[tuple[int, int]] = (),
        *,
        generator: torch.Generator | None = None,
    ) -> TinyOutput:
        """Logits (n, T, vocab) and every layer's trace; `ablate` zeroes those heads' Z.

        Attention dropout (if any) draws from `generator`, or torch's global generator."""
        self.check_ids(ids)
        knocked_out = self.check_ablate(ablate)
        T = ids.shape[1]
        positions = torch.arange(T)  # (T,)
        resid = self.embed(ids) + self.pos(positions)  # (n, T, C)
        mask = "causal" if self.causal else None
        traces = []
        for index, layer in enumerate(self.layers):
            trace = layer(resid, mask, generator=generator)
            off = sorted(head for layer_index, head in knocked_out if layer_index == index)
            if off:
                trace = knock_out(layer, trace, off)
            traces.append(trace)
            resid = resid + trace.output  # (n, T, C)
        logits = self.unembed(resid)  # (n, T, vocab)
        return TinyOutput(logits=logits, traces=tuple(traces))


def check_token_ids(ids: Tensor, max_len: int, vocab_size: int) -> None:
    """ValueError unless ids is an integer tensor (n, T) of ids below vocab_size, n >= 1 and
    1 <= T <= max_len (a model's input, this one's or attention.lm's)."""
    if not isinstance(ids, Tensor) or ids.ndim != 2:
        shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
        raise ValueError(f"ids must be a tensor of shape (n, T), got {shape}")
    if ids.is_floating_point() or ids.dtype == torch.bool:
        raise ValueError(f"ids must hold integer token ids, got {ids.dtype}")
    if ids.shape[0] < 1 or not 1 <= ids.shape[1] <= max_len:
        raise ValueError(
            f"ids must have n >= 1 sequences of 1 to {max_len} tokens, got {tuple(ids.shape)}"
        )
    if int(ids.min()) < 0 or int(ids.max()) >= vocab_size:
        raise ValueError(f"token ids must lie in 0 .. {vocab_size - 1}")


def knock_out(
    layer: MultiHeadSelfAttention, trace: AttentionTrace, heads: list[int]
) -> AttentionTrace:
    """The trace with those heads' outputs Z set to 0 before the output projection."""
    keep = torch.ones(trace.n_heads, 1, 1, dtype=trace.heads.dtype)  # (H, 1, 1)
    keep[heads] = 0.0
    z = trace.heads * keep  # (n, H, T, d_head)
    concat = layer.steps.merge_heads(z)  # (n, T, C)
    output = layer.steps.project_out(concat, layer.W_o)  # (n, T, C)
    return replace(trace, heads=z, concat=concat, output=output)
