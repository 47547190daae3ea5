"""FlashAttention's tiling (Dao et al. 2022, algorithm 1): attention computed tile by tile with
the online softmax, never holding the T x T matrix.

For each block of queries, walk the blocks of keys; keep per query row a running max m, a
running normaliser l and an output accumulator O that are rescaled when m grows:

    S = Q_i K_j^T * scale                 (block_q, block_k)    this tile's scores
    m_new = max(m, rowmax(S))                                   the running max
    P = exp(S - m_new)                                          this tile's unnormalised weights
    l_new = exp(m - m_new) * l + rowsum(P)                      the running normaliser
    O_new = exp(m - m_new) * O + P V_j                          the running (unnormalised) output
    ... after the last key block:  output = O / l

Lesson 11's check-yourself questions, `at_scale_questions`, walk the tiles too.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.drills import Drill, Given, f4, factor, shown
from attention.questions import Row, masked_row, number, whole
from attention.trace import AttentionTrace

# What tile_progress marks each score with, at one step of the walk.
TO_COME, DONE, CURRENT = 0, 1, 2


@dataclass(frozen=True, eq=False)
class TileStep:
    """One tile of the walk: which rows and columns, and the running state before and after."""

    q_block: int
    k_block: int
    rows: range  # query positions of the tile
    cols: range  # key positions of the tile
    skipped: bool  # True when the causal mask blocks the whole tile (no work done)
    m_before: Tensor  # (..., block rows)
    m_after: Tensor
    l_before: Tensor
    l_after: Tensor
    acc_before: Tensor  # (..., block rows, d_v)
    acc_after: Tensor


@dataclass(frozen=True, eq=False)
class TiledResult:
    output: Tensor  # (..., T_q, d_v)
    steps: tuple[TileStep, ...]
    tile_bytes: int  # the largest working set of one tile (S and P), in bytes
    full_bytes: int  # S and P at full size, (T_q, T_k) each, as plain attention holds them


def check_block(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    return value


def tiled_attention(
    q: Tensor, k: Tensor, v: Tensor, *, block_q: int, block_k: int, causal: bool = False
) -> TiledResult:
    """softmax(q k^T / sqrt(d)) v for q (..., T_q, d), k (..., T_k, d), v (..., T_k, d_v),
    computed tile by tile; equal to `F.scaled_dot_product_attention(q, k, v, is_causal=causal)`.
    Every block size works, including ones that do not divide T."""
    check_block("block_q", block_q)
    check_block("block_k", block_k)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError("q, k need the same d and k, v the same T_k")
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    batch = q.shape[:-2]
    output = torch.empty(*batch, T_q, v.shape[-1], dtype=q.dtype)
    steps = []
    for qb, r0 in enumerate(range(0, T_q, block_q)):
        rows = range(r0, min(r0 + block_q, T_q))
        q_i = q[..., rows.start : rows.stop, :]  # (..., Br, d)
        m = torch.full((*batch, len(rows)), float("-inf"), dtype=q.dtype)  # running max
        l = torch.zeros(*batch, len(rows), dtype=q.dtype)  # running normaliser  # noqa: E741
        acc = torch.zeros(*batch, len(rows), v.shape[-1], dtype=q.dtype)  # running output
        for kb, c0 in enumerate(range(0, T_k, block_k)):
            cols = range(c0, min(c0 + block_k, T_k))
            if causal and cols.start > rows.stop - 1:  # every key is in every row's future
                steps.append(TileStep(qb, kb, rows, cols, True, m, m, l, l, acc, acc))
                continue
            S = (q_i @ k[..., cols.start : cols.stop, :].transpose(-2, -1)) * scale  # (.., Br, Bc)
            if causal:
                future = torch.tensor(cols)[None, :] > torch.tensor(rows)[:, None]  # (Br, Bc)
                S = S.masked_fill(future, float("-inf"))
            m_new = torch.maximum(m, S.amax(dim=-1))  # (..., Br)
            P = torch.exp(S - m_new[..., None])  # (..., Br, Bc)
            rescale = torch.exp(m - m_new)  # (..., Br): 0 on the first tile (m = -inf)
            l_new = rescale * l + P.sum(dim=-1)  # (..., Br)
            acc_new = rescale[..., None] * acc + P @ v[..., cols.start : cols.stop, :]
            steps.append(TileStep(qb, kb, rows, cols, False, m, m_new, l, l_new, acc, acc_new))
            m, l, acc = m_new, l_new, acc_new  # noqa: E741
        output[..., rows.start : rows.stop, :] = acc / l[..., None]
    item = q.element_size()
    tile_bytes = 2 * min(block_q, T_q) * min(block_k, T_k) * item * max(1, math.prod(batch))
    full_bytes = 2 * T_q * T_k * item * max(1, math.prod(batch))  # the same two matrices, whole
    return TiledResult(output, tuple(steps), tile_bytes, full_bytes)


def sdpa_difference(
    q: Tensor, k: Tensor, v: Tensor, output: Tensor, *, causal: bool = False
) -> float:
    """max |output - F.scaled_dot_product_attention(q, k, v, is_causal=causal)|: how far a tiled
    output (..., T_q, d_v) is from PyTorch's own attention."""
    with torch.inference_mode():
        reference = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return float((output - reference).abs().max())


def tile_progress(result: TiledResult, index: int) -> Tensor:
    """(T_q, T_k) int8: where the walk is at step `index`, each score marked with its tile's
    state: CURRENT (2) the tile being computed, DONE (1) the tiles before it, TO_COME (0)."""
    if not 0 <= index < len(result.steps):
        raise ValueError(f"index must lie in 0..{len(result.steps) - 1}, got {index}")
    T_q, T_k = result.output.shape[-2], result.steps[-1].cols.stop
    progress = torch.full((T_q, T_k), TO_COME, dtype=torch.int8)
    for walked, step in enumerate(result.steps[: index + 1]):
        state = CURRENT if walked == index else DONE
        progress[step.rows.start : step.rows.stop, step.cols.start : step.cols.stop] = state
    return progress


def accumulator_progress(result: TiledResult, index: int) -> tuple[Tensor, Tensor]:
    """The output accumulator O of every query row after step `index`, (..., T_q, d_v), and
    where the walk has not reached yet, (T_q, d_v) bool (True across a row still to come). A row
    of a finished query block holds its last O (its output is O / ℓ); the current block's rows
    hold O after this tile; rows to come hold O's starting value, 0. O is unnormalised, as the
    algorithm keeps it."""
    if not 0 <= index < len(result.steps):
        raise ValueError(f"index must lie in 0..{len(result.steps) - 1}, got {index}")
    T_q, d_v = result.output.shape[-2:]
    O = torch.zeros_like(result.output)  # (..., T_q, d_v): starts at 0  # noqa: E741
    waiting = torch.ones(T_q, d_v, dtype=torch.bool)  # (T_q, d_v)
    for step in result.steps[: index + 1]:  # in walk order: the last write to a row is its latest
        O[..., step.rows.start : step.rows.stop, :] = step.acc_after
        waiting[step.rows.start : step.rows.stop, :] = False
    return O, waiting


# Check yourself (lesson 11)


@torch.no_grad()  # numbers to ask about, nothing to train
def at_scale_questions(
    trace: AttentionTrace, labels, causal: bool, page_blocks: tuple[int, int], seed: int
) -> tuple[Drill, ...]:
    """Lesson 11: how many tiles FlashAttention computes, and one row's running max m and
    normaliser ℓ after its second key tile, for tile sizes the page is not showing."""
    rng = random.Random(seed)
    T = len(labels)
    sizes = [b for b in range(1, T + 1) if b not in page_blocks] or [1]
    block_q, block_k = rng.choice(sizes), rng.choice(sizes)
    kv = trace.kv_head(0)
    q, k, v = trace.q[0], trace.k[kv], trace.v[kv]  # (T, d_head)
    walk = tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    rows = [i for i in range(T) if not causal or i >= block_k] or [T - 1]
    i = rng.choice(rows)
    n_k = math.ceil(T / block_k)
    tile = min(1, n_k - 1)
    per_row = tiled_attention(q, k, v, block_q=1, block_k=block_k, causal=causal)
    allowed = trace.allowed.expand(trace.weights.shape)[0, i]  # (T,)
    by_hand = row_walk(i, masked_row(trace.scaled[0, i], allowed), block_k, tile)
    step = per_row.steps[i * n_k + tile]
    return (
        tile_count_question(walk, T, block_q, block_k, causal),
        running_max_question(by_hand, labels, float(step.m_after[0])),
        running_normaliser_question(by_hand, labels, float(step.l_after[0])),
    )


def tile_count_question(
    walk: TiledResult, T: int, block_q: int, block_k: int, causal: bool
) -> Drill:
    """How many tiles the walk computes: all ⌈T/B_r⌉ × ⌈T/B_c⌉ but those wholly in the future."""
    computed = sum(not s.skipped for s in walk.steps)
    n_q, n_k = math.ceil(T / block_q), math.ceil(T / block_k)
    skipped = n_q * n_k - computed
    mask = "the causal mask" if causal else "no mask"
    return whole(
        f"T = {T}, tiles of B_r = {block_q} queries × B_c = {block_k} keys, {mask}. How "
        "many tiles does FlashAttention compute (a tile wholly in the future is skipped)?",
        None,
        computed,
        (
            f"⌈{T}/{block_q}⌉ × ⌈{T}/{block_k}⌉ = {n_q} × {n_k} = {n_q * n_k} tiles, "
            f"{skipped} of them wholly in the future and skipped: {computed} computed.",
        ),
    )


@dataclass(frozen=True)
class RowWalk:
    """Query i's scaled scores walked by hand in key tiles of B_c, from the digits the page
    shows: the running max m and normaliser ℓ after tile 0 (m1, l1) and after `tile` (m2, l2)."""

    i: int
    row: Row  # (T,) None where the key is blocked
    block_k: int
    tile: int  # the key tile the questions ask about: 1, or 0 when there is only one
    m1: float
    l1: float
    m2: float
    l2: float

    @property
    def last_key(self) -> int:
        """The last key of tiles 0 … tile."""
        return min(len(self.row), (self.tile + 1) * self.block_k) - 1


def row_walk(i: int, row: Row, block_k: int, tile: int) -> RowWalk:
    """m = the largest allowed score so far; ℓ rescaled by exp(m_old − m_new) when m grows."""
    seen = [s for s in row[: (tile + 1) * block_k] if s is not None]
    first = [s for s in row[:block_k] if s is not None]
    m1, m2 = shown(max(first)), shown(max(seen))
    l1 = sum(shown(math.exp(shown(s) - m1)) for s in first)
    new = [s for s in row[block_k : (tile + 1) * block_k] if s is not None]
    l2 = shown(shown(l1) * shown(math.exp(m1 - m2))) + sum(
        shown(math.exp(shown(s) - m2)) for s in new
    )
    return RowWalk(i, row, block_k, tile, m1, l1, m2, l2)


def running_max_question(by_hand: RowWalk, labels, truth: float) -> Drill:
    """Query i's running max m after key tile `tile`: its largest allowed score so far."""
    i, tile, m2 = by_hand.i, by_hand.tile, by_hand.m2
    return number(
        f"Query {i}'s scaled scores (head 0, blocked keys empty) are below. Walking its keys "
        f"in tiles of B_c = {by_hand.block_k}, what is its running max m after key tile {tile} "
        f"(tiles counted from 0, as positions are: tiles 0 … {tile} hold keys 0 … "
        f"{by_hand.last_key})?",
        Given(tuple(labels), ((f"s′ row {i}", by_hand.row),)),
        truth,
        m2,
        (
            f"Tiles 0 … {tile} hold keys 0 … {by_hand.last_key}; the "
            f"largest allowed score among them is {f4(m2)}.",
        ),
        "m",
    )


def running_normaliser_question(by_hand: RowWalk, labels, truth: float) -> Drill:
    """Query i's running normaliser ℓ after key tile `tile`, rescaled when m grew."""
    i, tile, m1, l1, m2, l2 = (
        by_hand.i,
        by_hand.tile,
        by_hand.m1,
        by_hand.l1,
        by_hand.m2,
        by_hand.l2,
    )
    return number(
        f"The same walk: what is query {i}'s running normaliser ℓ after key tile {tile}, "
        "ℓ = Σ exp(s′ − m) over the keys seen so far?",
        Given(tuple(labels), ((f"s′ row {i}", by_hand.row),)),
        truth,
        l2,
        (
            f"After tile 0: m = {f4(m1)}, ℓ = {f4(l1)}.",
            *(
                (
                    f"Tile {tile}: m becomes {f4(m2)}; ℓ = {f4(l1)} × "
                    f"exp({f4(m1)} − {factor(m2)}) + Σ exp(s′ − {factor(m2)}) over its "
                    f"keys = {f4(l2)}",
                )
                if tile
                else ()
            ),
        ),
        "ℓ",
    )
