"""Training CharGPT on tiny Shakespeare with repeated random strings mixed in, and the shipped
checkpoint (`load`). Rebuild it with `python -m attention.lm.build`.

The curriculum: in half of the training sequences a span of random letters (SPAN characters)
is written over the text and written again later in the same sequence, so that copying a string
the model has never seen pays (Olsson et al. 2022: induction heads are what copy).
"""

from __future__ import annotations

import io
import lzma
import math
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.lm.corpus import split, vocabulary
from attention.lm.model import CharGPT, LMSize

CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "shakespeare.pt.xz"
SIZE = LMSize(n_layers=2, n_heads=4, d_model=128, context=64)
LETTERS = string.ascii_letters  # the random spans' alphabet
# Sequences one evaluation forward holds at once: every layer keeps its (n, H, T, T) stages
# (scores, weights, ...), 100 windows took 185 MiB more on a server that teaches a class.
EVAL_BATCH = 16


@dataclass(frozen=True)
class Recipe:
    """Everything that fixes a training run besides the seed."""

    steps: int = 20_000
    batch: int = 32
    lr: float = 2e-3  # peak, after `warmup` steps; cosine decay to lr / 20
    warmup: int = 200
    weight_decay: float = 0.1
    repeat_share: float = 0.5  # share of sequences holding a repeated random span
    span: tuple[int, int] = (6, 24)  # the span's length, drawn uniformly in [lo, hi]


RECIPE = Recipe()


@dataclass(frozen=True, eq=False)
class TrainedLM:
    """A trained model, the recipe and seed that made it, and its loss curve."""

    model: CharGPT
    recipe: Recipe
    seed: int
    steps: Tensor  # (R,) recorded steps
    loss: Tensor  # (R,) training loss there (mean over the last record_every steps)
    # measured by the build once trained (heads.measure): held-out loss, bigram, copy accuracy;
    # the tests recompute them
    figures: dict[str, float] = field(default_factory=dict)


def letter_ids() -> Tensor:
    """The token ids of the random spans' letters."""
    vocab = vocabulary()
    return torch.tensor([vocab.index(c) for c in LETTERS])


def batch(
    n: int, T: int, generator: torch.Generator, *, repeat_share: float, span: tuple[int, int]
) -> tuple[Tensor, Tensor]:
    """n training sequences (n, T) and their next-token targets (n, T): corpus text, with a
    random span written twice into a `repeat_share` of them."""
    train = split("train")
    starts = torch.randint(len(train) - T - 1, (n,), generator=generator)
    rows = torch.stack([train[s : s + T + 1] for s in starts.tolist()])  # (n, T + 1)
    letters = letter_ids()
    repeated = torch.rand(n, generator=generator) < repeat_share
    for row in torch.nonzero(repeated).flatten().tolist():
        L = int(torch.randint(span[0], span[1] + 1, (1,), generator=generator))
        first = int(torch.randint(0, T + 1 - 2 * L, (1,), generator=generator))
        second = int(torch.randint(first + L, T + 2 - L, (1,), generator=generator))
        chars = letters[torch.randint(len(letters), (L,), generator=generator)]
        rows[row, first : first + L] = chars
        rows[row, second : second + L] = chars
    return rows[:, :-1], rows[:, 1:]


def build_model(seed: int, size: LMSize = SIZE) -> CharGPT:
    """The architecture initialised by `torch.manual_seed(seed)`, the caller's state untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return CharGPT(len(vocabulary()), size)


def learning_rate(step: int, recipe: Recipe) -> float:
    """Linear warm-up, then cosine decay to a twentieth of the peak."""
    if step < recipe.warmup:
        return recipe.lr * (step + 1) / recipe.warmup
    progress = (step - recipe.warmup) / max(1, recipe.steps - recipe.warmup)
    floor = recipe.lr / 20
    return floor + 0.5 * (recipe.lr - floor) * (1 + math.cos(math.pi * progress))


def train(
    seed: int = 0,
    recipe: Recipe = RECIPE,
    size: LMSize = SIZE,
    on_record: Callable[[int, float], None] | None = None,
) -> TrainedLM:
    """Train from scratch with AdamW; the same seed and recipe give the same data and start."""
    model = build_model(seed, size)
    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    optimiser = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": recipe.weight_decay},
            {"params": rest, "weight_decay": 0.0},
        ],
        lr=recipe.lr,
        betas=(0.9, 0.99),
    )
    data = torch.Generator().manual_seed(1_000_003 * (seed + 1))
    record_every = max(1, recipe.steps // 100)
    steps, losses, running = [], [], 0.0
    model.train()
    for step in range(recipe.steps):
        for group in optimiser.param_groups:
            group["lr"] = learning_rate(step, recipe)
        ids, targets = batch(
            recipe.batch, size.context, data, repeat_share=recipe.repeat_share, span=recipe.span
        )
        logits = model(ids).logits  # (n, T, vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        running += loss.item()
        if (step + 1) % record_every == 0:
            steps.append(step + 1)
            losses.append(running / record_every)
            running = 0.0
            if on_record is not None:
                on_record(step + 1, losses[-1])
    model.eval()
    return TrainedLM(model, recipe, seed, torch.tensor(steps), torch.tensor(losses))


@torch.no_grad()
def held_out_loss(model: CharGPT, n: int = 400) -> float:
    """Cross-entropy (nats/char) on n non-overlapping windows of the held-out text, every
    position of every window scored (the same windows every call)."""
    held = split("held_out")
    T = model.context
    n = min(n, (len(held) - 1) // T)
    stride = (len(held) - 1 - T) // max(1, n - 1)
    starts = [i * stride for i in range(n)]
    ids = torch.stack([held[s : s + T] for s in starts])  # (n, T)
    targets = torch.stack([held[s + 1 : s + T + 1] for s in starts])  # (n, T)
    losses = []
    for chunk in range(0, n, EVAL_BATCH):
        logits = model(ids[chunk : chunk + EVAL_BATCH]).logits
        chunk_targets = targets[chunk : chunk + EVAL_BATCH].flatten()
        losses.append(F.cross_entropy(logits.flatten(0, 1), chunk_targets, reduction="sum"))
    return float(sum(losses) / targets.numel())


def save(run: TrainedLM, path: Path = CHECKPOINT) -> Path:
    """Write the weights and the loss curve, xz-compressed."""
    state = {
        "seed": run.seed,
        "recipe": asdict(run.recipe),
        "size": asdict(run.model.size),
        "model": {k: v.detach().clone() for k, v in run.model.state_dict().items()},
        "steps": run.steps,
        "loss": run.loss,
        "figures": dict(run.figures),
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    return path


def load(path: Path = CHECKPOINT) -> TrainedLM:
    """The shipped model (no training, no download)."""
    if not path.exists():
        raise ValueError(f"no language model at {path}; build it with python -m attention.lm.build")
    state = torch.load(io.BytesIO(lzma.decompress(path.read_bytes())), weights_only=True)
    recipe = state["recipe"]
    recipe = Recipe(**{**recipe, "span": tuple(recipe["span"])})
    model = build_model(state["seed"], LMSize(**state["size"]))
    model.load_state_dict(state["model"])
    model.eval()
    figures = state.get("figures", {})
    return TrainedLM(model, recipe, state["seed"], state["steps"], state["loss"], figures)
