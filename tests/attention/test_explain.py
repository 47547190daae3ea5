"""The worked arithmetic agrees with the trace it explains."""

import math

import pytest
import torch
from torch.testing import assert_close

from attention import seeded_layer
from attention.explain import (
    check_trace,
    explain_cell,
    explain_output_row,
    fused_difference,
    largest_magnitude,
    merged,
)
from attention.scaling import random_scores, sample_dot_products, softmax_saturation


@pytest.fixture
def trace():
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        return seeded_layer(3, 8, 2)(x, "causal")


def test_explain_cell_steps_reproduce_the_weight(trace):
    cell = explain_cell(trace, 1, 3, 1)
    assert cell.allowed
    assert cell.score == pytest.approx(float(cell.products.sum()), abs=1e-6)
    assert cell.scaled == pytest.approx(cell.score * cell.scale, abs=1e-6)
    assert cell.weight == pytest.approx(cell.exp / cell.normaliser, abs=1e-6)
    assert cell.weight == pytest.approx(float(trace.weights[1, 3, 1]))


def test_explain_cell_blocked_has_zero_exp(trace):
    cell = explain_cell(trace, 0, 1, 4)
    assert not cell.allowed and cell.exp == 0.0 and cell.weight == 0.0


def test_explain_cell_rejects_bad_positions(trace):
    with pytest.raises(ValueError, match="positions"):
        explain_cell(trace, 0, 5, 0)
    with pytest.raises(ValueError, match="head"):
        explain_cell(trace, 2, 0, 0)


def test_explain_output_row_is_the_weighted_sum(trace):
    row = explain_output_row(trace, 0, 4)
    assert_close(row.terms.sum(0), row.output)
    assert_close(row.output, trace.heads[0, 4])


def test_check_trace_passes_on_a_real_trace(trace):
    checks = check_trace(trace)
    assert checks.max_row_error < 1e-6 and checks.blocked_nonzero == 0 and checks.output_matches


def test_merged_is_the_full_projection(trace):
    x = trace.x
    layer = seeded_layer(3, 8, 2)
    assert_close(merged(trace, "q"), x @ layer.W_q.weight.T)


def test_largest_magnitude_ignores_blocked(trace):
    assert largest_magnitude(trace, "masked") == pytest.approx(
        float(trace.scaled[trace.allowed.expand_as(trace.scaled)].abs().max())
    )


def test_fused_difference_is_tiny():
    layer = seeded_layer(0, 16, 4)
    assert fused_difference(layer, torch.randn(6, 16)) < 1e-6


def test_scaling_variance_grows_with_d_k():
    small, large = sample_dot_products(4, 4000, 0), sample_dot_products(256, 4000, 0)
    assert 3 < small.raw_variance < 5 and 220 < large.raw_variance < 290
    assert 0.85 < large.scaled_variance < 1.15


def test_scaling_saturation_and_vanishing_gradient():
    scores = random_scores(8, 512, 0)
    raw, scaled = softmax_saturation(scores, 1.0), softmax_saturation(scores, 1 / math.sqrt(512))
    assert raw.max_weight > 0.99 and raw.gradient_norm < 0.05
    assert scaled.entropy > raw.entropy and scaled.gradient_norm > raw.gradient_norm


def test_scaling_tiny_temperature_stays_finite():
    result = softmax_saturation(random_scores(8, 64, 0), 1e4)
    assert math.isfinite(result.entropy) and result.max_weight == pytest.approx(1.0)


def test_explain_cell_blocked_score_far_above_the_max_stays_finite():
    from attention import worked_example

    ex = worked_example(torch.tensor([[100.0, 100.0], [100.0, -100.0], [-100.0, 100.0]]))
    with torch.no_grad():
        trace = ex.layer(ex.embedded.x, "causal", mask_value=-1e9)
    for i in range(3):
        cell = explain_cell(trace, 0, i, 0)
        assert math.isfinite(cell.normaliser) and cell.weight == pytest.approx(
            float(trace.weights[0, i, 0])
        )
