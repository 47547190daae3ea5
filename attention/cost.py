"""What long context costs: naive attention materialises the T x T matrix; PyTorch's fused
`scaled_dot_product_attention` does not. Timed and profiled on this machine, for lesson 11.

Which kernel SDPA runs depends on the input, so nothing here is assumed: on the CPU a 3-D call
`(B, T, d)` runs the unfused math path (`aten::_scaled_dot_product_attention_math`: bmm, softmax,
bmm, the whole T x T matrix), a 4-D call `(B, H, T, d)` runs
`aten::_scaled_dot_product_flash_attention_for_cpu`. The fused path here is called on
`(B, H, T, d)`, and the profiler reports what ran and what it allocated:

    naive:  scores = q k^T / sqrt(d)       (B, H, T, T)   held
            weights = softmax(scores)      (B, H, T, T)   held
            output = weights v             (B, H, T, d)
    fused:  output = SDPA(q, k, v)         (B, H, T, d)   tiles of the T x T matrix, never whole
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.autograd.profiler import profile

SDPA_IMPLEMENTATION = "aten::_scaled_dot_product"  # the prefix of every kernel SDPA dispatches to


def naive_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """softmax(q k^T / sqrt(d)) v with the (T, T) scores and weights held in memory."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, T)
    return torch.softmax(scores, dim=-1) @ v  # (..., T, d)


def fused_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """PyTorch's `F.scaled_dot_product_attention`, on whatever kernel it picks for these shapes."""
    return F.scaled_dot_product_attention(q, k, v)


@dataclass(frozen=True)
class Profiled:
    """What PyTorch's profiler saw during one call: every aten op and every allocation."""

    ops: tuple[str, ...]  # every aten op, in the order they started
    top_ops: tuple[str, ...]  # the ops the call itself dispatched (no parent op)
    input_shapes: tuple[tuple[tuple[int, ...], ...], ...]  # per op of `ops`, its tensors' shapes
    peak_bytes: int  # the peak of allocations minus frees during the call (profile_memory)

    @property
    def kernel(self) -> str:
        """The kernel SDPA dispatched to, if the call went through SDPA; else the call's own ops
        (naive attention has no one kernel)."""
        chosen = [op for op in self.ops if op.startswith(SDPA_IMPLEMENTATION)]
        return chosen[0] if chosen else ", ".join(self.top_ops)

    def ops_reading(self, rows: int, cols: int) -> tuple[str, ...]:
        """The ops that took a tensor whose last two dimensions are (rows, cols)."""
        return tuple(
            op
            for op, shapes in zip(self.ops, self.input_shapes, strict=True)
            if any(tuple(shape[-2:]) == (rows, cols) for shape in shapes if len(shape) >= 2)
        )


def profile_call(fn: Callable[[Tensor, Tensor, Tensor], Tensor], q: Tensor, k: Tensor,
                 v: Tensor) -> Profiled:  # fmt: skip
    """Run fn(q, k, v) once under PyTorch's profiler (record_shapes, profile_memory): the ops it
    ran and its peak memory, the running sum of the allocator's allocations and frees in time
    order (the profiler's `[memory]` records), measured from zero at the call.

    The autograd profiler itself, which torch.profiler.profile wraps: the wrapper's start asks
    `hasattr(torch, "_inductor")`, which imports the compiler stack (torch._inductor,
    torch._dynamo, ~800 modules, +75 MiB of resident memory on a server) to read one setting
    that only matters on a GPU."""
    with torch.inference_mode():
        fn(q, k, v)  # warm: the first call of a kernel may allocate once-only buffers
        with profile(use_cpu=True, record_shapes=True, profile_memory=True) as prof:
            output = fn(q, k, v)  # a fresh name: freeing nothing held from before
    del output
    records = sorted(
        (event.start_ns(), event.nbytes())
        for event in prof.kineto_results.events()
        if event.name() == "[memory]"
    )
    held = peak = 0
    for _, nbytes in records:  # allocations are positive, frees negative
        held += nbytes
        peak = max(peak, held)
    events = [event for event in prof.function_events if event.name != "[memory]"]
    events.sort(key=lambda event: event.time_range.start)
    return Profiled(
        ops=tuple(event.name for event in events),
        top_ops=tuple(event.name for event in events if event.cpu_parent is None),
        input_shapes=tuple(tuple(tuple(shape) for shape in event.input_shapes) for event in events),
        peak_bytes=peak,
    )


@dataclass(frozen=True)
class Cost:
    T: int
    naive_runs: tuple[float, ...]  # seconds of each timed run of naive attention
    fused_runs: tuple[float, ...]  # seconds of each timed run of fused SDPA
    naive: Profiled  # what the profiler saw naive attention run and allocate
    fused: Profiled  # what the profiler saw SDPA run and allocate
    matrix_bytes: int  # the (T, T) float32 scores and weights naive attention holds, counted
    macs: int  # multiply-adds of both paths, q k^T and weights v: 2 T² d

    @property
    def naive_s(self) -> float:  # median seconds of naive attention
        return statistics.median(self.naive_runs)

    @property
    def naive_best(self) -> float:  # the fastest run: least disturbed by other work (timeit)
        return min(self.naive_runs)

    @property
    def fused_best(self) -> float:
        return min(self.fused_runs)


def check_lengths(lengths: tuple[int, ...]) -> tuple[int, ...]:
    bad = [T for T in lengths if isinstance(T, bool) or not isinstance(T, int) or T < 1]
    if not lengths or bad:
        raise ValueError(f"lengths must be whole numbers of at least 1, got {lengths!r}")
    return lengths


def measure_costs(lengths: tuple[int, ...], d: int = 64, repeats: int = 5) -> list[Cost]:
    """Wall time of `repeats` runs and one profiled run of both, on one head of width d,
    q, k, v of shape (B, H, T, d) = (1, 1, T, d), for each T (single-threaded)."""
    check_lengths(lengths)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number of at least 1, got {repeats!r}")
    costs = []
    gen = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    methods = {"naive": naive_attention, "fused": fused_attention}
    try:
        for T in lengths:
            q, k, v = (torch.randn(1, 1, T, d, generator=gen) for _ in range(3))  # (B, H, T, d)
            profiled = {name: profile_call(fn, q, k, v) for name, fn in methods.items()}
            timings: dict[str, list[float]] = {name: [] for name in methods}
            with torch.inference_mode():
                for _ in range(repeats):
                    for name, fn in methods.items():
                        start = time.perf_counter()
                        fn(q, k, v)
                        timings[name].append(time.perf_counter() - start)
            costs.append(
                Cost(T, tuple(timings["naive"]), tuple(timings["fused"]), profiled["naive"],
                     profiled["fused"], 2 * T * T * q.element_size(), 2 * T * T * d)
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
