"""Rebuild the shipped checkpoints: `python -m attention.tiny.build` (seed 0, every task).

Prints each task's training time, held-out accuracy, file size and head labels (with the
labelled kind's row score and TransformerLens's detector score, TL)."""

from __future__ import annotations

import time

import torch

from attention.tiny.diagnostics import head_reports
from attention.tiny.tasks import TASKS
from attention.tiny.training import evaluate, save, train

SEED = 0


def main() -> None:
    torch.set_num_threads(1)
    for name in TASKS:
        start = time.perf_counter()
        run = train(name, seed=SEED)
        seconds = time.perf_counter() - start
        path = save(run)
        labels = ", ".join(
            f"L{r.layer}H{r.head} {r.label}"
            + (f" (ours {r.row_scores[r.kind]:.2f}, TL {r.scores[r.kind]:.2f})" if r.kind else "")
            for r in head_reports(run.model, run.task)
        )
        print(
            f"{name:15} {seconds:5.2f} s  held-out accuracy {evaluate(run.model, run.task):.3f}  "
            f"{path.stat().st_size / 1024:5.1f} KiB  {labels}"
        )


if __name__ == "__main__":
    main()
