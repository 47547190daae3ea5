"""Bugs that still train: attention.tiny's tasks trained through a student's layer.

Most of the classic mistakes raise nothing and the loss still falls; the curves show what they
cost (lower accuracy, slower learning) or what they fake (a look-ahead that learns suspiciously
fast). Training every bug takes about a minute, so the curves ship as a small JSON file made by

    python -m attention.bugs.training

and the lesson reads that file (`attention.bugs.load_curves`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from attention.bugs.catalogue import BUGS, SILENT_BUGS
from attention.bugs.curves import COMMAND, CORRECT, CURVE_TASKS, CURVES_PATH, REACHED, Curve
from attention.ops import PLAIN
from attention.tiny import held_out, train


def train_curve(task: str, bug: str = CORRECT, *, seed: int = 0, steps: int | None = None) -> Curve:
    """Train the task's TinyTransformer through the bug (or correctly) and record the curve."""
    if bug != CORRECT and bug not in SILENT_BUGS:
        raise ValueError(f"only silent bugs train; {bug!r} is not one of {', '.join(SILENT_BUGS)}")
    attention_steps, dropout = (
        (PLAIN, 0.0) if bug == CORRECT else (BUGS[bug].steps, BUGS[bug].dropout)
    )
    generator = torch.Generator().manual_seed(seed)  # the dropout's draws: reproducible runs
    run = train(
        task,
        seed=seed,
        steps=steps,
        attention_steps=attention_steps,
        dropout=dropout,
        generator=generator,
    )
    ids, targets, scored = held_out(run.task)
    with torch.no_grad():
        logits = run.model(ids, generator=generator).logits  # (n, T, vocab)
    accuracy = float((logits.argmax(-1) == targets)[scored].float().mean())
    h = run.history
    reached = next((int(s) for s, a in zip(h.steps, h.accuracy, strict=True) if a >= REACHED), None)
    return Curve(
        task=task,
        bug=bug,
        seed=seed,
        steps=tuple(int(s) for s in h.steps),
        loss=tuple(round(float(v), 4) for v in h.loss),
        accuracy=tuple(round(float(v), 4) for v in h.accuracy),
        held_out=round(accuracy, 4),
        reached=reached,
    )


def build_curves(tasks=CURVE_TASKS, seed: int = 0, out=sys.stdout) -> dict:
    """Every silent bug and the correct layer, trained on each task: the JSON payload."""
    runs = []
    for task in tasks:
        for bug in (CORRECT, *SILENT_BUGS):
            curve = train_curve(task, bug, seed=seed)
            print(
                f"{task:15} {bug:25} held-out {curve.held_out:.3f} reached {curve.reached}",
                file=out,
            )
            runs.append(asdict(curve))
    return {"command": COMMAND, "seed": seed, "torch": torch.__version__, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description="Train every silent bug; write the curves.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=CURVES_PATH)
    args = parser.parse_args()
    torch.set_num_threads(1)
    payload = build_curves(seed=args.seed)
    args.out.write_text(json.dumps(payload, separators=(",", ":")) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
