"""Lesson 4's numbers: the scale the scores are multiplied by, and how spread out a softmax is."""

import math

import pytest
import torch

from attention.scaling import ONE_HOT, softmax_saturation, softmax_scale


def test_scaling_softmax_scale_is_one_over_tau_root_d_k():
    assert softmax_scale(16) == 0.25
    assert softmax_scale(16, 0.5) == 0.5
    assert softmax_scale(4, 4.0) == 0.125
    assert softmax_scale(3) == 1 / math.sqrt(3)


@pytest.mark.parametrize(("d_k", "temperature"), [(0, 1.0), (4, 0.0), (4, -1.0), (4, math.inf)])
def test_scaling_softmax_scale_rejects_bad_input(d_k, temperature):
    with pytest.raises(ValueError):
        softmax_scale(d_k, temperature)


def test_scaling_normalised_entropy_is_one_for_uniform_weights_and_zero_for_one_hot():
    assert softmax_saturation(torch.zeros(4), 1.0).normalised_entropy == pytest.approx(1.0)
    peaked = softmax_saturation(torch.tensor([0.0, 0.0, 1000.0]), 1.0)
    assert peaked.normalised_entropy == pytest.approx(0.0, abs=1e-12)
    assert softmax_saturation(torch.tensor([3.0]), 1.0).normalised_entropy == 1.0


def test_scaling_normalised_entropy_divides_the_entropy_by_log_t():
    saturation = softmax_saturation(torch.tensor([0.0, 1.0, 2.0]), 1.0)
    p = torch.softmax(torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), dim=-1)
    expected = float(-(p * p.log()).sum()) / math.log(3)
    assert saturation.normalised_entropy == pytest.approx(expected, rel=1e-12)


def test_scaling_one_hot_is_a_largest_weight_of_at_least_0_99():
    assert ONE_HOT == 0.99
    assert softmax_saturation(torch.tensor([0.0, 0.0, 1000.0]), 1.0).one_hot
    assert not softmax_saturation(torch.zeros(4), 1.0).one_hot
    # exactly at the line: e^x / (e^x + 1) = 0.99 counts as one-hot
    at_line = softmax_saturation(torch.tensor([0.0, math.log(99.0)]), 1.0)
    assert at_line.max_weight == pytest.approx(0.99) and at_line.one_hot


def test_scaling_normalised_entropy_names_its_length_n_keys_not_t():
    """The normaliser is the number of keys in the row, n (lesson 4's sidebar T is another
    length): the docstring says so."""
    from attention.scaling import Saturation

    doc = Saturation.normalised_entropy.__doc__
    assert "log n" in doc and "n keys" in doc and "log T" not in doc
