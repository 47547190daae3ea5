"""Tiny transformers trained on synthetic tasks, so students see what attention learns; lesson
6's questions on them are questions.py."""

from attention.tiny.diagnostics import SCORES, HeadReport, head_reports, label_head
from attention.tiny.model import TinyOutput, TinyTransformer
from attention.tiny.tasks import TASKS, ModelSize, Task
from attention.tiny.training import (
    History,
    Prediction,
    TrainedRun,
    evaluate,
    held_out,
    load,
    predict,
    task_targets,
    train,
)

__all__ = [
    "SCORES",
    "TASKS",
    "HeadReport",
    "History",
    "ModelSize",
    "Prediction",
    "Task",
    "TinyOutput",
    "TinyTransformer",
    "TrainedRun",
    "evaluate",
    "head_reports",
    "held_out",
    "label_head",
    "load",
    "predict",
    "task_targets",
    "train",
]  # fmt: skip
