"""The corpus the language model reads: tiny Shakespeare, shipped in this repository.

Provenance: karpathy/char-rnn, `data/tinyshakespeare/input.txt` (commit 6f9487a6fe5b, MIT
repository; the text is Shakespeare's, public domain), 1,115,394 bytes, stored xz-compressed as
`data/tinyshakespeare.txt.xz`. Nothing is downloaded at run time.

Tokens are characters: each token is one glyph a chart's axis can print, a student's text maps to
tokens one for one, and there is no tokenizer to train or explain. The vocabulary is the 65
characters of the corpus. The split is nanoGPT's shakespeare_char: the first 90 % trains, the last
10 % is held out.
"""

from __future__ import annotations

import lzma
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch
from torch import Tensor

CORPUS = Path(__file__).resolve().parent / "data" / "tinyshakespeare.txt.xz"
CORPUS_BYTES = 1_115_394
TRAIN_SHARE = 0.9
TRAIN_CHARS = int(TRAIN_SHARE * CORPUS_BYTES)  # 1,003,854: what the model trained on


# These caches hold fixed data for the process's life, outside the dashboard's byte budget
# (dashboard/state.py), each bounded by what it is: text() the corpus, one 1.1 MB string;
# vocabulary() its 65 characters; lookup() one (128,) table, 1 KiB; split() two entries at most,
# "train" 8.0 MB and "held_out" 0.9 MB of int64 ids (any other part raises, and nothing is kept).
# The app calls vocabulary() (so it holds text()) and lookup(); split() is for training, the
# build's figures and the tests.
@cache
def text() -> str:
    """The whole corpus as one string."""
    return lzma.decompress(CORPUS.read_bytes()).decode("utf-8")


@cache
def vocabulary() -> str:
    """The corpus's characters, sorted: token id i is vocabulary()[i]."""
    return "".join(sorted(set(text())))


def encode(chars: str) -> Tensor:
    """(T,) token ids of a string of the vocabulary's characters (ValueError naming the others)."""
    vocab = vocabulary()
    unknown = sorted(set(chars) - set(vocab))
    if unknown:
        raise ValueError(
            "characters outside the model's vocabulary: "
            + " ".join(repr(c) for c in unknown)
            + f" (it knows the {len(vocab)} characters of tiny Shakespeare)"
        )
    codes = torch.frombuffer(bytearray(chars.encode("ascii")), dtype=torch.uint8)  # (T,)
    return lookup()[codes.long()]  # every character of the vocabulary is ASCII (tested)


@cache
def lookup() -> Tensor:
    """(128,) the token id of each ASCII code (-1 where the vocabulary has none)."""
    table = torch.full((128,), -1, dtype=torch.long)
    for i, c in enumerate(vocabulary()):
        table[ord(c)] = i
    return table


def decode(ids: Tensor | list[int]) -> str:
    """The characters of token ids."""
    vocab = vocabulary()
    return "".join(vocab[int(i)] for i in ids)


@cache
def split(part: str) -> Tensor:
    """The token ids of the "train" (first 90 %) or "held_out" (last 10 %) part of the corpus."""
    if part not in ("train", "held_out"):
        raise ValueError(f"part must be 'train' or 'held_out', got {part!r}")
    ids = encode(text())
    cut = int(TRAIN_SHARE * len(ids))
    # a copy: a slice would keep every id of the corpus (8.9 MB) alive in each part's entry
    return (ids[:cut] if part == "train" else ids[cut:]).clone()


def bigram_loss() -> float:
    """The baseline: held-out cross-entropy (nats/char) of the best bigram model fitted on the
    training part (counts with add-one smoothing), P(next | current)."""
    V = len(vocabulary())
    train, held = split("train"), split("held_out")
    counts = torch.ones(V, V)  # (current, next), add-one smoothing
    counts.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1), accumulate=True)
    log_p = (counts / counts.sum(1, keepdim=True)).log()  # (V, V)
    return float(-log_p[held[:-1], held[1:]].mean())


GLYPHS = {" ": "␣", "\n": "⏎"}  # characters a chart's axis would show as nothing


@dataclass(frozen=True, eq=False)
class Reading:
    """A student's text as the model reads it: token ids, their glyphs, what was changed."""

    ids: Tensor  # (T,)
    tokens: tuple[str, ...]  # one glyph per token (a space is ␣, a newline ⏎)
    notice: str | None  # what was dropped or cut, in a sentence; None when nothing was


def read(text: str, context: int) -> Reading:
    """The model's reading of `text`: characters it does not know dropped, at most `context`
    kept (the first). ValueError when no character is left to read."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    vocab = set(vocabulary())
    unknown = sorted(set(text) - vocab)
    kept = "".join(c for c in text if c in vocab)
    notes = []
    if unknown:
        shown = " ".join(repr(c) for c in unknown[:8]) + (" …" if len(unknown) > 8 else "")
        notes.append(
            f"The model knows only the {len(vocab)} characters of tiny Shakespeare: "
            f"{len(text) - len(kept)} of yours were dropped ({shown})."
        )
    if not kept:
        raise ValueError(
            "The model has nothing to read: type some text in English letters and punctuation "
            "(it knows the characters of tiny Shakespeare)"
        )
    if len(kept) > context:
        notes.append(
            f"The text has {len(kept)} characters the model knows; it reads at most {context}: "
            f"the first {context} are used."
        )
        kept = kept[:context]
    tokens = tuple(GLYPHS.get(c, c) for c in kept)
    return Reading(encode(kept), tokens, " ".join(notes) or None)
