"""Lesson 11's figures: naive attention against F.scaled_dot_product_attention on (1, 1, T, 64).

    python benchmarks/bench_sdpa.py [--lengths 256 1024 2048] [--repeats 5] [--rounds 1]

Prints, per T and per round, each path's time over `repeats` runs (best, median, max), its peak
memory as torch.profiler measures it (profile_memory: the peak running total of allocations
minus frees during one call) and the kernel the profiler saw run. One torch thread, as the
server runs. Not a test: it prints figures (attention.cost.measure_costs, as the page uses).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attention.cost import measure_costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="measure everything this often")
    args = parser.parse_args()
    print(f"{'T':>5} {'path':6} {'best ms':>8} {'median':>8} {'max':>8} {'peak MiB':>9}  kernel")
    for _ in range(args.rounds):
        for cost in measure_costs(tuple(args.lengths), repeats=args.repeats):
            for path, runs, profiled in (("naive", cost.naive_runs, cost.naive),
                                         ("fused", cost.fused_runs, cost.fused)):  # fmt: skip
                ms = [s * 1e3 for s in runs]
                peak = profiled.peak_bytes / 2**20
                print(f"{cost.T:>5} {path:6} {min(ms):8.2f} {statistics.median(ms):8.2f} "
                      f"{max(ms):8.2f} {peak:9.3f}  {profiled.kernel}")  # fmt: skip


if __name__ == "__main__":
    main()
