"""Head diagnostics: how closely a head's attention follows the pattern of a known kind of head.

A kind of head has a reference pattern R (T x T, 1 where that kind of head attends, else 0), as in
TransformerLens's head detector (`transformer_lens/head_detector.py`). Each head gets two scores
per kind, and a ceiling:

    score      (TransformerLens's `detect_head`, error_measure "mul", its defaults
                exclude_bos=False and exclude_current_token=False): per sequence,
                    sum_ij A[i, j] R[i, j]  /  sum_ij A[i, j]
                over every query row, averaged over the sequences (as detect_head does for a
                list of sequences). Rows with no reference count as 0, so the best a head can
                score is the ceiling below.
    row score  (ours): the attention on the reference, sum_j A[i, j] R[i, j], averaged over only
                the query rows that have a reference and more than one allowed key (the first
                token under a causal mask has no choice), over every sequence. 1 means the head
                attends only where the reference says whenever there is something to find.
    ceiling    the share of query rows that have a reference: a perfect head's TransformerLens
                score. On the induction probe only the second copy has one, so it is about 1/2.

With exclude_bos (exclude_current_token) TransformerLens first zeroes column 0 (the diagonal) of
A, in both the numerator and the denominator; `detector_score` takes the same options. Its
detect_head also insists that R is lower triangular; the mirror and largest-token references of
the bidirectional task are not, and get the same formula here all the same.

| score          | reference: query i attends to ...          | probe (measured on)           |
|----------------|--------------------------------------------|-------------------------------|
| previous_token | i - 1                                      | the task's held-out sequences |
| current_token  | i itself                                   | the task's held-out sequences |
| first_token    | position 0                                 | the task's held-out sequences |
| mirror         | T - 1 - i                                  | the task's held-out sequences |
| max_token      | the largest token it may see               | the task's held-out sequences |
| induction      | the token after an earlier copy of token i | a segment repeated twice      |

The previous-token and induction references are TransformerLens's
`get_previous_token_head_detection_pattern` and `get_induction_head_detection_pattern`. The
induction probe is the induction-heads paper's: BOS, then a random segment of distinct tokens,
then the same segment again. A head is labelled by its best row score (LABEL_THRESHOLD).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from attention.tiny.model import TinyTransformer
from attention.tiny.tasks import Task
from attention.tiny.training import HELD_OUT_SEED, evaluate, held_out

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


def detector_score(
    weights: Tensor,
    reference: Tensor,
    *,
    exclude_bos: bool = False,
    exclude_current_token: bool = False,
) -> Tensor:
    """TransformerLens's head-detector score ("mul") per head: weights A (n, H, T, T), reference R
    (n, T, T) -> (H,): per sequence sum(A * R) / sum(A), with column 0 (exclude_bos) and the
    diagonal (exclude_current_token) of A zeroed first; the mean over the n sequences."""
    T = weights.shape[-1]
    keep = torch.ones(T, T, dtype=weights.dtype)  # (T, T): 1 where A counts
    if exclude_bos:
        keep[:, 0] = 0.0
    if exclude_current_token:
        keep.fill_diagonal_(0.0)
    counted = weights * keep  # (n, H, T, T)
    on_reference = (counted * reference[:, None]).sum((-2, -1))  # (n, H)
    return (on_reference / counted.sum((-2, -1))).mean(0)  # (H,)


def detector_ceiling(reference: Tensor) -> float:
    """The best TransformerLens score a head can reach on this reference (n, T, T) with the
    default options: the share of query rows that have a reference."""
    return float(reference.any(-1).float().mean())


def row_score(weights: Tensor, reference: Tensor, allowed: Tensor) -> Tensor:
    """Our score per head: weights (n, H, T, T), reference (n, T, T), allowed broadcastable to
    the weights -> (H,): the attention on the reference, averaged over the rows that have a
    reference and more than one allowed key."""
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
    """One head's scores per kind of head (name -> value in [0, 1]; see the module's docstring):
    TransformerLens's detector score, our row score, each kind's ceiling, and the label."""

    layer: int
    head: int
    scores: dict[str, float]  # TransformerLens's detector score ("mul", default options)
    row_scores: dict[str, float]  # ours: only the rows that have a reference and a choice
    ceilings: dict[str, float]  # the best TransformerLens score a head could reach on the probe
    label: str  # from the row scores

    @property
    def kind(self) -> str | None:
        """The score its label names (None for 'no clear role')."""
        return next((name for name, kind in SCORES.items() if kind == self.label), None)


def label_head(row_scores: dict[str, float]) -> str:
    """The best row score's head kind if it reaches LABEL_THRESHOLD, else 'no clear role'."""
    name = max(row_scores, key=row_scores.get)
    return SCORES[name] if row_scores[name] >= LABEL_THRESHOLD else "no clear role"


@torch.no_grad()
def head_reports(model: TinyTransformer, task: Task, n: int = 256) -> list[HeadReport]:
    """Every head's scores on the probes above, layer by layer."""
    ids = held_out(task, n)[0]  # (n, T)
    probe = repeated_probe(task, n, torch.Generator().manual_seed(HELD_OUT_SEED - 1))
    references = {
        "previous_token": (ids, previous_token_reference(ids)),
        "current_token": (ids, current_token_reference(ids)),
        "first_token": (ids, first_token_reference(ids)),
        "mirror": (ids, mirror_reference(ids)),
        "max_token": (ids, max_token_reference(ids, task.causal)),
        "induction": (probe, induction_reference(probe)),
    }
    traces = {id(ids): model(ids).traces, id(probe): model(probe).traces}
    ceilings = {name: round(detector_ceiling(ref), 4) for name, (_, ref) in references.items()}
    reports = []
    for layer in range(model.n_layers):
        detector, rows = {}, {}
        for name, (batch, reference) in references.items():
            trace = traces[id(batch)][layer]
            detector[name] = detector_score(trace.weights, reference)
            rows[name] = row_score(trace.weights, reference, trace.allowed)
        for head in range(model.heads[layer]):
            scores = {name: round(float(values[head]), 4) for name, values in detector.items()}
            row_scores = {name: round(float(values[head]), 4) for name, values in rows.items()}
            label = label_head(row_scores)
            reports.append(HeadReport(layer, head, scores, row_scores, ceilings, label))
    return reports


KNOCKOUT_SHARE = 0.5  # a head "carries" its layer when knocking it out alone costs this share


@dataclass(frozen=True)
class LayerKnockout:
    """Held-out accuracy of a model with each head of one layer knocked out alone, and with the
    whole layer knocked out, beside the full model's."""

    layer: int
    full: float
    alone: tuple[float, ...]  # accuracy with head h (only) knocked out
    whole: float  # accuracy with every head of the layer knocked out

    @property
    def alone_cost(self) -> tuple[float, ...]:
        """Accuracy points lost with each head knocked out alone."""
        return tuple(100 * (self.full - a) for a in self.alone)

    @property
    def whole_cost(self) -> float:
        """Accuracy points lost with the whole layer knocked out."""
        return 100 * (self.full - self.whole)

    @property
    def verdict(self) -> str:
        """How the layer's heads share the task, from the accuracy each knock-out costs:
        'redundant' when no head alone costs KNOCKOUT_SHARE of what the whole layer costs (the
        others cover for it), 'carried' when exactly one does, 'shared' when several do, and
        'idle' when the whole layer costs under 10 points."""
        if self.whole_cost < 10:
            return "idle"
        carrying = [cost >= KNOCKOUT_SHARE * self.whole_cost for cost in self.alone_cost]
        return {0: "redundant", 1: "carried"}.get(sum(carrying), "shared")


@torch.no_grad()
def layer_knockouts(model: TinyTransformer, task: Task) -> list[LayerKnockout]:
    """Every layer of two or more heads: held-out accuracy with each head, then all, off."""
    full = evaluate(model, task)
    results = []
    for layer, n_heads in enumerate(model.heads):
        if n_heads < 2:
            continue
        alone = tuple(evaluate(model, task, ablate={(layer, h)}) for h in range(n_heads))
        whole = evaluate(model, task, ablate={(layer, h) for h in range(n_heads)})
        results.append(LayerKnockout(layer, full, alone, whole))
    return results
