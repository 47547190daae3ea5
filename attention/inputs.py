"""Where X comes from: seeded random embeddings, a sentence's tokens, the classic worked example,
or a matrix a student typed."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attention.layer import MultiHeadSelfAttention, seeded_layer
from attention.positions import sinusoidal_positions  # re-exported: inputs used to define it

# A word is a run of letters, digits or underscores (any script); every other visible
# character (punctuation, an emoji) is a token of its own.
TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, eq=False)
class Embedded:
    """An input sequence: the token labels and X (T, C), with a notice worth showing, if any."""

    tokens: tuple[str, ...]
    x: Tensor  # (T, C)
    notice: str | None = None


def x_seed(seed: int) -> int:
    """The seed of X's own random stream, derived from the lesson's seed.

    The layer's weights come from `torch.manual_seed(seed)` (as the tutorials do); drawing X from
    that same stream would make X's rows and W_q's rows correlated (mean cosine about -0.35),
    so Q = X W_q had a strong negative diagonal that students read meaning into. A hash of the
    seed gives X a stream of its own: x_seed = blake2b("x", seed) as a 63-bit integer."""
    digest = hashlib.blake2b(f"x\x00{seed}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def random_embeddings(t: int, d_model: int, seed: int) -> Embedded:
    """X ~ N(0, 1) of shape (T, C), fixed by the seed (a stream independent of the layer's
    weights: see x_seed); tokens are labelled t0, t1, ..."""
    check_size(t, d_model)
    generator = torch.Generator().manual_seed(x_seed(seed))
    x = torch.randn(t, d_model, generator=generator)  # (T, C)
    return Embedded(tokens=tuple(f"t{i}" for i in range(t)), x=x)


def tokenize(text: str) -> list[str]:
    """Split text into words and single punctuation marks: "Hi, you!" -> [Hi, ",", you, "!"]."""
    return TOKEN_PATTERN.findall(text)


def token_vector(token: str, d_model: int, seed: int) -> Tensor:
    """One deterministic N(0, 1) vector (C,) per distinct token (case-insensitive) and seed."""
    digest = hashlib.blake2b(f"{seed}\x00{token.lower()}".encode(), digest_size=8).digest()
    generator = torch.Generator().manual_seed(int.from_bytes(digest, "little") >> 1)
    return torch.randn(d_model, generator=generator)  # (C,)


def sentence_embeddings(
    text: str, d_model: int, *, seed: int, max_len: int, positional: bool = True
) -> Embedded:
    """X (T, C) for a sentence: a vector per token (+ sinusoidal positions); cut to max_len."""
    if not isinstance(text, str):
        raise ValueError(f"the sentence must be text, got {type(text).__name__}")
    tokens = tokenize(text)
    if not tokens:
        raise ValueError("the sentence has no tokens: type at least one word")
    check_size(1, d_model)
    notice = None
    if len(tokens) > max_len:
        notice = f"The sentence has {len(tokens)} tokens; only the first {max_len} are used."
        tokens = tokens[:max_len]
    x = torch.stack([token_vector(tok, d_model, seed) for tok in tokens])  # (T, C)
    if positional:
        x = x + sinusoidal_positions(len(tokens), d_model)
    return Embedded(tokens=tuple(tokens), x=x, notice=notice)


@dataclass(frozen=True, eq=False)
class WorkedExample:
    """The classic 3-token, 2-dimension masked self-attention example (StatQuest's)."""

    embedded: Embedded
    layer: MultiHeadSelfAttention
    mask: str  # "causal"
    mask_value: float  # -1e9, as the tutorial fills


WORKED_ENCODINGS = ((1.16, 0.23), (0.57, 1.36), (4.41, -2.16))
WORKED_SEED = 42


def tutorial_attention(x: Tensor) -> Tensor:
    """The worked example as the tutorial writes it (StatQuest's masked self-attention), three
    tokens (3, 2) in, (3, 2) out. Lesson 5 shows this source; a test holds it equal to the layer.
    Like the tutorial it seeds torch's global generator: call it inside torch.random.fork_rng."""
    torch.manual_seed(42)
    W_q = nn.Linear(2, 2, bias=False)  # then W_k, W_v, in this order
    W_k = nn.Linear(2, 2, bias=False)
    W_v = nn.Linear(2, 2, bias=False)
    q, k, v = W_q(x), W_k(x), W_v(x)
    scaled = q @ k.T / k.size(1) ** 0.5
    mask = torch.tril(torch.ones(3, 3)) == 0  # True = blocked
    masked = scaled.masked_fill(mask, -1e9)
    weights = torch.softmax(masked, dim=1)
    return weights @ v


def worked_example(x: Tensor | None = None) -> WorkedExample:
    """The classic preset: d_model 2, one head, no W_o, seed 42 right before the layer, causal
    mask filled with -1e9. Pass x (3, 2) to replace the encodings, keeping the weights."""
    # as the tutorial: torch.manual_seed(42) right before the layer fixes W_q, W_k, W_v in order
    layer = seeded_layer(WORKED_SEED, 2, 1, bias=False, out_proj=False)
    x = torch.tensor(WORKED_ENCODINGS) if x is None else x  # (T, C) = (3, 2)
    tokens = tuple(f"x{i + 1}" for i in range(x.shape[0]))
    return WorkedExample(Embedded(tokens, x), layer, mask="causal", mask_value=-1e9)


def check_size(t: int, d_model: int) -> None:
    """ValueError unless both sizes are whole numbers of at least 1."""
    for name, value in (("sequence length", t), ("d_model", d_model)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")


def parse_matrix(
    rows: list[list[object]], *, max_rows: int, max_cols: int, max_abs: float = 1e4
) -> Tensor:
    """A user-edited matrix (rows of numbers or numeric strings) as a float tensor (rows, cols).

    ValueError names the first problem: no rows, ragged rows, a blank or non-number, NaN or
    infinity, a value beyond max_abs, or too many rows or columns."""
    if len(rows) == 0:
        raise ValueError("the matrix has no rows")
    if len(rows) > max_rows:
        raise ValueError(f"the matrix has {len(rows)} rows; at most {max_rows} are allowed")
    width = len(rows[0])
    if width == 0:
        raise ValueError("the matrix has no columns")
    if width > max_cols:
        raise ValueError(f"the matrix has {width} columns; at most {max_cols} are allowed")
    values = []
    for r, row in enumerate(rows, start=1):
        if len(row) != width:
            raise ValueError(f"row {r} has {len(row)} numbers but row 1 has {width}")
        values.append([parse_cell(cell, r, c) for c, cell in enumerate(row, start=1)])
    for r, row in enumerate(values, start=1):
        for c, value in enumerate(row, start=1):
            if abs(value) > max_abs:
                raise ValueError(
                    f"row {r}, column {c}: {value:g} is too large (limit ±{max_abs:g})"
                )
    return torch.tensor(values, dtype=torch.float32)


def parse_cell(cell: object, r: int, c: int) -> float:
    """One cell as a finite float, or ValueError naming the cell."""
    where = f"row {r}, column {c}"
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        raise ValueError(f"{where} is blank: every cell needs a number")
    if isinstance(cell, bool):
        raise ValueError(f"{where} is not a number: {cell!r}")
    try:
        value = float(cell.strip() if isinstance(cell, str) else cell)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{where} is not a number: {str(cell)[:20]!r}") from None
    if math.isnan(value):
        raise ValueError(f"{where} is blank or NaN: every cell needs a number")
    if math.isinf(value):
        raise ValueError(f"{where} is infinite: every cell needs a finite number")
    return value
