"""Worked arithmetic for one cell and one output row, so a page can show the sums by hand.

Every number here is read from a trace or recomputed from its tensors with the same formula;
`tests/attention/test_explain.py` checks they agree with the trace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.trace import AttentionTrace


@dataclass(frozen=True, eq=False)
class CellWorking:
    """How weights[head, i, j] comes about, one step at a time."""

    head: int
    i: int  # query position
    j: int  # key position
    q_i: Tensor  # (d_head,)
    k_j: Tensor  # (d_head,)
    products: Tensor  # (d_head,) q_i * k_j elementwise
    score: float  # sum(products) = scores[head, i, j]
    scale: float  # 1/sqrt(d_head) by default
    scaled: float  # score x scale
    allowed: bool  # the mask's decision
    row_max: float  # max of the allowed scaled scores of row i (subtracted for stability)
    exp: float  # exp(scaled - row_max), 0 when blocked
    normaliser: float  # sum over allowed keys of exp(scaled - row_max)
    weight: float  # exp / normaliser = weights[head, i, j]


@dataclass(frozen=True, eq=False)
class OutputRowWorking:
    """heads[head, i] as the weighted sum of value rows: sum_j weights[i, j] v_j."""

    head: int
    i: int
    weights: Tensor  # (T,) row i of the attention weights
    v: Tensor  # (T, d_head) value rows
    terms: Tensor  # (T, d_head) weights[j] * v_j
    output: Tensor  # (d_head,) sum of the terms = heads[head, i]


def head_view(trace: AttentionTrace, name: str, head: int) -> Tensor:
    """Query head `head`'s slice of a per-head stage of an unbatched trace: (T, .). For k and v
    that is the K/V head it reads, trace.kv_head(head) (itself unless heads share K and V)."""
    tensor = trace.stage(name)
    if tensor.ndim != 3:
        raise ValueError(f"expected an unbatched trace; {name} has shape {tuple(tensor.shape)}")
    kv = trace.kv_head(head)  # ValueError unless head is a query head 0..H-1
    return tensor[kv] if name in ("k", "v") else tensor[int(head)]


def allowed_matrix(trace: AttentionTrace, head: int = 0) -> Tensor:
    """The bool (T, T) mask one head used (True = may attend)."""
    weights = trace.weights
    return trace.allowed.expand(weights.shape)[head] if weights.ndim == 3 else trace.allowed


def explain_cell(trace: AttentionTrace, head: int, i: int, j: int) -> CellWorking:
    """The arithmetic behind weights[head, i, j] of an unbatched trace."""
    q = head_view(trace, "q", head)  # (T, d_head)
    k = head_view(trace, "k", head)  # (T, d_head): the K/V head query head `head` reads
    T = q.shape[0]
    if not (0 <= i < T and 0 <= j < T):
        raise ValueError(f"query and key positions must lie in 0..{T - 1}, got {i} and {j}")
    allowed = allowed_matrix(trace, head)[i]  # (T,)
    scaled_row = head_view(trace, "scaled", head)[i]  # (T,)
    products = q[i] * k[j]  # (d_head,)
    if bool(allowed.any()):
        row_max = float(scaled_row[allowed].max())
        # blocked keys to -inf before exp: a blocked score far above the row's max would
        # otherwise give exp = inf, and inf * 0 = NaN
        exps = torch.exp((scaled_row - row_max).masked_fill(~allowed, float("-inf")))  # (T,)
        normaliser = float(exps.sum())
    else:
        row_max, exps, normaliser = math.nan, torch.zeros_like(scaled_row), 0.0
    return CellWorking(
        head=head, i=i, j=j, q_i=q[i], k_j=k[j], products=products,
        score=float(head_view(trace, "scores", head)[i, j]), scale=trace.scale,
        scaled=float(scaled_row[j]), allowed=bool(allowed[j]), row_max=row_max,
        exp=float(exps[j]), normaliser=normaliser,
        weight=float(head_view(trace, "weights", head)[i, j]),
    )  # fmt: skip


def explain_output_row(trace: AttentionTrace, head: int, i: int) -> OutputRowWorking:
    """heads[head, i] = sum_j weights[head, i, j] v[head, j] of an unbatched trace."""
    weights = head_view(trace, "weights", head)[i]  # (T,)
    v = head_view(trace, "v", head)  # (T, d_head)
    terms = weights[:, None] * v  # (T, d_head)
    return OutputRowWorking(head, i, weights, v, terms, head_view(trace, "heads", head)[i])


@dataclass(frozen=True)
class TraceChecks:
    """The invariants a page shows live: rows sum to 1, blocked weights exactly 0."""

    max_row_error: float  # max |row sum - 1| over rows with at least one allowed key
    blocked_nonzero: int  # blocked positions whose weight is not exactly 0
    blocked: int  # blocked positions, all heads
    empty_rows: int  # rows with no allowed key (their weights are all 0)
    output_matches: bool  # heads == weights v, recomputed


def check_trace(trace: AttentionTrace) -> TraceChecks:
    """Recompute the invariants from the trace's own tensors."""
    weights = trace.weights  # (..., T, T)
    allowed = trace.allowed.expand(weights.shape)
    has_key = allowed.any(dim=-1)  # (..., T)
    sums = weights.sum(dim=-1)  # (..., T)
    error = float((sums[has_key] - 1).abs().max()) if bool(has_key.any()) else 0.0
    weights_used = trace.weights if trace.dropped is None else trace.dropped
    recomputed = weights_used @ trace.shared("v")  # (..., T, d_head); v per query head
    return TraceChecks(
        max_row_error=error,
        blocked_nonzero=int((weights[~allowed] != 0).sum()),
        blocked=int((~allowed).sum()),
        empty_rows=int((~has_key).sum()),
        output_matches=bool(torch.allclose(recomputed, trace.heads, atol=1e-6)),
    )


def merged(trace: AttentionTrace, name: str) -> Tensor:
    """A per-head stage of an unbatched trace with its heads side by side: (H, T, d) -> (T, H*d).

    For q, k and v this is the full projection X W before the split into heads (k and v: H_kv
    heads, T x H_kv*d)."""
    tensor = trace.stage(name)  # (H, T, d_head); k, v: (H_kv, T, d_head)
    H, T, d_head = tensor.shape
    return tensor.transpose(0, 1).reshape(T, H * d_head)  # (T, C)


def largest_magnitude(trace: AttentionTrace, name: str) -> float:
    """max |value| of a stage over all heads and allowed cells: a colour scale shared by heads."""
    tensor = trace.stage(name)
    if name in ("masked", "weights"):
        tensor = tensor[trace.allowed.expand(tensor.shape)]
    return float(tensor.abs().max()) if tensor.numel() else 1.0


def fused_difference(layer, x: Tensor) -> float:
    """max |fused - separate| over Q, K and V: one C -> 3C projection equals three C -> C ones."""
    with torch.no_grad():
        pairs = list(zip(layer.project_qkv_fused(x), layer.project_qkv(x), strict=True))
    return max(float((fused - separate).abs().max()) for fused, separate in pairs)


def from_printed(trace: AttentionTrace, stage: str, i: int, j: int, digits: int = 4) -> float:
    """The value a student gets by hand from the tables printed to `digits` decimals (head 0):

        scaled[i, j]  = (sum_d round(q_i[d]) round(k_j[d])) x scale
        weights[i, j] = exp(round(s'_ij)) / sum over allowed k of exp(round(s'_ik))
        output[i, j]  = sum_k round(a_ik) round(v_k[j])     (a layer without W_o)

    It differs from the exact value in the last digit or two; a grader accepts both."""

    def r(t: Tensor) -> Tensor:
        return torch.round(t.double(), decimals=digits)

    q, k, v = (head_view(trace, name, 0) for name in ("q", "k", "v"))  # (T, d_head) each
    if stage == "scaled":
        return float((r(q[i]) * r(k[j])).sum() * trace.scale)
    if stage == "weights":
        allowed = allowed_matrix(trace, 0)[i]  # (T,)
        if not bool(allowed[j]):
            return 0.0
        scaled = r(head_view(trace, "scaled", 0)[i])[allowed]  # the row's allowed scores
        return float(torch.exp(r(head_view(trace, "scaled", 0)[i, j])) / torch.exp(scaled).sum())
    if stage == "output":
        return float((r(head_view(trace, "weights", 0)[i]) * r(v[:, j])).sum())
    raise ValueError(f"no hand working for stage {stage!r}: scaled, weights or output")
