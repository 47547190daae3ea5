"""Lesson 14: the block around attention, written out on the Shakespeare GPT (attention/lm).

One pre-LayerNorm block of CharGPT, every intermediate kept (model.py's Block, step by step):

    x          = resid_pre                            the residual stream entering   (T, C)
    ln1        = LN1(x)                               what attention reads           (T, C)
    attn_out   = MultiHead(ln1) = sum_h head_out[h]   each head through its W_o part (T, C)
    resid_mid  = x + attn_out                         the first residual addition    (T, C)
    ln2        = LN2(resid_mid)                       what the MLP reads             (T, C)
    mlp_pre    = ln2 W_in + b_in                      C -> 4C                        (T, 4C)
    mlp_post   = GELU(mlp_pre)                                                       (T, 4C)
    mlp_out    = mlp_post W_out + b_out               4C -> C                        (T, C)
    resid_post = resid_mid + mlp_out                  the second residual addition   (T, C)

and around the blocks: resid_0 = E[ids] + P[positions] before the first, logits =
LN_f(resid_L) U after the last (U, the unembedding: the output layer, C -> vocabulary).

The names are TransformerLens's, for layer L: `resid_pre` blocks.L.hook_resid_pre, `ln1`
blocks.L.ln1.hook_normalized, `head_out` blocks.L.attn.hook_result (TL: (T, H, C); ours (H, T, C)),
`attn_out` blocks.L.hook_attn_out, `resid_mid` blocks.L.hook_resid_mid, `ln2`
blocks.L.ln2.hook_normalized, `mlp_pre` blocks.L.mlp.hook_pre, `mlp_post` blocks.L.mlp.hook_post,
`mlp_out` blocks.L.hook_mlp_out, `resid_post` blocks.L.hook_resid_post; `embed` hook_embed,
`pos_embed` hook_pos_embed, `final_ln` ln_final.hook_normalized.

The logit lens (nostalgebraist, 2020) reads the stream part-way: LN_f and U applied to the stream
after the embedding, after each attention and after each MLP give the next-character
distribution the model "has so far". Direct attribution splits one logit into what each part
wrote into the stream (embeddings, each head, each MLP) plus LN_f's bias, through LN_f with its
scale frozen at the real forward, as TransformerLens's `apply_ln_to_stack` does. Bad input
(an empty text, a position past the text, a character outside the vocabulary) raises
ValueError saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention.layer import head_columns, unbatch
from attention.lm.corpus import GLYPHS, TRAIN_CHARS, decode, read, text, vocabulary
from attention.lm.model import CharGPT
from attention.trace import AttentionTrace

HELD_OUT_WINDOWS = 24  # windows of held-out text the lens's agreement is measured on


@dataclass(frozen=True, eq=False)
class BlockPass:
    """One block on one text, every intermediate in pipeline order (the module's docstring)."""

    layer: int
    resid_pre: Tensor  # (T, C)         x, the residual stream entering the block
    ln1: Tensor  # (T, C)               LN1(x): what attention reads
    attn: AttentionTrace  # unbatched   q, k, v, scores ... weights, heads, concat, output
    head_out: Tensor  # (H, T, C)       each head's part of attn_out: z_h W_o[:, cols_h]^T
    attn_out: Tensor  # (T, C)          MultiHead(LN1(x)) = attn.output
    resid_mid: Tensor  # (T, C)         x + attn_out
    ln2: Tensor  # (T, C)               LN2(resid_mid): what the MLP reads
    mlp_pre: Tensor  # (T, 4C)          ln2 W_in + b_in
    mlp_post: Tensor  # (T, 4C)         GELU(mlp_pre)
    mlp_out: Tensor  # (T, C)           mlp_post W_out + b_out
    resid_post: Tensor  # (T, C)        resid_mid + mlp_out


@dataclass(frozen=True)
class StreamStage:
    """A point of the residual stream the lesson reads: after the embedding, after an attention,
    after an MLP."""

    name: str  # "embedding", "attention 0", "MLP 0", ...
    title: str  # "after the embedding", "after layer 0's attention", ...
    hook: str  # TransformerLens's name of the stream there


@dataclass(frozen=True, eq=False)
class Stream:
    """The model's forward on one text, written out: embeddings, each block, the final
    LayerNorm and the logits (equal to CharGPT.forward's)."""

    ids: Tensor  # (T,)
    embed: Tensor  # (T, C)             E[ids], the characters' embeddings
    pos_embed: Tensor  # (T, C)         P[0 .. T-1], the positions'
    blocks: tuple[BlockPass, ...]  # one per layer
    final_ln: Tensor  # (T, C)          LN_f(resid_L)
    logits: Tensor  # (T, vocab)        final_ln U^T

    @property
    def T(self) -> int:
        return len(self.ids)

    @property
    def stages(self) -> tuple[StreamStage, ...]:
        """The stream's stages in order: the embedding, then each layer's attention and MLP."""
        named = [StreamStage("embedding", "after the embedding", "blocks.0.hook_resid_pre")]
        for b in self.blocks:
            L = b.layer
            named.append(StreamStage(f"attention {L}", f"after layer {L}'s attention",
                               f"blocks.{L}.hook_resid_mid"))  # fmt: skip
            named.append(
                StreamStage(f"MLP {L}", f"after layer {L}'s MLP", f"blocks.{L}.hook_resid_post")
            )
        return tuple(named)

    def resid(self) -> Tensor:
        """(S, T, C) the stream at each stage, in the order of `stages`."""
        rows = [self.blocks[0].resid_pre]
        for b in self.blocks:
            rows += [b.resid_mid, b.resid_post]
        return torch.stack(rows)

    def added(self) -> Tensor:
        """(S, T, C) what each stage added to the stream: the embeddings E[ids] + P, then each
        attention's and each MLP's output."""
        rows = [self.embed + self.pos_embed]
        for b in self.blocks:
            rows += [b.attn_out, b.mlp_out]
        return torch.stack(rows)

    def layer_outputs(self) -> tuple[Tensor, Tensor]:
        """(L, T, C) each: what each layer's attention wrote, and what its MLP wrote."""
        return (
            torch.stack([b.attn_out for b in self.blocks]),
            torch.stack([b.mlp_out for b in self.blocks]),
        )

    def tokens(self) -> tuple[str, ...]:
        """Its characters as a chart draws them (a space ␣, a newline ⏎)."""
        return tuple(GLYPHS.get(c, c) for c in decode(self.ids))


def check_position(stream: Stream, position: int) -> int:
    """The position as an int, ValueError unless it is one of the text's, 0 .. T - 1."""
    if isinstance(position, bool) or not isinstance(position, int):
        raise ValueError(f"a position is a whole number, got {position!r}")
    if not 0 <= position < stream.T:
        raise ValueError(
            f"position {position} is past the text: it has {stream.T} character"
            f"{'s' * (stream.T != 1)}, positions 0 to {stream.T - 1}"
        )
    return position


def char_id(char: str) -> int:
    """The token id of one character of the vocabulary (its glyph ␣ or ⏎ accepted for a space
    or a newline); ValueError naming what is wrong otherwise."""
    plain = {glyph: c for c, glyph in GLYPHS.items()}.get(char, char)
    if not isinstance(plain, str) or len(plain) != 1:
        raise ValueError(f"choose one character, got {char!r}")
    vocab = vocabulary()
    if plain not in vocab:
        raise ValueError(
            f"{char!r} is outside the model's vocabulary: it knows only the {len(vocab)} "
            "characters of tiny Shakespeare"
        )
    return vocab.index(plain)


def read_text(model: CharGPT, typed: str) -> Tensor:
    """(T,) the ids of a student's text as lesson 12 reads it (corpus.read: characters outside
    the vocabulary dropped, at most the context kept); ValueError when nothing is left."""
    return read(typed, model.context).ids


@torch.inference_mode()
def run_block(block: nn.Module, layer: int, x: Tensor) -> BlockPass:
    """One block of CharGPT on the stream x (1, T, C), each step of model.Block.forward kept."""
    trace = block.attn(block.ln_1(x), "causal")  # (1, T, C) in, a batched trace out
    resid_mid = x + trace.output  # (1, T, C)
    ln2 = block.ln_2(resid_mid)  # (1, T, C)
    w_in, gelu, w_out = block.mlp
    mlp_pre = w_in(ln2)  # (1, T, 4C)
    mlp_post = gelu(mlp_pre)  # (1, T, 4C)
    mlp_out = w_out(mlp_post)  # (1, T, C)
    resid_post = resid_mid + mlp_out  # (1, T, C)
    attn = block.attn
    W_o = attn.W_o.weight  # (C, C): out x in
    head_out = torch.stack(
        [
            trace.heads[0, h] @ W_o[:, head_columns(attn.d_model, attn.n_heads, h)].T
            for h in range(attn.n_heads)
        ]
    )  # fmt: skip  (H, T, C)
    one = unbatch(trace)
    return BlockPass(
        layer, x[0], one.x, one, head_out, trace.output[0], resid_mid[0], ln2[0], mlp_pre[0],
        mlp_post[0], mlp_out[0], resid_post[0],
    )  # fmt: skip


@torch.inference_mode()
def run_stream(model: CharGPT, ids: Tensor) -> Stream:
    """The model's forward on ids (T,), written out block by block (the same float32 steps as
    CharGPT.forward, so its logits are the model's)."""
    if not isinstance(ids, Tensor) or ids.ndim != 1:
        raise ValueError("ids must be a tensor (T,) of token ids")
    model.check_ids(ids[None])  # ValueError: empty, too long or unknown ids
    T = len(ids)
    embed = model.embed(ids[None])  # (1, T, C)
    pos_embed = model.pos(torch.arange(T))  # (T, C)
    x = embed + pos_embed  # (1, T, C): resid_0
    passes = []
    for layer, block in enumerate(model.blocks):
        done = run_block(block, layer, x)
        passes.append(done)
        x = done.resid_post[None]  # (1, T, C)
    final_ln = model.ln_f(x)  # (1, T, C)
    logits = model.unembed(final_ln)  # (1, T, vocab)
    return Stream(ids, embed[0], pos_embed, tuple(passes), final_ln[0], logits[0])


def stream_of(model: CharGPT, typed: str) -> Stream:
    """The student's text read (read_text) and run through the model, written out."""
    return run_stream(model, read_text(model, typed))


@dataclass(frozen=True)
class StageSize:
    """At one position: the size (L2 norm) of what a stage added, and of the stream after it."""

    stage: StreamStage
    added: float  # ||what the stage added||
    stream: float  # ||the stream after it||


def stage_sizes(stream: Stream, position: int) -> tuple[StageSize, ...]:
    """||added|| and ||stream|| at each stage, at one position of the text."""
    position = check_position(stream, position)
    added = stream.added()[:, position].norm(dim=-1).tolist()  # (S,)
    sizes = stream.resid()[:, position].norm(dim=-1).tolist()  # (S,)
    return tuple(
        StageSize(stage, a, r) for stage, a, r in zip(stream.stages, added, sizes, strict=True)
    )


# --- the logit lens ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Lens:
    """The logit lens: LN_f and U applied to the stream at every stage and position."""

    stages: tuple[StreamStage, ...]
    logits: Tensor  # (S, T, vocab)   LN_f(resid_s) U^T
    probs: Tensor  # (S, T, vocab)    softmax over the vocabulary (the last axis)

    def top(self, stage: int, position: int, k: int = 3) -> list[tuple[str, float]]:
        """The k likeliest next characters at a stage and position, with their probabilities."""
        p = self.probs[stage, position]  # (vocab,)
        best = torch.topk(p, k)
        vocab = vocabulary()
        return [(vocab[i], float(v)) for v, i in zip(best.values, best.indices, strict=True)]

    def probability(self, stage: int, position: int, char: int) -> float:
        return float(self.probs[stage, position, char])

    def likeliest(self, stage: int, position: int) -> int:
        """The likeliest next character's token id at a stage and position."""
        return int(self.probs[stage, position].argmax())

    def first_stage_guessing(self, position: int, char: int) -> int | None:
        """The first stage whose likeliest character is `char` and stays so at every stage
        after it; None when the last stage's likeliest is another."""
        best = self.probs[:, position].argmax(-1).tolist()  # (S,)
        if best[-1] != char:
            return None
        stage = len(best) - 1
        while stage > 0 and best[stage - 1] == char:
            stage -= 1
        return stage


@torch.inference_mode()
def logit_lens(model: CharGPT, stream: Stream) -> Lens:
    """The next-character distribution at every stage: softmax(LN_f(resid_s) U^T) over the
    vocabulary, (S, T, vocab); its last stage is the model's own output."""
    resid = stream.resid()  # (S, T, C)
    logits = model.unembed(model.ln_f(resid))  # (S, T, vocab)
    return Lens(stream.stages, logits, torch.softmax(logits, dim=-1))


@torch.inference_mode()
def lens_without_final_norm(model: CharGPT, stream: Stream) -> Tensor:
    """(S, T, vocab) the mistake's reading: resid_s U^T, the final LayerNorm left out."""
    return model.unembed(stream.resid())


# --- direct attribution -----------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part's push on a logit: what it wrote into the stream, through LN_f (its scale
    frozen) and U's row for the character."""

    name: str  # "character embedding", "layer 0 · head 2", "MLP 1", "β of the final LayerNorm"
    kind: str  # "embedding" | "head" | "MLP" | "bias"
    value: float  # its share of the logit


@dataclass(frozen=True)
class Attribution:
    """A logit split into its parts: they add to it (the final LayerNorm's scale frozen)."""

    position: int
    char: int
    parts: tuple[Part, ...]
    logit: float  # the model's own
    scale: float  # sigma = sqrt(var(resid_L[position]) + eps), frozen

    @property
    def total(self) -> float:
        return sum(p.value for p in self.parts)

    def pushing(self) -> tuple[Part, ...]:
        """The heads and MLPs (no embedding, no bias) from the largest push up to the largest
        down."""
        movers = [p for p in self.parts if p.kind in ("head", "MLP")]
        return tuple(sorted(movers, key=lambda p: -p.value))


def named_parts(stream: Stream) -> list[tuple[str, str, Tensor]]:
    """What each part wrote into the stream, (name, kind, (T, C)): they add to the last stage."""
    parts = [("character embedding", "embedding", stream.embed),
             ("position embedding", "embedding", stream.pos_embed)]  # fmt: skip
    for b in stream.blocks:
        for h in range(b.head_out.shape[0]):
            parts.append((f"layer {b.layer} · head {h}", "head", b.head_out[h]))
        parts.append((f"MLP {b.layer}", "MLP", b.mlp_out))
    return parts


@torch.inference_mode()
def direct_attribution(model: CharGPT, stream: Stream, position: int, char: int) -> Attribution:
    """Each part's push on the logit of `char` at `position`: ((v - mean v) / sigma) . (gamma_f
    * U[char]) for what the part wrote, v (C,), with sigma the final LayerNorm's scale at the
    real forward, frozen (TransformerLens's apply_ln_to_stack); plus beta_f . U[char]. Centering
    is linear, so with sigma frozen the parts add to the model's logit."""
    position = check_position(stream, position)
    if isinstance(char, bool) or not isinstance(char, int) or not 0 <= char < model.vocab_size:
        raise ValueError(f"a character is a token id 0 .. {model.vocab_size - 1}, got {char!r}")
    ln_f = model.ln_f
    last = stream.blocks[-1].resid_post[position]  # (C,)
    sigma = torch.sqrt(last.var(unbiased=False) + ln_f.eps)
    direction = ln_f.weight * model.unembed.weight[char]  # (C,): gamma_f * U[char]
    parts = []
    for name, kind, wrote in named_parts(stream):
        v = wrote[position]  # (C,)
        parts.append(Part(name, kind, float(((v - v.mean()) / sigma) @ direction)))
    parts.append(
        Part("β of the final LayerNorm", "bias", float(ln_f.bias @ model.unembed.weight[char]))
    )
    return Attribution(position, char, tuple(parts), float(stream.logits[position, char]),
                       float(sigma))  # fmt: skip


# --- LayerNorm on one row, the MLP's shape ----------------------------------------------


@dataclass(frozen=True, eq=False)
class LayerNormRow:
    """LayerNorm of one row, step by step: (x - mean) / sqrt(var + eps) * gamma + beta."""

    row: Tensor  # (C,)
    mean: float
    variance: float  # the population variance (divided by C, not C - 1)
    eps: float
    std: float  # sqrt(variance + eps): the spread
    normalised: Tensor  # (C,)   (row - mean) / std
    gamma: Tensor  # (C,)        the learned scale
    beta: Tensor  # (C,)         the learned shift
    output: Tensor  # (C,)       normalised * gamma + beta

    @property
    def centred(self) -> Tensor:
        """(C,) the row less its mean."""
        return self.row - self.mean


@torch.inference_mode()
def layer_norm_row(ln: nn.LayerNorm, row: Tensor) -> LayerNormRow:
    """One row (C,) through a LayerNorm, each step kept; its output is ln(row)."""
    if not isinstance(row, Tensor) or row.ndim != 1 or row.shape[0] != ln.normalized_shape[0]:
        raise ValueError(
            f"a row of {ln.normalized_shape[0]} numbers, got {getattr(row, 'shape', row)}"
        )
    mean = row.mean()
    variance = row.var(unbiased=False)
    std = torch.sqrt(variance + ln.eps)
    normalised = (row - mean) / std  # (C,)
    output = normalised * ln.weight + ln.bias  # (C,)
    return LayerNormRow(row, float(mean), float(variance), ln.eps, float(std), normalised,
                        ln.weight.detach().clone(), ln.bias.detach().clone(), output)  # fmt: skip


def layer_norms(model: CharGPT) -> dict[str, nn.LayerNorm]:
    """The model's LayerNorms by name, in the order the stream meets them."""
    named = {}
    for layer, block in enumerate(model.blocks):
        named[f"LN1 of layer {layer}"] = block.ln_1
        named[f"LN2 of layer {layer}"] = block.ln_2
    named["final LayerNorm"] = model.ln_f
    return named


def layer_norm_input(stream: Stream, name: str) -> Tensor:
    """(T, C) what a LayerNorm of `layer_norms` reads on this text."""
    for b in stream.blocks:
        if name == f"LN1 of layer {b.layer}":
            return b.resid_pre
        if name == f"LN2 of layer {b.layer}":
            return b.resid_mid
    if name == "final LayerNorm":
        return stream.blocks[-1].resid_post
    raise ValueError(f"no LayerNorm named {name!r}")


@dataclass(frozen=True)
class MLPShape:
    """The MLP's sizes: C -> 4C -> C, GELU between, and its parameters."""

    d_model: int
    hidden: int
    activation: str
    weights: int  # W_in and W_out
    biases: int  # b_in and b_out

    @property
    def parameters(self) -> int:
        return self.weights + self.biases


def mlp_shape(model: CharGPT, layer: int = 0) -> MLPShape:
    """The sizes of one layer's MLP, read from its own tensors."""
    w_in, gelu, w_out = model.blocks[layer].mlp
    return MLPShape(
        w_in.in_features, w_in.out_features, type(gelu).__name__,
        w_in.weight.numel() + w_out.weight.numel(), w_in.bias.numel() + w_out.bias.numel(),
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class MLPRow:
    """One layer's MLP at one position: its 4C hidden numbers before and after GELU, and what
    it wrote into the stream."""

    layer: int
    pre: Tensor  # (4C,)   ln2 W_in + b_in
    post: Tensor  # (4C,)  GELU(pre)
    out: Tensor  # (C,)    post W_out + b_out

    @property
    def passed(self) -> int:
        """Hidden units GELU passes (a positive output)."""
        return int((self.post > 0).sum())

    @property
    def lowest(self) -> float:
        """GELU's lowest output here (it is never below about -0.17)."""
        return float(self.post.min())


def mlp_row(stream: Stream, layer: int, position: int) -> MLPRow:
    """The MLP of `layer` at `position` of the text."""
    position = check_position(stream, position)
    if not 0 <= layer < len(stream.blocks):
        raise ValueError(f"no layer {layer}: the model has layers 0 to {len(stream.blocks) - 1}")
    b = stream.blocks[layer]
    return MLPRow(layer, b.mlp_pre[position], b.mlp_post[position], b.mlp_out[position])


# --- the guess forming, on text the model never trained on ------------------------------


def held_out_windows(count: int = HELD_OUT_WINDOWS, length: int = 64) -> tuple[str, ...]:
    """`count` windows of `length` characters, evenly spaced over the held-out 10 % of tiny
    Shakespeare (corpus.split's cut), each kept only if it appears nowhere in the 90 % the
    model trained on (a line of the play can repeat; the next window is tried instead)."""
    corpus = text()
    trained, held = corpus[:TRAIN_CHARS], corpus[TRAIN_CHARS:]
    stride = (len(held) - length) // (4 * count)  # four candidates a window kept
    windows: list[str] = []
    for start in range(0, len(held) - length, stride):
        window = held[start : start + length]
        if window not in trained:
            windows.append(window)
        if len(windows) == count:
            break
    return tuple(windows)


@dataclass(frozen=True)
class Agreement:
    """How often each stage's likeliest character is already the model's final one, over the
    positions of texts it never trained on."""

    stages: tuple[StreamStage, ...]
    shares: tuple[float, ...]  # per stage
    windows: int
    positions: int


@torch.inference_mode()
def guess_agreement(model: CharGPT, windows: tuple[str, ...]) -> Agreement:
    """Per stage, the share of positions (over every window) whose logit-lens top-1 equals the
    last stage's (the model's own prediction)."""
    if not windows:
        raise ValueError("no text to measure on")
    same, total, stages = None, 0, ()
    for window in windows:
        stream = stream_of(model, window)
        lens = logit_lens(model, stream)
        best = lens.probs.argmax(-1)  # (S, T)
        hits = (best == best[-1]).sum(-1)  # (S,)
        same = hits if same is None else same + hits
        total += stream.T
        stages = lens.stages
    return Agreement(stages, tuple(float(v) / total for v in same), len(windows), total)
