"""The glossary: every term a lesson uses before the lesson that teaches it, and the terms a
lesson defines in passing, each defined once, with the lesson that teaches it. A page's text
links a term's first use to its entry (`linked`); tests/dashboard/test_glossary.py reads every
lesson's text and fails where a term is used before its lesson without that link (issue 30,
item 9). Plain data, the shared cache (state.py), and each lesson's number read from the
registry (frame.LESSONS)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dashboard import state
from dashboard.frame import LESSONS

LESSON_NUMBERS = {lesson.url_path: lesson.number for lesson in LESSONS}

PAGE = "glossary"  # the page's URL path: a term's entry is /glossary#<its anchor>


@dataclass(frozen=True)
class Term:
    name: str
    anchor: str
    pattern: str  # a regular expression for its uses in a sentence
    taught_in: str  # the lesson that teaches it, by its URL path ("masking")
    definition: str

    @property
    def href(self) -> str:
        return f"/{PAGE}#{self.anchor}"

    @property
    def lesson(self) -> int:
        """The number of the lesson that teaches it, as the course now orders the lessons."""
        return LESSON_NUMBERS[self.taught_in]


TERMS = (
    Term(
        "causal mask",
        "causal-mask",
        r"\bcausal(?! switch)\b",
        "masking",
        "A mask that lets token i attend to tokens 0 … i only: none of the tokens after it "
        "(the future), as a model that writes text one token at a time must.",
    ),
    Term(
        "padding",
        "padding",
        r"\bpadding\b",
        "masking",
        "Filler tokens added so that sequences of different lengths make one batch; a padding "
        "mask hides them from every query.",
    ),
    Term(
        "concat",
        "concat",
        r"\bconcat\b",
        "multi_head",
        "The heads' outputs side by side again: H matrices of (T, d_k) become one (T, C).",
    ),
    Term(
        "W_o",
        "w-o",
        r"\bW_o\b",
        "multi_head",
        "The output projection: a (C, C) matrix that mixes what the heads found, applied to the "
        "concat.",
    ),
    Term(
        "saturate",
        "saturate",
        r"\bsaturat\w*",
        "why_sqrt_dk",
        "A softmax saturates when one score is far above the others: one weight near 1, the "
        "rest near 0, and a gradient near 0, so training cannot move it.",
    ),
    Term(
        "one-hot",
        "one-hot",
        r"\bone-hot\b",
        "why_sqrt_dk",
        "A row with one 1 and 0 everywhere else: a saturated softmax's weights.",
    ),
    Term(
        "induction head",
        "induction-head",
        r"\binduction heads?\b",
        "what_heads_learn",
        "A head that finds an earlier copy of the current token and attends to the token that "
        "followed it, so a model can continue a pattern it has seen once.",
    ),
    Term(
        "previous-token head",
        "previous-token-head",
        r"\bprevious-token heads?\b",
        "what_heads_learn",
        "A head whose query i attends mostly to key i − 1.",
    ),
    Term(
        "sinusoidal positions",
        "sinusoidal-positions",
        r"\bsinusoidal\b",
        "position",
        "The original Transformer's position encoding: sines and cosines of the position at "
        "falling frequencies, added to X, each position its own pattern.",
    ),
    Term(
        "RoPE",
        "rope",
        r"\bRoPE\b",
        "position",
        "Rotary position embedding: each pair of features of q and k turned by an angle "
        "proportional to the position, so a score depends on how far apart two tokens are.",
    ),
    Term(
        "KV cache",
        "kv-cache",
        r"\b(?:KV|K/V) cache\b",
        "kv_cache",
        "While generating, the keys and values of the tokens so far, kept so that each new "
        "token computes only its own query row.",
    ),
    Term(
        "H_kv",
        "h-kv",
        r"\bH_kv\b",
        "kv_cache",
        "The number of key/value heads: H in multi-head attention, fewer when query heads "
        "share them (grouped-query attention), 1 in multi-query attention.",
    ),
    Term(
        "grouped-query attention",
        "grouped-query-attention",
        r"\bgrouped-query\b",
        "kv_cache",
        "Attention where groups of query heads share one key/value head, for a smaller cache.",
    ),
    Term(
        "FlashAttention",
        "flashattention",
        r"\bFlashAttention\b",
        "at_scale",
        "An exact attention kernel that walks tiles of queries × keys and never builds the "
        "T × T matrix, keeping a running max and normaliser per row (the online softmax).",
    ),
    Term(
        "temperature",
        "temperature",
        r"\btemperature\b",
        "real_model",
        "Sampling from softmax(logits / τ): τ < 1 sharpens the distribution, τ > 1 flattens it.",
    ),
    Term(
        "logits",
        "logits",
        r"\blogits?\b",
        "real_model",
        "A model's raw scores for each possible next token, before the softmax turns them into "
        "probabilities; one per token of the vocabulary.",
    ),
    Term(
        "nats",
        "nats",
        r"\bnats?\b",
        "real_model",
        "The unit of a loss computed with the natural logarithm: −ln p of the right token. "
        "ln 2 ≈ 0.69 nats is one bit; a uniform guess over 65 characters costs ln 65 ≈ 4.17.",
    ),
    Term(
        "top-k",
        "top-k",
        r"\btop-k\b",
        "real_model",
        "Sampling from the k likeliest tokens only: the others get probability 0, and the k "
        "are normalised to sum to 1.",
    ),
    Term(
        "top-p",
        "top-p",
        r"\btop-p\b",
        "real_model",
        "Nucleus sampling: keep the likeliest tokens until their probabilities add up to p, "
        "drop the rest, and normalise.",
    ),
    Term(
        "bigram model",
        "bigram-model",
        r"\bbigram\b",
        "real_model",
        "The simplest language model: the probability of the next character given only the "
        "current one, counted on a text. A baseline any model that reads further should beat.",
    ),
    Term(
        "pre-LayerNorm",
        "pre-layernorm",
        r"\bpre-LayerNorm\b",
        "block",
        "A transformer block that normalises its input (LayerNorm: each vector to mean 0 and "
        "variance 1, then a learned scale and shift) before attention and before the MLP, as "
        "GPT-2 does, rather than after them.",
    ),
    Term(
        "residual stream",
        "residual-stream",
        r"\bresidual stream\b",
        "block",
        "The running sum a transformer carries from layer to layer, one vector of C numbers a "
        "position: it starts as the token's and the position's embeddings, and each block adds "
        "its attention's and its MLP's outputs to it instead of replacing it.",
    ),
    Term(
        "attention sink",
        "attention-sink",
        r"\bsink\b",
        "real_model",
        "A head that puts most of its weight on the first token when it has nothing better to "
        "look at: the softmax must give its weight somewhere.",
    ),
    Term(
        "head-detector score",
        "head-detector-score",
        r"\bhead-detector\b",
        "real_model",
        'TransformerLens\'s "mul" score of a head for a kind of pattern (previous token, '
        "induction, …): the weight the head puts where that kind would look, summed over each "
        "query row and averaged over the rows. Here on 64-character windows with no "
        "beginning-of-sequence token.",
    ),
    Term(
        "LayerNorm",
        "layernorm",
        r"\bLayerNorm(?:s|ed)?\b|\bLN\b",
        "block",
        "Layer normalisation (LN): each position's vector shifted and scaled to mean 0 and "
        "variance 1 over its C numbers, then multiplied by a learned scale and shifted by a "
        "learned bias, one of each per column. In the models here (and GPT-2) a block applies it "
        "before its attention and its MLP; the original Transformer applied it after each "
        "residual addition.",
    ),
    Term(
        "MLP",
        "mlp",
        r"\bMLPs?\b",
        "block",
        "Multi-layer perceptron: the part of a transformer block after attention, a small "
        "network applied to each position on its own (here C numbers → 4C → C with a GELU "
        "between; the original Transformer used a ReLU). "
        "Attention moves information between positions; the MLP computes on each.",
    ),
    Term(
        "unembedding",
        "unembedding",
        r"\bunembed\w*",
        "block",
        "The model's last step, U: a (vocabulary, C) matrix, one row a token, that turns the "
        "final vector of the residual stream, after the final LayerNorm, into one logit per "
        "token of the vocabulary (logits = LN_f(x) Uᵀ). Here its own weights, not the "
        "embedding's.",
    ),
    Term(
        "logit lens",
        "logit-lens",
        r"\blogit lens\b",
        "block",
        "Reading the residual stream part-way through a model (after the embedding, after each "
        "attention, after each MLP) with the model's own final LayerNorm and unembedding: the "
        "next-token distribution the model has so far (nostalgebraist, 2020).",
    ),
    Term(
        "block",
        "block",
        r"\btransformer blocks?\b",
        "block",
        "One layer of a transformer: an attention and an MLP, each reading a LayerNorm of the "
        "residual stream and adding its output back to it. A model is a stack of blocks.",
    ),
    Term(
        "encoder",
        "encoder",
        r"\bencoders?\b",
        "cross_attention",
        "The half of an encoder-decoder transformer that reads the source: self-attention with "
        "no causal mask (every source position reads every position, itself included, but the "
        "padding) and MLPs, block after block. "
        "Its output is what the decoder's cross-attention reads keys and values from.",
    ),
    Term(
        "decoder",
        "decoder",
        r"\bdecoders?\b",
        "cross_attention",
        "The half of an encoder-decoder transformer that writes the target, one token a step: "
        "causal self-attention over what it has written, cross-attention to the encoder's "
        "output, and MLPs. (A decoder-only model, as GPT, has no cross-attention.)",
    ),
    Term(
        "greedy decoding",
        "greedy-decoding",
        r"\bgreedy\b",
        "cross_attention",
        "Writing with a model by taking, at every step, the token it finds likeliest (the "
        "argmax of its logits), then feeding that token back in for the next step; no sampling.",
    ),
    Term(
        "teacher forcing",
        "teacher-forcing",
        r"\bteacher[- ]forc\w*",
        "cross_attention",
        "Feeding a decoder the right tokens so far instead of its own, so that every step is "
        "computed in one pass: how a decoder is trained, and how its steps can be scored on "
        "data where the right output is known.",
    ),
    Term(
        "start token <s>",
        "start-token",
        r"<s>",
        "cross_attention",
        "A token that is not a letter or a word, put first in every target: the decoder's first "
        "step reads it, since nothing has been written yet.",
    ),
    Term(
        "end token </s>",
        "end-token",
        r"</s>",
        "cross_attention",
        "The token a decoder writes to say it has finished; writing stops there. Training "
        "targets end with it, so the model learns when to write it.",
    ),
)

BY_NAME = {term.name: term for term in TERMS}


def glossary_link(name: str) -> str:
    """The address of a term's entry, for a page that links a term it teaches itself."""
    return BY_NAME[name].href


def in_order() -> list[Term]:
    """The glossary's entries, alphabetically."""
    return sorted(TERMS, key=lambda term: term.name.casefold())


# Markdown links, inline code and LaTeX are left as they are: a term inside them is not prose
_SKIP = re.compile(r"\[[^\]]*\]\([^)]*\)|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", re.DOTALL)


# Pure, asked on every rerun by every stage block. Its texts carry the settings (a seed up to
# 99,999, T, d_model, a student's sentence), so a class keeps bringing new ones: they live in the
# shared byte budget (state.BUDGET, least recently used out first), each entry counted at its
# key (the text) and its value (the text linked), never kept for the server's life.
@state.cached
def linked(text: str, lesson: int) -> str:
    """`text` with the first use of each term taught after `lesson` made a link to its entry
    (a term already linked in the text is left as it is)."""
    for term in TERMS:
        if term.lesson <= lesson or term.href in text:
            continue
        text = _link_first(text, term)
    return text


def _link_first(text: str, term: Term) -> str:
    position = 0
    for skipped in [*_SKIP.finditer(text), None]:
        end = len(text) if skipped is None else skipped.start()
        found = re.search(term.pattern, text[position:end])
        if found:
            start, stop = position + found.start(), position + found.end()
            return f"{text[:start]}[{text[start:stop]}]({term.href}){text[stop:]}"
        if skipped is None:
            return text
        position = skipped.end()
    return text


def unlinked_uses(text: str, lesson: int) -> list[str]:
    """The terms taught after `lesson` that `text` uses, at their first use, outside a link to
    their entry (the test's reading of a page)."""
    missing = []
    for term in TERMS:
        if term.lesson <= lesson:
            continue
        plain = _SKIP.sub(lambda m: " " * len(m.group()), text)
        first = re.search(term.pattern, plain)
        if first is None:
            continue
        links = [m for m in re.finditer(r"\[([^\]]*)\]\(([^)]*)\)", text)]
        before = [m for m in links if m.start() <= first.start() and m.group(2) == term.href]
        earlier_link = any(m.start() < first.start() for m in before)
        if not earlier_link:
            missing.append(term.name)
    return missing
