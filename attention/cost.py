"""What long context costs: naive attention materialises the T x T matrix; PyTorch's fused
`scaled_dot_product_attention` does not. Timed on this machine, for the lesson's log-log plot."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor


def naive_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """softmax(q k^T / sqrt(d)) v with the (T, T) scores and weights held in memory."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, T)
    return torch.softmax(scores, dim=-1) @ v  # (..., T, d)


@dataclass(frozen=True)
class Cost:
    T: int
    naive_s: float  # median seconds of naive attention
    fused_s: float  # median seconds of F.scaled_dot_product_attention
    matrix_bytes: int  # the (T, T) float32 matrix naive attention materialises (twice)


def measure_costs(lengths: tuple[int, ...], d: int = 64, repeats: int = 3) -> list[Cost]:
    """Median wall time of both on one head of width d, for each T (single-threaded)."""
    costs = []
    gen = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for T in lengths:
            q, k, v = (torch.randn(1, T, d, generator=gen) for _ in range(3))
            timings = {"naive": [], "fused": []}
            with torch.inference_mode():
                for _ in range(repeats):
                    for name, fn in (
                        ("naive", naive_attention),
                        ("fused", F.scaled_dot_product_attention),
                    ):
                        start = time.perf_counter()
                        fn(q, k, v)
                        timings[name].append(time.perf_counter() - start)
            costs.append(
                Cost(T, statistics.median(timings["naive"]), statistics.median(timings["fused"]),
                     2 * T * T * 4)
            )  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    return costs


def log_slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log y against log x: y ∝ x^slope."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )
