"""Training a task's TinyTransformer from scratch, deterministically for a seed, and the shipped
checkpoints (`load`). Rebuild the checkpoints with `python -m attention.tiny.build`."""

from __future__ import annotations

import io
import lzma
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.ops import PLAIN, Steps
from attention.tiny.adam import Adam
from attention.tiny.model import TinyTransformer
from attention.tiny.tasks import TASKS, Task

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
N_SNAPSHOTS = 30  # attention snapshots kept over a training run
N_RECORDS = 100  # loss and accuracy points kept over a training run
EXAMPLE_SEED = 7  # the fixed example every snapshot shows
HELD_OUT_SEED = 2**31 - 1  # held-out data: a stream no training seed draws from (see data_stream)


@dataclass(frozen=True, eq=False)
class History:
    """How training went: loss and accuracy over the steps, and attention snapshots."""

    steps: Tensor  # (R,) step of each record
    loss: Tensor  # (R,) training loss on that step's batch
    accuracy: Tensor  # (R,) accuracy on that step's batch (scored positions)
    snapshot_steps: Tensor  # (S,) step of each snapshot (0 = before training)
    snapshots: tuple[Tensor, ...]  # one per layer: (S, H_layer, T, T) weights on `example`
    example: Tensor  # (T,) the fixed example's token ids


@dataclass(frozen=True, eq=False)
class TrainedRun:
    """A trained model, its task, the seed it was trained with, and how it learned."""

    task: Task
    model: TinyTransformer
    history: History
    seed: int


def get_task(name: str) -> Task:
    """The task of that name; ValueError listing the tasks otherwise."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; tasks are {', '.join(TASKS)}")
    return TASKS[name]


def build_model(
    task: Task, seed: int, *, steps: Steps = PLAIN, dropout: float = 0.0
) -> TinyTransformer:
    """The task's architecture, initialised by `torch.manual_seed(seed)` without touching the
    caller's random state; its layers run `steps` with attention dropout `dropout`."""
    size = task.size
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(
            len(task.vocab),
            task.seq_len,
            size.d_model,
            size.heads,
            causal=task.causal,
            steps=steps,
            dropout=dropout,
        )


def data_stream(seed: int) -> torch.Generator:
    """The training data's generator for a seed (independent of the weights' stream)."""
    return torch.Generator().manual_seed(1_000_003 * (seed + 1))


def held_out(task: Task, n: int = 512) -> tuple[Tensor, Tensor, Tensor]:
    """n held-out sequences of the task, the same every call."""
    return task.generate(n, torch.Generator().manual_seed(HELD_OUT_SEED))


def example_ids(task: Task) -> Tensor:
    """The fixed example (T,) that snapshots and the lesson show."""
    ids, _, _ = task.generate(1, torch.Generator().manual_seed(EXAMPLE_SEED))
    return ids[0]


def scored_loss(logits: Tensor, targets: Tensor, scored: Tensor) -> Tensor:
    """Cross-entropy over the scored positions only."""
    return F.cross_entropy(logits[scored], targets[scored])


def scored_accuracy(logits: Tensor, targets: Tensor, scored: Tensor) -> float:
    """Share of scored positions where the most likely token is the target."""
    return float((logits.argmax(-1) == targets)[scored].float().mean())


@torch.no_grad()
def evaluate(
    model: TinyTransformer,
    task: Task,
    batch: tuple[Tensor, Tensor, Tensor] | None = None,
    ablate=(),
) -> float:
    """Accuracy on scored positions of a batch (held-out data by default)."""
    ids, targets, scored = held_out(task) if batch is None else batch
    return scored_accuracy(model(ids, ablate).logits, targets, scored)


@torch.no_grad()
def snapshot(model: TinyTransformer, ids: Tensor) -> list[Tensor]:
    """Every head's weights on one sequence: one (H_layer, T, T) per layer."""
    # the weights come before any attention dropout; its draws (if any) use a stream of their
    # own, so a snapshot changes neither the training run nor the global random state
    out = model(ids[None], generator=torch.Generator().manual_seed(EXAMPLE_SEED))
    return [trace.weights[0] for trace in out.traces]


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31 - 1:
        raise ValueError(f"seed must be a whole number from 0 to {2**31 - 2}, got {seed!r}")
    return seed


def train(
    name: str,
    *,
    seed: int = 0,
    steps: int | None = None,
    on_step: Callable[[int, int], None] | None = None,
    attention_steps: Steps = PLAIN,
    dropout: float = 0.0,
    generator: torch.Generator | None = None,
) -> TrainedRun:
    """Train the task's model from scratch with Adam; the same seed gives the same run.

    on_step(step, steps) is called after every step (for a progress bar). Every attention layer
    runs `attention_steps` (the bug hunt trains through a student's mistake) with attention
    dropout `dropout`, drawn from `generator`."""
    task = get_task(name)
    seed = check_seed(seed)
    steps = task.size.steps if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a whole number of at least 1, got {steps!r}")
    model = build_model(task, seed, steps=attention_steps, dropout=dropout)
    optimiser = Adam(model.parameters(), lr=task.size.lr)  # torch.optim.Adam's update (adam.py)
    data = data_stream(seed)
    example = example_ids(task)
    record_every = max(1, steps // N_RECORDS)
    snapshot_at = set(torch.linspace(0, steps, N_SNAPSHOTS).round().long().tolist())
    records: list[tuple[int, float, float]] = []
    snapshots: list[tuple[int, list[Tensor]]] = [(0, snapshot(model, example))]
    for step in range(1, steps + 1):
        ids, targets, scored = task.generate(task.size.batch, data)
        logits = model(ids, generator=generator).logits  # (n, T, vocab)
        loss = scored_loss(logits, targets, scored)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % record_every == 0 or step == steps:
            records.append((step, loss.item(), scored_accuracy(logits.detach(), targets, scored)))
        if step in snapshot_at:
            snapshots.append((step, snapshot(model, example)))
        if on_step is not None:
            on_step(step, steps)
    model.eval()
    history = History(
        steps=torch.tensor([r[0] for r in records]),
        loss=torch.tensor([r[1] for r in records]),
        accuracy=torch.tensor([r[2] for r in records]),
        snapshot_steps=torch.tensor([s for s, _ in snapshots]),
        snapshots=tuple(map(torch.stack, zip(*(w for _, w in snapshots), strict=True))),
        example=example,
    )
    return TrainedRun(task=task, model=model, history=history, seed=seed)


def checkpoint_path(name: str) -> Path:
    return CHECKPOINTS / f"{name}.pt.xz"


def save(run: TrainedRun, path: Path | None = None) -> Path:
    """Write a run as a small checkpoint: weights, history, snapshots quantised to 1/255."""
    path = checkpoint_path(run.task.name) if path is None else path
    h = run.history
    state = {
        "task": run.task.name,
        "seed": run.seed,
        "model": {k: v.detach().clone() for k, v in run.model.state_dict().items()},
        "steps": h.steps,
        "loss": h.loss.half(),
        "accuracy": h.accuracy.half(),
        "snapshot_steps": h.snapshot_steps,
        "snapshots": [(w * 255).round().to(torch.uint8) for w in h.snapshots],  # in [0, 1]
        "example": h.example,
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(buffer.getvalue(), preset=9))
    return path


def load(name: str, path: Path | None = None) -> TrainedRun:
    """The shipped trained run of a task (no training, no download)."""
    task = get_task(name)
    path = checkpoint_path(name) if path is None else path
    if not path.exists():
        raise ValueError(
            f"no checkpoint for {name!r} at {path}; build it with python -m attention.tiny.build"
        )
    state = torch.load(io.BytesIO(lzma.decompress(path.read_bytes())), weights_only=True)
    model = build_model(task, state["seed"])
    model.load_state_dict(state["model"])
    model.eval()
    history = History(
        steps=state["steps"],
        loss=state["loss"].float(),
        accuracy=state["accuracy"].float(),
        snapshot_steps=state["snapshot_steps"],
        snapshots=tuple(w.float() / 255 for w in state["snapshots"]),
        example=state["example"],
    )
    return TrainedRun(task=task, model=model, history=history, seed=state["seed"])


@dataclass(frozen=True, eq=False)
class Prediction:
    """What a model predicts for one sequence, beside what the task wants."""

    ids: Tensor  # (T,) the input
    targets: Tensor | None  # (T,) what the task wants, when known
    scored: Tensor | None  # (T,) bool: the positions that count
    predicted: Tensor  # (T,) the model's most likely token
    weights: tuple[Tensor, ...]  # one (H_layer, T, T) per layer

    @property
    def counted(self) -> int | None:
        """How many positions count (have an answer); None when the task marks none."""
        return None if self.scored is None else int(self.scored.sum())

    @property
    def right(self) -> int | None:
        """How many of the positions that count the model predicts right; None when the task
        marks none."""
        if self.scored is None or self.targets is None:
            return None
        return int(((self.predicted == self.targets) & self.scored).sum())


@torch.no_grad()
def predict(
    model: TinyTransformer,
    ids: Tensor,
    targets: Tensor | None = None,
    scored: Tensor | None = None,
    ablate=(),
) -> Prediction:
    """Run one sequence ids (T,) through the model (heads in `ablate` knocked out)."""
    out = model(ids[None], ablate)
    return Prediction(
        ids=ids,
        targets=targets,
        scored=scored,
        predicted=out.logits[0].argmax(-1),
        weights=tuple(trace.weights[0] for trace in out.traces),
    )


def task_targets(task: Task, ids: Tensor) -> tuple[Tensor | None, Tensor | None]:
    """The targets and scored positions of any sequence of a task, where the task defines them
    for a typed sequence (None, None otherwise: the induction task's segments are not marked)."""
    make = {
        "previous_token": lambda: (torch.roll(ids, 1), torch.arange(len(ids)) > 0),
        "reverse": lambda: (ids.flip(0), torch.ones(len(ids), dtype=torch.bool)),
        "running_max": lambda: (
            torch.cummax(ids, 0).values,
            torch.ones(len(ids), dtype=torch.bool),
        ),
    }
    return make[task.name]() if task.name in make else (None, None)
