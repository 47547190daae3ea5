"""The shipped training curves of the bugs that still train (curves.json), and how to read them.

Training every silent bug takes about a minute, so the curves ship as a small JSON file made by
COMMAND (attention/bugs/training.py) and the lesson reads it with `load_curves`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CURVES_PATH = Path(__file__).resolve().parent / "curves.json"
COMMAND = "python -m attention.bugs.training"
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
