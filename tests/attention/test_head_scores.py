"""Head scores: TransformerLens's head-detector metric reproduced exactly, beside our row score.

The reference is TransformerLens's `transformer_lens/head_detector.py`: `detect_head(...,
exclude_bos=False, exclude_current_token=False, error_measure="mul")` scores one sequence as
`(A * R).sum() / A.sum()` after zeroing column 0 (exclude_bos) and the diagonal
(exclude_current_token) of A, and a list of sequences as the mean of their scores. Its detection
patterns are rebuilt below the way that file builds them.
"""

import pytest
import torch
from torch.testing import assert_close

from attention.tiny import TASKS, evaluate, head_reports, load
from attention.tiny.diagnostics import (
    LayerKnockout,
    detector_ceiling,
    detector_score,
    induction_reference,
    layer_knockouts,
    previous_token_reference,
    repeated_probe,
    row_score,
)
from attention.tiny.training import build_model

# One sequence, T = 4, causal: each row sums to 1.
A = torch.tensor(
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
        [0.2, 0.7, 0.1, 0.0],
        [0.1, 0.2, 0.3, 0.4],
    ]
)
IDS = torch.tensor([[3, 1, 2, 0]])


def tl_mul(attention: torch.Tensor, detection: torch.Tensor, bos=False, current=False) -> float:
    """compute_head_attention_similarity_score with error_measure='mul', line for line."""
    attention = attention.clone()
    if bos:
        attention[:, 0] = 0
    if current:
        attention.fill_diagonal_(0)
    score = attention * detection
    return (score.sum() / attention.sum()).item()


def tl_previous_token(tokens: torch.Tensor) -> torch.Tensor:
    """get_previous_token_head_detection_pattern."""
    pattern = torch.zeros(tokens.shape[-1], tokens.shape[-1])
    pattern[1:, :-1] = torch.eye(tokens.shape[-1] - 1)
    return torch.tril(pattern)


def tl_induction(tokens: torch.Tensor) -> torch.Tensor:
    """get_induction_head_detection_pattern (its duplicate-token pattern without numpy)."""
    row = tokens.reshape(-1)
    duplicate = (row[:, None] == row[None, :]).int()
    duplicate.fill_diagonal_(0)
    duplicate = torch.tril(duplicate.float())
    shifted = torch.roll(duplicate, shifts=1, dims=1)
    zeros = torch.zeros(duplicate.shape[0], 1)
    return torch.tril(torch.cat((zeros, shifted[:, 1:]), dim=1))


def test_head_scores_detector_is_transformerlens_mul_on_a_hand_made_pattern():
    reference = previous_token_reference(IDS)  # rows 1..3 -> keys 0..2
    score = detector_score(A[None, None], reference)
    # (A * R).sum() / A.sum() = (0.5 + 0.7 + 0.3) / 4: row 0 has no reference and counts 0
    assert_close(score, torch.tensor([1.5 / 4]))
    assert float(score) == pytest.approx(tl_mul(A, tl_previous_token(IDS)))


def test_head_scores_detector_exclusions_zero_attention_as_transformerlens_does():
    reference = previous_token_reference(IDS)
    no_bos = detector_score(A[None, None], reference, exclude_bos=True)
    # column 0 zeroed in both sums: (0.7 + 0.3) / (0.5 + 0.8 + 0.9)
    assert float(no_bos) == pytest.approx(1.0 / 2.2)
    assert float(no_bos) == pytest.approx(tl_mul(A, tl_previous_token(IDS), bos=True))
    no_current = detector_score(A[None, None], reference, exclude_current_token=True)
    # the diagonal zeroed in both sums: (0.5 + 0.7 + 0.3) / (4 - 1 - 0.5 - 0.1 - 0.4)
    assert float(no_current) == pytest.approx(1.5 / 2.0)
    assert float(no_current) == pytest.approx(tl_mul(A, tl_previous_token(IDS), current=True))
    both = detector_score(A[None, None], reference, exclude_bos=True, exclude_current_token=True)
    assert float(both) == pytest.approx(tl_mul(A, tl_previous_token(IDS), True, True))


def test_head_scores_detector_averages_sequences_and_heads_separately():
    """A list of sequences: the mean of each sequence's score (detect_head on a list)."""
    uniform = torch.tril(torch.ones(4, 4))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    weights = torch.stack([torch.stack([A, uniform]), torch.stack([uniform, A])])  # (2, 2, 4, 4)
    ids = torch.cat([IDS, IDS.flip(1)])
    reference = previous_token_reference(ids)
    expected = [
        (tl_mul(A, tl_previous_token(IDS)) + tl_mul(uniform, tl_previous_token(IDS))) / 2
    ] * 2
    assert_close(detector_score(weights, reference), torch.tensor(expected))


def test_head_scores_references_are_transformerlens_detection_patterns():
    probe = repeated_probe(TASKS["induction"], 4, torch.Generator().manual_seed(0))
    for ids in probe:
        assert torch.equal(induction_reference(ids[None])[0].float(), tl_induction(ids))
        assert torch.equal(previous_token_reference(ids[None])[0].float(), tl_previous_token(ids))


def test_head_scores_row_score_keeps_only_rows_with_a_reference_and_a_choice():
    allowed = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    reference = previous_token_reference(IDS)
    # rows 1..3 put 0.5, 0.7, 0.3 on the previous token; row 0 has no reference and no choice
    assert_close(row_score(A[None, None], reference, allowed), torch.tensor([1.5 / 3]))
    assert detector_ceiling(reference) == pytest.approx(3 / 4)  # a perfect head's detector score


@pytest.fixture(scope="module")
def reports():
    return {name: head_reports(load(name).model, TASKS[name]) for name in TASKS}


def test_head_scores_shipped_values_are_the_known_ones(reports):
    """The numbers of issue 17: previous-token 0.87 (TransformerLens) against 0.97 (ours),
    induction 0.48 against 0.99; a perfect induction head would score only 0.48 there."""
    previous = max(reports["previous_token"], key=lambda r: r.scores["previous_token"])
    assert previous.scores["previous_token"] == pytest.approx(0.87, abs=0.005)
    assert previous.row_scores["previous_token"] == pytest.approx(0.97, abs=0.005)
    induction = next(r for r in reports["induction"] if r.layer == 1)
    assert induction.scores["induction"] == pytest.approx(0.48, abs=0.005)
    assert induction.row_scores["induction"] == pytest.approx(0.99, abs=0.005)
    assert induction.ceilings["induction"] == pytest.approx(0.48, abs=0.005)


def test_head_scores_detector_never_exceeds_its_ceiling(reports):
    for name, task_reports in reports.items():
        for report in task_reports:
            for kind, value in report.scores.items():
                assert value <= report.ceilings[kind] + 1e-4, (name, report, kind)


@pytest.mark.parametrize(
    ("alone", "whole", "verdict"),
    [
        ((0.995, 0.984), 0.133, "redundant"),  # the shipped previous-token model
        ((0.975, 0.384), 0.066, "carried"),  # the shipped induction model's layer 0
        ((0.5, 0.45), 0.1, "shared"),
        ((0.99, 0.98), 0.95, "idle"),
    ],
)
def test_head_scores_knockout_verdict_follows_the_numbers(alone, whole, verdict):
    knockout = LayerKnockout(0, 1.0, alone, whole)
    assert knockout.verdict == verdict
    assert knockout.alone_cost == pytest.approx(tuple(100 * (1 - a) for a in alone))
    assert knockout.whole_cost == pytest.approx(100 * (1 - whole))


def test_head_scores_layer_knockouts_are_the_held_out_accuracies():
    run = load("running_max")
    (knockout,) = layer_knockouts(run.model, run.task)
    assert knockout.full == evaluate(run.model, run.task)
    assert knockout.alone[1] == evaluate(run.model, run.task, ablate={(0, 1)})
    assert knockout.whole == evaluate(run.model, run.task, ablate={(0, 0), (0, 1)})
    induction = load("induction")
    assert [k.layer for k in layer_knockouts(induction.model, induction.task)] == [0]


def test_head_scores_model_blocked_cells_are_the_causal_future():
    assert torch.equal(
        build_model(TASKS["previous_token"], 0).blocked(4),
        torch.ones(4, 4, dtype=torch.bool).triu(1),
    )
    assert build_model(TASKS["reverse"], 0).blocked(4) is None


def test_induction_probe_rows_with_a_reference_are_the_second_copy_and_repeating_filler():
    """Lesson 6's caption (issue 28, item 6): on the probe every second-copy token has an
    earlier occurrence, and so do filler tokens that repeat a segment token; nothing else."""
    from attention.tiny.diagnostics import induction_reference, repeated_probe

    task = TASKS["induction"]
    probe = repeated_probe(task, 64, torch.Generator().manual_seed(0))
    reference = induction_reference(probe)  # (n, T, T): where an induction head attends
    has = reference.reshape(*reference.shape[:2], -1).any(-1)  # (n, T) rows with a reference
    start = len(task.prefix)
    length = min((task.seq_len - start) // 2, len(task.content))
    second = slice(start + length, start + 2 * length)
    assert has[:, second].all()
    assert not has[:, : start + length].any()  # prefix and first copy: distinct, nothing before
    tail = has[:, start + 2 * length :]
    assert tail.any()  # some filler repeats a segment token, as the caption says
