"""Head diagnostics: how closely a head's attention follows the pattern of a known kind of head.

As in TransformerLens's head detector: a kind of head has a reference pattern R (T x T, 1 where
that kind of head attends, else 0). A head's score is the attention it puts on the reference,

    score = mean over query rows i (that have a reference and a choice) of  sum_j A[i, j] R[i, j]

so 1 means every row attends only where the reference says, and 0 never. Rows with a single
allowed key (the first token under a causal mask) are left out: they have no choice.

| score          | reference: query i attends to ...          | probe (measured on)           |
|----------------|--------------------------------------------|-------------------------------|
| previous_token | i - 1                                      | the task's held-out sequences |
| current_token  | i itself                                   | the task's held-out sequences |
| first_token    | position 0                                 | the task's held-out sequences |
| mirror         | T - 1 - i                                  | the task's held-out sequences |
| max_token      | the largest token it may see               | the task's held-out sequences |
| induction      | the token after an earlier copy of token i | a segment repeated twice      |

The induction probe is the induction-heads paper's: BOS, then a random segment of distinct
tokens, then the same segment again; the score is the mean attention from each token of the
second copy to the token after its first occurrence.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from attention.tiny.model import TinyTransformer
from attention.tiny.tasks import Task
from attention.tiny.training import HELD_OUT_SEED, held_out

SCORES: dict[str, str] = {
    "previous_token": "previous-token head",
    "current_token": "current-token head",
    "first_token": "first-token head",
    "mirror": "mirror head",
    "max_token": "largest-token head",
    "induction": "induction head",
}
LABEL_THRESHOLD = 0.5  # a head is labelled by its best score when that score reaches this


def previous_token_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> key i - 1."""
    n, T = ids.shape
    return torch.ones(T, T, dtype=torch.bool).tril(-1).triu(-1).expand(n, T, T)


def current_token_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> key i."""
    n, T = ids.shape
    return torch.eye(T, dtype=torch.bool).expand(n, T, T)


def first_token_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): every query -> key 0."""
    n, T = ids.shape
    reference = torch.zeros(T, T, dtype=torch.bool)
    reference[:, 0] = True
    return reference.expand(n, T, T)


def mirror_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> key T - 1 - i."""
    n, T = ids.shape
    return torch.eye(T, dtype=torch.bool).flip(1).expand(n, T, T)


def max_token_reference(ids: Tensor, causal: bool) -> Tensor:
    """R (n, T, T): query i -> the keys holding the largest token id that i may see."""
    n, T = ids.shape
    keys = ids[:, None, :].expand(n, T, T)  # (n, T_q, T_k)
    if causal:
        visible = torch.tril(torch.ones(T, T, dtype=torch.bool))
        keys = keys.masked_fill(~visible, -1)
    largest = keys.max(dim=-1, keepdim=True).values  # (n, T, 1)
    return keys == largest


def induction_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> key j + 1 for every earlier j < i holding the same token."""
    T = ids.shape[1]
    same = ids[:, :, None] == ids[:, None, :]  # (n, T_q, T_k): token i equals token j
    earlier = torch.tril(torch.ones(T, T, dtype=torch.bool), -1)  # j < i
    previous = same & earlier  # (n, T, T)
    reference = torch.zeros_like(previous)
    reference[:, :, 1:] = previous[:, :, :-1]  # shift to the token after the occurrence
    return reference


def pattern_score(weights: Tensor, reference: Tensor, allowed: Tensor) -> Tensor:
    """Score per head: weights (n, H, T, T), reference (n, T, T), allowed broadcastable to the
    weights -> (H,): mean over the rows that have a reference and more than one allowed key."""
    allowed = allowed.expand_as(weights)  # (n, H, T, T)
    on_reference = (weights * reference[:, None]).sum(-1)  # (n, H, T)
    rows = reference[:, None].any(-1) & (allowed.sum(-1) > 1)  # (n, H, T)
    return (on_reference * rows).sum((0, 2)) / rows.sum((0, 2)).clamp(min=1)


def repeated_probe(task: Task, n: int, generator: torch.Generator) -> Tensor:
    """ids (n, T): the task's prefix, a random segment of distinct tokens, the segment again."""
    content = torch.tensor(task.content)
    body = task.seq_len - len(task.prefix)
    length = min(body // 2, len(content))
    prefix = torch.tensor([task.vocab.index(t) for t in task.prefix], dtype=torch.long)
    rows = []
    for _ in range(n):
        segment = content[torch.randperm(len(content), generator=generator)[:length]]
        tail = content[torch.randint(len(content), (body - 2 * length,), generator=generator)]
        rows.append(torch.cat([prefix, segment, segment, tail]))
    return torch.stack(rows)


@dataclass(frozen=True)
class HeadReport:
    """One head's scores (name -> value in [0, 1]) and the label they give it."""

    layer: int
    head: int
    scores: dict[str, float]
    label: str


def label_head(scores: dict[str, float]) -> str:
    """The best score's head kind if it reaches LABEL_THRESHOLD, else 'no clear role'."""
    name = max(scores, key=scores.get)
    return SCORES[name] if scores[name] >= LABEL_THRESHOLD else "no clear role"


@torch.no_grad()
def head_reports(model: TinyTransformer, task: Task, n: int = 256) -> list[HeadReport]:
    """Every head's scores on the probes above, layer by layer."""
    ids = held_out(task, n)[0]  # (n, T)
    probe = repeated_probe(task, n, torch.Generator().manual_seed(HELD_OUT_SEED - 1))
    references = {
        "previous_token": previous_token_reference(ids),
        "current_token": current_token_reference(ids),
        "first_token": first_token_reference(ids),
        "mirror": mirror_reference(ids),
        "max_token": max_token_reference(ids, task.causal),
    }
    traces, probe_traces = model(ids).traces, model(probe).traces
    reports = []
    for layer, (trace, probe_trace) in enumerate(zip(traces, probe_traces, strict=True)):
        per_head = {
            name: pattern_score(trace.weights, reference, trace.allowed)
            for name, reference in references.items()
        }
        per_head["induction"] = pattern_score(
            probe_trace.weights, induction_reference(probe), probe_trace.allowed
        )
        for head in range(model.heads[layer]):
            scores = {name: round(float(values[head]), 4) for name, values in per_head.items()}
            reports.append(HeadReport(layer, head, scores, label_head(scores)))
    return reports
