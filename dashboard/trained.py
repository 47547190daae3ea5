"""The trained tiny transformers behind lesson 6 and the sidebar's "trained" input: the shipped
runs loaded once per server, and live retraining shared by the whole class.

A class that presses *Train again* together trains once per task and seed: the first press
trains, the others wait for that run and reuse it; different runs queue for one training slot,
so a server never trains more than one model at a time (a training takes a core for 1-3 s).
Training imports nothing a click would wait for: the tiny models train with
attention/tiny/adam.py, not torch.optim.Adam, whose first use imports PyTorch's compiler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pandas as pd
import torch

from attention.lm.corpus import Reading, read
from attention.lm.model import CharGPT
from attention.lm.training import TrainedLM
from attention.lm.training import load as load_lm
from attention.tiny import (
    TASKS,
    Prediction,
    TrainedRun,
    evaluate,
    head_reports,
    held_out,
    load,
    predict,
    task_targets,
    train,
)
from attention.tiny.diagnostics import HeadReport, LayerKnockout, layer_knockouts
from attention.tiny.training import EXAMPLE_SEED, build_model
from dashboard import state


@state.cached(keep=True)
def shipped(name: str) -> TrainedRun:
    """The checkpoint shipped in the repository, loaded once per server."""
    return load(name)


@state.cached(keep=True)
def initial(name: str, seed: int = 0) -> TrainedRun:
    """The same architecture before training (the weights the run started from)."""
    run = shipped(name)
    return TrainedRun(
        task=run.task, model=build_model(run.task, seed).eval(), history=run.history, seed=seed
    )


@state.cached
def reports(name: str, seed: int, trained: bool = True) -> list[HeadReport]:
    """Every head's diagnostic scores and label (held-out probes), once per run."""
    run = run_for(name, seed) if trained else initial(name, seed)
    return head_reports(run.model, run.task)


@state.cached
def accuracy(name: str, seed: int, ablate: tuple[tuple[int, int], ...] = ()) -> float:
    """Held-out accuracy of a run with some heads knocked out, once per choice."""
    run = run_for(name, seed)
    return evaluate(run.model, run.task, held_out(run.task), ablate=ablate)


@state.cached
def knockouts(name: str, seed: int) -> list[LayerKnockout]:
    """Each layer of two or more heads: accuracy with each head, then all, knocked out."""
    run = run_for(name, seed)
    return layer_knockouts(run.model, run.task)


class TrainingRoom:
    """Runs trained on this server, shared by every session; one training at a time. A class
    pressing *Train again* together trains once per (task, seed): the shared cache computes a
    key once and the others wait for it; the runs live there (about 50 KB each, in its budget)."""

    def __init__(self) -> None:
        self.slot = threading.Lock()  # one training at a time, whatever the task and seed

    def get(self, name: str, seed: int) -> TrainedRun | None:
        return state.lookup(("retrained", name, seed))

    def busy(self) -> bool:
        """True while some session's training holds the slot."""
        return self.slot.locked()

    def train(self, name: str, seed: int, on_step: Callable[[int, int], None]) -> TrainedRun:
        """The run for (task, seed): trained now, or waited for if another session is on it."""

        def make() -> TrainedRun:
            state.one_torch_thread()  # as the benchmark trains: two threads are slower here
            with self.slot, torch.inference_mode(False):
                return train(name, seed=seed, on_step=on_step)

        return state.compute(("retrained", name, seed), make)


@state.cached(keep=True)
def training_room() -> TrainingRoom:
    """The server's one training room."""
    return TrainingRoom()


def run_for(name: str, seed: int) -> TrainedRun:
    """The shipped run for its seed, a retrained one if this server has it, else the shipped."""
    run = shipped(name)
    if seed == run.seed:
        return run
    return training_room().get(name, seed) or run


@state.cached(keep=True)
def example_targets(name: str):
    """The fixed example's targets and scored positions."""
    task = TASKS[name]
    _, targets, scored = task.generate(1, torch.Generator().manual_seed(EXAMPLE_SEED))
    return targets[0], scored[0]


@state.cached
def probe(name: str, seed: int, tokens: tuple[str, ...]) -> Prediction:
    """The model's prediction and patterns for a typed sequence, once per sequence."""
    run = run_for(name, seed)
    ids = run.task.encode(list(tokens))
    targets, scored = task_targets(run.task, ids)
    return predict(run.model, ids, targets, scored)


@state.cached
def curves(name: str, seed: int) -> pd.DataFrame:
    """Loss and accuracy over training, long form for a line chart."""
    history = run_for(name, seed).history
    steps = history.steps.tolist()
    return pd.DataFrame(
        {
            "step": steps * 2,
            "value": history.loss.tolist() + history.accuracy.tolist(),
            "curve": ["loss"] * len(steps) + ["accuracy"] * len(steps),
        }
    )


@state.cached(keep=True)
def shipped_lm() -> TrainedLM:
    """The shipped Shakespeare model (attention/lm) and its build's figures, loaded once per
    server."""
    return load_lm()


def language_model() -> CharGPT:
    return shipped_lm().model


def language_model_figures() -> dict[str, float]:
    return shipped_lm().figures


def read_text(text: str) -> Reading:
    """The student's text as the Shakespeare model reads it (ValueError when nothing is left)."""
    return read(text, language_model().context)
