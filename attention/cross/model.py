"""A small encoder-decoder built from this package's attention, trained to reverse a word.

    source  "black" -> encoder: self-attention over the source (padding masked), an MLP, twice
    target  "kcalb" <- decoder: causal self-attention over what it has written, cross-attention
                       from what it writes to the encoder's output, an MLP, twice

The task: a word of 2 to 8 different letters from a..l, written backwards. Why this task: the
right alignment is known exactly (the t-th letter written is the source letter at position
S_len - 1 - t, and each letter appears once), so a head's alignment can be scored; it is learned
in minutes on one CPU thread (`python -m attention.cross.training`: 83 s on the 2-core machine
alone, 254 s when it was shared); and the alignment it must learn is an anti-diagonal, a picture
no one mistakes for the identity. Pre-LN blocks (each sublayer reads LayerNorm(x) and adds to x),
learned position embeddings for up to 12 source letters: words of 9 to 12 letters are longer
than any seen in training, and the lesson shows what the model then does. A one-letter word is
refused: training never showed one, and it is its own reverse.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention.cross.layer import CrossAttention, CrossTrace
from attention.layer import MultiHeadSelfAttention
from attention.trace import AttentionTrace

LETTERS = "abcdefghijkl"
PAD, BOS, EOS = 0, 1, 2  # then the letters, 3 .. 14
VOCAB = ("<pad>", "<s>", "</s>", *LETTERS)
TRAIN_LENGTHS = range(2, 9)  # words of 2 to 8 letters in training
MIN_SOURCE = TRAIN_LENGTHS.start  # 2: training never showed a one-letter word
MAX_SOURCE = len(LETTERS)  # 12: the most different letters a word can have
MAX_TARGET = MAX_SOURCE + 1  # the reversed word and </s>


def check_word(word: str) -> str:
    """The word, checked: 2 to 12 different letters from a..l (ValueError saying which rule)."""
    if not isinstance(word, str) or not word:
        raise ValueError("type a word of letters from a to l")
    if len(word) < MIN_SOURCE:
        raise ValueError(
            f"type {MIN_SOURCE} letters or more: training never showed a word of fewer "
            f"(it used {TRAIN_LENGTHS.start} to {TRAIN_LENGTHS.stop - 1}), and a one-letter word "
            "is its own reverse"
        )
    bad = sorted({c for c in word if c not in LETTERS})
    if bad:
        raise ValueError(
            f"the model knows only the letters a to l; not {', '.join(map(repr, bad))}"
        )
    if len(set(word)) != len(word):
        twice = sorted({c for c in word if word.count(c) > 1})
        raise ValueError(
            f"each letter may appear once (then the right source position is known): "
            f"{', '.join(twice)} appear{'s' if len(twice) == 1 else ''} more than once"
        )
    return word


def encode(word: str) -> list[int]:
    return [3 + LETTERS.index(c) for c in check_word(word)]


def decode_ids(ids: Iterable[int]) -> str:
    return "".join(VOCAB[i] if i >= 3 else "" for i in ids)


@dataclass(frozen=True, eq=False)
class Batch:
    source: Tensor  # (B, S) letter ids, PAD after each word
    source_pad: Tensor  # (B, S) bool, True = padding
    target_in: Tensor  # (B, T) <s> then the reversed word (then PAD)
    target_out: Tensor  # (B, T) the reversed word, </s> (then PAD: no loss)


def batch_of(words: list[str], targets: list[str] | None = None) -> Batch:
    """Each word as a source, and as the target the word backwards (or `targets`' word), then
    </s>: target_in starts with <s>, target_out ends with </s>."""
    targets = [word[::-1] for word in words] if targets is None else targets
    S = max(len(w) for w in words)
    T = max(len(w) for w in targets) + 1
    source = torch.full((len(words), S), PAD)
    target_in = torch.full((len(words), T), PAD)
    target_out = torch.full((len(words), T), PAD)
    for b, (word, target) in enumerate(zip(words, targets, strict=True)):
        ids, written = encode(word), encode(target)
        source[b, : len(ids)] = torch.tensor(ids)
        target_in[b, : len(written) + 1] = torch.tensor([BOS, *written])
        target_out[b, : len(written) + 1] = torch.tensor([*written, EOS])
    return Batch(source, source == PAD, target_in, target_out)


def random_words(n: int, rng: random.Random, lengths: Iterable[int] = TRAIN_LENGTHS) -> list[str]:
    lengths = list(lengths)
    return ["".join(rng.sample(LETTERS, rng.choice(lengths))) for _ in range(n)]


class MLP(nn.Sequential):
    def __init__(self, d_model: int) -> None:
        super().__init__(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )


class EncoderBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.ln_attn, self.ln_mlp = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, n_heads)
        self.mlp = MLP(d_model)

    def forward(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, AttentionTrace]:
        trace = self.attn(self.ln_attn(x), allowed)  # (B, S, C): every source position reads all
        x = x + trace.output
        return x + self.mlp(self.ln_mlp(x)), trace


class DecoderBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.ln_self, self.ln_cross = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ln_mlp = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadSelfAttention(d_model, n_heads)
        self.cross = CrossAttention(d_model, n_heads)
        self.mlp = MLP(d_model)

    def forward(
        self, y: Tensor, memory: Tensor, source_pad: Tensor, off: list[int]
    ) -> tuple[Tensor, AttentionTrace, CrossTrace]:
        own = self.self_attn(self.ln_self(y), "causal")  # (B, T, C): what it has written so far
        y = y + own.output
        cross = self.cross(self.ln_cross(y), memory, source_pad)  # (B, T, C): reads the source
        read = cross.output
        if off:  # knock heads out: their columns of concat are zeroed before W_o
            heads = cross.heads.clone()
            heads[:, off] = 0
            read = self.cross.W_o(heads.transpose(1, 2).reshape(y.shape))
        y = y + read
        return y + self.mlp(self.ln_mlp(y)), own, cross


@dataclass(frozen=True, eq=False)
class Seq2SeqOutput:
    logits: Tensor  # (B, T, vocab)
    encoder: tuple[AttentionTrace, ...]  # each encoder layer's self-attention
    decoder: tuple[AttentionTrace, ...]  # each decoder layer's causal self-attention
    cross: tuple[CrossTrace, ...]  # each decoder layer's cross-attention


class EncoderDecoder(nn.Module):
    def __init__(self, d_model: int = 32, n_heads: int = 2, layers: int = 2) -> None:
        super().__init__()
        self.d_model, self.n_heads, self.n_layers = d_model, n_heads, layers
        self.embed = nn.Embedding(len(VOCAB), d_model)  # shared by source and target
        self.source_pos = nn.Embedding(MAX_SOURCE, d_model)
        self.target_pos = nn.Embedding(MAX_TARGET, d_model)
        self.encoder = nn.ModuleList(EncoderBlock(d_model, n_heads) for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderBlock(d_model, n_heads) for _ in range(layers))
        self.ln_memory, self.ln_out = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, len(VOCAB))

    def forward(
        self, source: Tensor, source_pad: Tensor, target_in: Tensor,
        ablate: Iterable[tuple[int, int]] = (),
    ) -> Seq2SeqOutput:  # fmt: skip
        """source (B, S) ids with source_pad (B, S); target_in (B, T) ids from <s>; `ablate`:
        (decoder layer, head) pairs whose cross-attention is knocked out."""
        S, T = source.shape[1], target_in.shape[1]
        if S > MAX_SOURCE or T > MAX_TARGET:
            raise ValueError(f"at most {MAX_SOURCE} source letters, got {S}")
        x = self.embed(source) + self.source_pos(torch.arange(S))  # (B, S, C)
        allowed = ~source_pad[:, None, None, :]  # (B, 1, 1, S)
        encoder = []
        for block in self.encoder:
            x, trace = block(x, allowed)
            encoder.append(trace)
        memory = self.ln_memory(x)  # (B, S, C): what every decoder layer's K and V read
        y = self.embed(target_in) + self.target_pos(torch.arange(T))  # (B, T, C)
        decoder, cross = [], []
        for index, block in enumerate(self.decoder):
            off = sorted(h for layer, h in ablate if layer == index)
            y, own, read = block(y, memory, source_pad, off)
            decoder.append(own)
            cross.append(read)
        logits = self.unembed(self.ln_out(y))  # (B, T, vocab)
        return Seq2SeqOutput(logits, tuple(encoder), tuple(decoder), tuple(cross))


@dataclass(frozen=True, eq=False)
class Written:
    """A word reversed by the model, one token a step (greedy decoding: the likeliest next token
    each step), with the last pass's traces: row t of each map is step t, which reads token t
    (<s>, then each letter written) and writes `wrote[t]`."""

    word: str
    written: str  # the letters the model wrote (before </s>)
    steps: int  # T: the rows of the maps, one per token read (<s> and each letter written)
    output: Seq2SeqOutput  # the pass over <s> + everything written (teacher-forced on its own)
    padded: int  # extra PAD positions appended to the source (0: none)
    wrote: tuple[str, ...]  # what each step writes: a letter, or "</s>"

    @property
    def right(self) -> bool:
        return self.written == self.word[::-1]

    @property
    def ended(self) -> bool:
        """Whether the model wrote </s> (else it was stopped after len(word) + 1 letters)."""
        return self.wrote[-1] == VOCAB[EOS]

    @property
    def source_pad(self) -> Tensor:
        """(S,) bool, True for a padding position of the source."""
        return torch.tensor([False] * len(self.word) + [True] * self.padded)

    def reads(self, layer: int, head: int, t: int) -> tuple[int, float]:
        """The source position step t reads most in that cross-attention head, and its weight."""
        row = self.output.cross[layer].weights[0, head, t]  # (S,)
        return int(row.argmax()), float(row.max())


@dataclass(frozen=True)
class PaddingEffect:
    same: bool  # the same letters written with the pads as without
    on_pads: float  # the largest weight any cross-attention head puts on a pad
    change: float  # the largest change of a weight on a letter, any head, any step


def padding_effect(plain: Written, padded: Written) -> PaddingEffect:
    """What `padded` pads after the word change (the padding mask: nothing)."""
    S = len(plain.word)
    pairs = list(zip(plain.output.cross, padded.output.cross, strict=True))
    T = min(plain.output.logits.shape[1], padded.output.logits.shape[1])
    return PaddingEffect(
        plain.written == padded.written,
        max(
            (float(b.weights[..., S:].abs().max()) for _, b in pairs if b.weights.shape[-1] > S),
            default=0.0,
        ),
        max(float((a.weights[:, :, :T] - b.weights[:, :, :T, :S]).abs().max()) for a, b in pairs),
    )


@torch.no_grad()
def write(
    model: EncoderDecoder, word: str, padded: int = 0, ablate: Iterable[tuple[int, int]] = ()
) -> Written:
    """Reverse `word` greedily, one letter a step, up to len(word) + 1 steps; `padded` PAD
    positions after the word (the padding mask hides them, so nothing changes)."""
    ids = encode(word)
    if len(ids) + padded > MAX_SOURCE:
        raise ValueError(
            f"the source holds at most {MAX_SOURCE} positions: {len(ids)} letters + {padded} pads"
        )
    source = torch.tensor([ids + [PAD] * padded])  # (1, S)
    source_pad = source == PAD
    target = [BOS]
    ablate = tuple(ablate)
    for _ in range(len(ids) + 1):
        out = model(source, source_pad, torch.tensor([target]), ablate)
        nxt = int(out.logits[0, -1].argmax())
        if nxt == EOS:
            break
        target.append(nxt)
    final = model(source, source_pad, torch.tensor([target]), ablate)
    wrote = tuple(VOCAB[int(i)] for i in final.logits[0].argmax(-1))  # (T,) each step's token
    return Written(word, decode_ids(target[1:]), len(target), final, padded, wrote)


@torch.no_grad()
def alignment_scores(model: EncoderDecoder, words: list[str], per_word: bool = False) -> Tensor:
    """(layers, heads): for each decoder layer's cross-attention head, the mean weight a step
    puts on the source letter it must write (position len - 1 - t), teacher-forced over
    `words` (fed the right letters so far). Averaged over every (word, step) pair that writes a
    letter, or, `per_word`, over each word's steps first and then over the words. 1.0 is a head
    that reads exactly the right letter at every step."""
    batch = batch_of(words)
    out = model(batch.source, batch.source_pad, batch.target_in)
    S = batch.source.shape[1]
    lengths = torch.tensor([len(word) for word in words])  # (B,)
    t = torch.arange(S)  # the steps that write a letter, 0 .. S - 1
    writes = t[None, :] < lengths[:, None]  # (B, S): step t writes a letter of word b
    must_read = (lengths[:, None] - 1 - t[None, :]).clamp(min=0)  # (B, S): position len - 1 - t
    per_layer = []
    for cross in out.cross:
        rows = cross.weights[:, :, :S, :]  # (B, H, S steps, S positions)
        index = must_read[:, None, :, None].expand(-1, rows.shape[1], -1, 1)  # (B, H, S, 1)
        on_letter = rows.gather(-1, index)[..., 0] * writes[:, None, :]  # (B, H, S)
        if per_word:
            per_layer.append((on_letter.sum(-1) / lengths[:, None]).mean(0))  # (H,)
        else:
            per_layer.append(on_letter.sum((0, 2)) / writes.sum())  # (H,)
    return torch.stack(per_layer)  # (layers, H)


@torch.no_grad()
def share_written(
    model: EncoderDecoder, words: list[str], targets: list[str],
    ablate: Iterable[tuple[int, int]] = (),
) -> float:  # fmt: skip
    """The share of `words` for which the model writes exactly that word's target, then </s>,
    in one batched pass: fed the target so far, every step's most likely next token is the
    target's. That is the same as greedy decoding writing it (each greedy step then sees the
    same prefix)."""
    batch = batch_of(words, targets)
    out = model(batch.source, batch.source_pad, batch.target_in, tuple(ablate))
    guessed = out.logits.argmax(-1)  # (B, T)
    real = batch.target_out != PAD  # (B, T)
    return float(((guessed == batch.target_out) | ~real).all(dim=1).float().mean())


def accuracy(
    model: EncoderDecoder, words: list[str], ablate: Iterable[tuple[int, int]] = ()
) -> float:
    """The share of words the model reverses exactly (share_written with each word backwards)."""
    return share_written(model, words, [word[::-1] for word in words], ablate)
