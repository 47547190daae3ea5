"""What the language model's heads do, measured: on probes (for the tests and the build's
figures) and on a student's own text (for the lesson).

Scores are TransformerLens's head-detector score ("mul", default options), computed by
attention.tiny.diagnostics.detector_score exactly as `transformer_lens/head_detector.py` does:
per sequence sum_ij A[i, j] R[i, j] / sum_ij A[i, j], averaged over sequences, where R is the
kind's reference pattern. Its best value is the share of query rows that have a reference (the
ceiling), so a score is also shown as a share of its ceiling.

| kind            | reference R: query i attends to ...                 | probe            |
|-----------------|-----------------------------------------------------|------------------|
| previous_token  | i - 1                                               | held-out text    |
| two_back        | i - 2 (found in the shipped model: layer 0, head 2) | held-out text    |
| induction       | the token after an earlier copy of token i          | a random string  |
|                 |                                                     | of distinct      |
|                 |                                                     | letters, twice   |
| first_token     | position 0 (a "sink": the head parks its attention) | held-out text    |
| same_character  | earlier positions holding the same character        | held-out text    |
| separator       | spaces, newlines and punctuation                    | held-out text    |
| current_token   | i itself                                            | held-out text    |
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import torch
from torch import Tensor

from attention.lm.corpus import decode, split, vocabulary
from attention.lm.model import CharGPT
from attention.lm.training import EVAL_BATCH, LETTERS, letter_ids
from attention.tiny.diagnostics import (
    current_token_reference,
    detector_ceiling,
    detector_score,
    first_token_reference,
    induction_reference,
    previous_token_reference,
)

KINDS: dict[str, str] = {
    "previous_token": "previous-token head",
    "two_back": "two-back head",
    "induction": "induction head",
    "first_token": "first-token sink",
    "same_character": "same-character head",
    "separator": "space-and-punctuation head",
    "current_token": "current-token head",
}
ROLE_SHARE = 0.6  # a head is named by its best kind when it reaches this share of the ceiling
SEPARATORS = set(" \n" + string.punctuation)
PROBE_SEED = 2**31 - 2  # the probes' random strings: a stream training never draws from


def two_back_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> key i - 2."""
    n, T = ids.shape
    return torch.ones(T, T, dtype=torch.bool).tril(-2).triu(-2).expand(n, T, T)


def same_character_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> every earlier j < i holding the same token (TransformerLens's
    duplicate-token pattern)."""
    T = ids.shape[1]
    same = ids[:, :, None] == ids[:, None, :]  # (n, T_q, T_k)
    return same & torch.tril(torch.ones(T, T, dtype=torch.bool), -1)


def separator_reference(ids: Tensor) -> Tensor:
    """R (n, T, T): query i -> the keys j <= i that are a space, newline or punctuation."""
    T = ids.shape[1]
    vocab = vocabulary()
    is_separator = torch.tensor([c in SEPARATORS for c in vocab])[ids]  # (n, T)
    visible = torch.tril(torch.ones(T, T, dtype=torch.bool))
    return is_separator[:, None, :] & visible  # (n, T_q, T_k)


REFERENCES = {
    "previous_token": previous_token_reference,
    "two_back": two_back_reference,
    "induction": induction_reference,
    "first_token": first_token_reference,
    "same_character": same_character_reference,
    "separator": separator_reference,
    "current_token": current_token_reference,
}


def induction_probe(n: int, T: int, generator: torch.Generator | None = None) -> Tensor:
    """ids (n, T): a string of T // 2 distinct random letters, then the same string again (the
    induction-heads paper's probe; letters the model never saw in this order)."""
    generator = torch.Generator().manual_seed(PROBE_SEED) if generator is None else generator
    letters = letter_ids()
    half = min(T // 2, len(LETTERS))
    rows = []
    for _ in range(n):
        segment = letters[torch.randperm(len(letters), generator=generator)[:half]]
        rows.append(torch.cat([segment, segment])[:T])
    return torch.stack(rows)


def text_windows(n: int, T: int) -> Tensor:
    """ids (n, T): n evenly spaced windows of the held-out text."""
    held = split("held_out")
    stride = (len(held) - T) // max(1, n - 1)
    return torch.stack([held[i * stride : i * stride + T] for i in range(n)])


@torch.no_grad()
def copy_accuracy(model: CharGPT, probe: Tensor | None = None) -> float:
    """Share of the second copy's characters (after its first) the model predicts exactly."""
    probe = induction_probe(200, model.context) if probe is None else probe
    half = probe.shape[1] // 2
    predicted = torch.cat(
        [
            model(probe[start : start + EVAL_BATCH]).logits.argmax(-1)
            for start in range(0, len(probe), EVAL_BATCH)
        ]
    )  # (n, T), a few sequences a forward (EVAL_BATCH)
    return float((predicted[:, half:-1] == probe[:, half + 1 :]).float().mean())


@dataclass(frozen=True)
class HeadScore:
    """One head's detector score per kind, and each kind's ceiling on the text it was read on."""

    layer: int
    head: int
    scores: dict[str, float]
    ceilings: dict[str, float]

    def share(self, kind: str) -> float:
        """The score as a share of the best score possible on that text (0 when impossible)."""
        ceiling = self.ceilings[kind]
        return self.scores[kind] / ceiling if ceiling > 0 else 0.0

    @property
    def role(self) -> str | None:
        """The kind with the best share of its ceiling, when it reaches ROLE_SHARE."""
        kind = max(self.scores, key=self.share)
        return kind if self.share(kind) >= ROLE_SHARE else None

    @property
    def name(self) -> str:
        return f"L{self.layer}H{self.head}"


@torch.no_grad()
def head_scores(model: CharGPT, ids: Tensor, kinds=tuple(KINDS)) -> list[HeadScore]:
    """Every head's detector scores on ids (n, T), layer by layer."""
    traces = model(ids).traces
    references = {kind: REFERENCES[kind](ids) for kind in kinds}
    ceilings = {kind: round(detector_ceiling(r), 4) for kind, r in references.items()}
    out = []
    for layer, trace in enumerate(traces):
        per_kind = {k: detector_score(trace.weights, r) for k, r in references.items()}
        for head in range(trace.n_heads):
            scores = {k: round(float(v[head]), 4) for k, v in per_kind.items()}
            out.append(HeadScore(layer, head, scores, ceilings))
    return out


@torch.no_grad()
def measure(model: CharGPT) -> dict[str, float]:
    """The figures the build stores beside the weights (the lesson shows them; the tests
    recompute them): held-out loss, the bigram baseline, copy accuracy, parameters."""
    from attention.lm.corpus import bigram_loss
    from attention.lm.training import held_out_loss

    return {
        "held_out": held_out_loss(model),
        "bigram": bigram_loss(),
        "copy": copy_accuracy(model),
        "parameters": float(sum(p.numel() for p in model.parameters())),
    }


def report(model: CharGPT) -> str:
    """The build's figures: held-out loss beside the bigram baseline, copy accuracy, every
    head's previous-token and induction scores, and a sample."""
    from attention.lm.corpus import bigram_loss
    from attention.lm.generate import sample
    from attention.lm.training import held_out_loss

    text = text_windows(200, model.context)
    probe = induction_probe(200, model.context)
    prev = head_scores(model, text, ("previous_token",))
    ind = head_scores(model, probe, ("induction",))
    lines = [
        f"held-out loss {held_out_loss(model):.3f} nats/char (bigram {bigram_loss():.3f})",
        f"copy accuracy on repeated random strings {copy_accuracy(model, probe):.3f}",
    ]
    for p, i in zip(prev, ind, strict=True):
        lines.append(
            f"{p.name}: previous-token {p.scores['previous_token']:.3f} "
            f"(ceiling {p.ceilings['previous_token']:.3f}), induction {i.scores['induction']:.3f} "
            f"(ceiling {i.ceilings['induction']:.3f}, share {i.share('induction'):.2f})"
        )
    generated = sample(model, "ROMEO:\n", 200, generator=torch.Generator().manual_seed(0))
    lines.append("sample:\n" + generated.text)
    return "\n".join(lines)


__all__ = ["KINDS", "HeadScore", "copy_accuracy", "decode", "head_scores", "induction_probe"]
