"""Bugs that still train: attention.tiny's tasks trained through a mistaken layer forward.

Most of the classic mistakes raise nothing and the loss still falls; the curves show what they
cost (lower accuracy, slower learning) or what they fake (a look-ahead that learns suspiciously
fast). Training every bug takes about a minute, so the curves ship as a small JSON file made by

    python -m attention.bug_training

and the lesson reads that file (`load_curves`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from attention.bugs import SILENT_BUGS, run_buggy
from attention.tiny import held_out, train
from attention.tiny.model import LayerForward

CURVES_PATH = Path(__file__).resolve().parent / "bug_curves.json"
COMMAND = "python -m attention.bug_training"
CURVE_TASKS = ("induction", "previous_token")  # the hardest and the easiest task
CORRECT = "correct"  # the curve of the layer without a bug
REACHED = 0.9  # "steps to learn": the first record whose batch accuracy is at least this


@dataclass(frozen=True)
class Curve:
    """One training run: batch loss and accuracy over the steps, and the held-out accuracy."""

    task: str
    bug: str  # a bug name, or CORRECT
    seed: int
    steps: tuple[int, ...]
    loss: tuple[float, ...]
    accuracy: tuple[float, ...]
    held_out: float  # accuracy on the task's held-out data, through the same forward
    reached: int | None  # the first step whose batch accuracy reached REACHED (None: never)


def buggy_forward(name: str, seed: int = 0) -> LayerForward:
    """A layer_forward for attention.tiny that makes the mistake `name` (dropout from its own
    seeded generator, so a run is reproducible)."""
    generator = torch.Generator().manual_seed(seed)

    def forward(layer, x, mask):
        return run_buggy(name, layer, x, mask, generator=generator)

    return forward


def train_curve(task: str, bug: str = CORRECT, *, seed: int = 0, steps: int | None = None) -> Curve:
    """Train the task's TinyTransformer through the bug (or correctly) and record the curve."""
    if bug != CORRECT and bug not in SILENT_BUGS:
        raise ValueError(f"only silent bugs train; {bug!r} is not one of {', '.join(SILENT_BUGS)}")
    forward = None if bug == CORRECT else buggy_forward(bug, seed)
    run = train(task, seed=seed, steps=steps, layer_forward=forward)
    ids, targets, scored = held_out(run.task)
    with torch.no_grad():
        logits = run.model(ids, layer_forward=forward).logits  # (n, T, vocab)
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


def load_curves(path: Path = CURVES_PATH) -> dict[tuple[str, str], Curve]:
    """The shipped curves, by (task, bug)."""
    if not path.exists():
        raise ValueError(f"no training curves at {path}; make them with {COMMAND}")
    payload = json.loads(path.read_text())
    curves = {}
    for run in payload["runs"]:
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in run.items()}
        curves[run["task"], run["bug"]] = Curve(**fields)
    return curves


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
