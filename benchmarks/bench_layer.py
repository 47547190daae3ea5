"""Traced forward vs nn.MultiheadAttention(need_weights=True, average_attn_weights=False).

    python benchmarks/bench_layer.py [--repeats 30]

Prints, per shape, the median time of each, their ratio (target <= 1.5) and the peak memory the
forward added (resident set high-water mark, Linux). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attention import seeded_layer

SHAPES = [(1, 128, 512, 8), (1, 512, 512, 8)]  # (B, T, C, H)


def rss_kib(field: str) -> int:
    """VmRSS or VmHWM of this process in KiB (0 where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_added_mib(fn) -> float:
    """Peak resident memory added while fn runs, in MiB (resets the high-water mark first)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return float("nan")
    before = rss_kib("VmRSS")
    result = fn()
    peak = rss_kib("VmHWM")
    del result
    return (peak - before) / 1024


def paired_medians(first, second, repeats: int) -> tuple[float, float]:
    """Median milliseconds of two callables, timed alternately so drift hits both alike."""
    for _ in range(3):  # warm-up
        first(), second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, bucket in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            bucket.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[0]), statistics.median(times[1])


def reference(layer) -> nn.MultiheadAttention:
    C, H = layer.d_model, layer.n_heads
    mha = nn.MultiheadAttention(C, H, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.W_q.weight, layer.W_k.weight, layer.W_v.weight]))
        mha.out_proj.weight.copy_(layer.W_o.weight)
    return mha.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, no_grad, float32")
    header = f"{'B,T,C,H':>16} {'traced ms':>10} {'MHA ms':>8} {'ratio':>6} {'traced MiB':>11} "
    print(header + f"{'MHA MiB':>8}")
    for B, T, C, H in SHAPES:
        layer = seeded_layer(0, C, H).eval()
        mha = reference(layer)
        x = torch.randn(B, T, C, generator=torch.Generator().manual_seed(0))
        blocked = ~torch.ones(T, T, dtype=torch.bool).tril()
        traced = partial(layer, x, "causal")
        baseline = partial(mha, x, x, x, attn_mask=blocked, need_weights=True,
                           average_attn_weights=False)  # fmt: skip
        with torch.no_grad():
            ours, theirs = paired_medians(traced, baseline, args.repeats)
            ours_mib, theirs_mib = peak_added_mib(traced), peak_added_mib(baseline)
        shape = f"{B},{T},{C},{H}"
        print(f"{shape:>16} {ours:>10.2f} {theirs:>8.2f} {ours / theirs:>6.2f} "
              f"{ours_mib:>11.1f} {theirs_mib:>8.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
