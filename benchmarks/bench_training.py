"""Training each tiny task from scratch on one core: seconds per run (target <= 3 s).

    python benchmarks/bench_training.py [--runs 5]

Prints, per task, the median and the slowest of several runs with different seeds, the
held-out accuracy of each run's model, and the machine's load average, so a busy machine shows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from attention.tiny import TASKS, evaluate, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    train("reverse", steps=5)  # warm up torch's kernels and the allocator
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch threads: 1")
    print(f"{'task':15} {'steps':>5} {'median s':>9} {'max s':>6} {'min accuracy':>13}")
    for name, task in TASKS.items():
        times, accuracies = [], []
        for seed in range(args.runs):
            start = time.perf_counter()
            run = train(name, seed=seed)
            times.append(time.perf_counter() - start)
            accuracies.append(evaluate(run.model, run.task))
        print(
            f"{name:15} {task.size.steps:5d} {statistics.median(times):9.2f} {max(times):6.2f} "
            f"{min(accuracies):13.3f}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
