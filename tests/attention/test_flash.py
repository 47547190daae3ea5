"""FlashAttention's output accumulator O, step by step (issue 17: lesson 11 never showed it)."""

import pytest
import torch
from torch.testing import assert_close

from attention.flash import accumulator_progress, tiled_attention


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_flash_accumulator_rows_fill_block_by_block_and_end_as_output_times_l(causal, batch):
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(*batch, 7, 4, generator=gen) for _ in range(3))
    v = torch.cat([v, v[..., :1]], dim=-1)  # d_v = 5, not d: O is (T_q, d_v)
    result = tiled_attention(q, k, v, block_q=3, block_k=2, causal=causal)
    for index, step in enumerate(result.steps):
        acc, waiting = accumulator_progress(result, index)
        assert acc.shape == (*batch, 7, 5) and waiting.shape == (7, 5)
        assert waiting.tolist() == [[row >= step.rows.stop] * 5 for row in range(7)]
        assert_close(acc[..., step.rows.start : step.rows.stop, :], step.acc_after)  # this tile's
        assert (acc[..., step.rows.stop :, :] == 0).all()  # rows to come: O starts at 0
    # after its last key tile a row's O divided by ℓ is its output
    acc, waiting = accumulator_progress(result, len(result.steps) - 1)
    assert not waiting.any()
    last = {step.q_block: step for step in result.steps}  # each query block's last tile
    for step in last.values():
        rows = slice(step.rows.start, step.rows.stop)
        assert_close(acc[..., rows, :] / step.l_after[..., None], result.output[..., rows, :])


def test_flash_accumulator_first_tile_is_the_tiles_unnormalised_weights_times_v():
    q, k, v = (torch.randn(4, 2, generator=torch.Generator().manual_seed(i)) for i in range(3))
    result = tiled_attention(q, k, v, block_q=2, block_k=2)
    acc, _ = accumulator_progress(result, 0)
    S = q[:2] @ k[:2].T / 2**0.5  # (2, 2): the first tile's scores
    P = torch.exp(S - S.amax(dim=-1, keepdim=True))
    assert_close(acc[:2], P @ v[:2])


def test_flash_accumulator_rejects_a_step_outside_the_walk():
    q = torch.randn(3, 2)
    result = tiled_attention(q, q, q, block_q=2, block_k=2)
    for bad in (-1, len(result.steps)):
        with pytest.raises(ValueError):
            accumulator_progress(result, bad)
