"""Rebuild the shipped language model: `python -m attention.lm.build` (seed 0, about 17 minutes
on two CPU cores). Prints the training loss as it goes, then the held-out loss beside the bigram
baseline, every head's scores, and the checkpoint's size."""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from attention.lm.heads import measure, report
from attention.lm.training import RECIPE, SIZE, save, train

SEED = 0


def main() -> None:
    torch.set_num_threads(2)
    start = time.perf_counter()
    print(f"training {SIZE} with {RECIPE}, seed {SEED}", flush=True)

    def progress(step: int, loss: float) -> None:
        print(f"step {step:6}  loss {loss:.3f}  {time.perf_counter() - start:6.0f} s", flush=True)

    run = train(SEED, on_record=progress)
    run = replace(run, figures=measure(run.model))
    path = save(run)
    print(f"trained in {time.perf_counter() - start:.0f} s; {path.stat().st_size / 1e6:.2f} MB")
    print(report(run.model))


if __name__ == "__main__":
    main()
