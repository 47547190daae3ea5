"""Mask builders and the three conventions."""

import pytest
import torch

from attention import as_additive, as_blocked, causal_mask, padding_mask


def test_causal_mask_is_lower_triangular():
    expected = torch.tensor([[True, False, False], [True, True, False], [True, True, True]])
    assert torch.equal(causal_mask(3), expected)


def test_causal_mask_rejects_zero_length():
    with pytest.raises(ValueError, match="at least one"):
        causal_mask(0)


def test_padding_mask_blocks_trailing_keys():
    mask = padding_mask([2, 3], 3)
    assert mask.shape == (2, 1, 1, 3)
    assert mask[:, 0, 0].tolist() == [[True, True, False], [True, True, True]]


@pytest.mark.parametrize("lengths", [[4], [-1], []])
def test_padding_mask_rejects_bad_lengths(lengths):
    with pytest.raises(ValueError, match="length"):
        padding_mask(lengths, 3)


def test_conventions_describe_the_same_mask():
    allowed = causal_mask(3)
    assert torch.equal(as_blocked(allowed), torch.tril(torch.ones(3, 3)) == 0)
    additive = as_additive(allowed)
    assert additive[0, 0] == 0 and additive[0, 1] == float("-inf")
    assert torch.equal(as_additive(allowed, -1e9)[0, 2], torch.tensor(-1e9))
