"""Tiny transformers trained on synthetic tasks, so students see what attention learns."""

from attention.tiny.diagnostics import (
    SCORES,
    HeadReport,
    head_reports,
    label_head,
)
from attention.tiny.model import TinyOutput, TinyTransformer
from attention.tiny.tasks import TASKS, ModelSize, Task
from attention.tiny.training import History, TrainedRun, evaluate, held_out, load, train

__all__ = [
    "SCORES", "TASKS", "HeadReport", "History", "ModelSize", "Task", "TinyOutput",
    "TinyTransformer", "TrainedRun", "evaluate", "head_reports", "held_out", "label_head",
    "load", "train",
]  # fmt: skip
