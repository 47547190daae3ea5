"""Position, the KV cache, FlashAttention's tiling, grouped-query and sliding-window attention:
each shortcut against PyTorch or the plain layer."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

from attention import MultiHeadSelfAttention, seeded_layer, sinusoidal_positions
from attention.flash import CURRENT, DONE, TO_COME, sdpa_difference, tile_progress, tiled_attention
from attention.inputs import sinusoidal_positions as from_inputs
from attention.kv_cache import full_pass_difference, generate_with_cache
from attention.masks import sliding_window_mask
from attention.positions import rope, shuffle_tokens


def test_positions_sinusoidal_still_importable_from_inputs():
    assert from_inputs is sinusoidal_positions
    pe = sinusoidal_positions(4, 6)
    assert_close(pe[1, 0], torch.sin(torch.tensor(1.0)))
    assert_close(pe[1, 1], torch.cos(torch.tensor(1.0)))


def test_rope_rotates_interleaved_pairs_by_position_times_frequency():
    x = torch.randn(5, 4, dtype=torch.float64)
    out = rope(x, base=100.0)
    for p in range(5):
        for i in range(2):
            theta = p * 100.0 ** (-2 * i / 4)
            c, s = torch.cos(torch.tensor(theta)), torch.sin(torch.tensor(theta))
            a, b = x[p, 2 * i], x[p, 2 * i + 1]
            assert_close(out[p, 2 * i], a * c - b * s)
            assert_close(out[p, 2 * i + 1], a * s + b * c)
    assert_close(out.norm(dim=-1), x.norm(dim=-1))  # a rotation keeps lengths


def test_rope_score_depends_only_on_the_offset():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 8, generator=gen), torch.randn(1, 8, generator=gen)
    T = 12
    qs, ks = rope(q.expand(T, 8)), rope(k.expand(T, 8))  # the same token at every position
    scores = qs @ ks.T  # (T, T): scores[m, n] for q at m, k at n
    for offset in range(-T + 1, T):
        diagonal = torch.diagonal(scores, offset=offset)
        assert_close(diagonal, diagonal[0].expand_as(diagonal), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "bad", [torch.randn(4, 3), torch.randn(3), torch.zeros(2, 2, dtype=torch.long)]
)
def test_rope_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        rope(bad)


def test_attention_without_positions_is_permutation_equivariant():
    layer = seeded_layer(0, 8, 2)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad():
        out, out_perm = layer(x).output, layer(x[perm]).output
        assert_close(out_perm, out[perm])
        causal, causal_perm = layer(x, "causal").output, layer(x[perm], "causal").output
    assert not torch.allclose(causal_perm, causal[perm])  # the causal mask breaks it


def test_positions_shuffle_tokens_measures_attn_of_px_against_p_attn_of_x():
    layer = seeded_layer(0, 4, 2)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    perm = torch.tensor([2, 0, 1])
    shuffled = shuffle_tokens(layer, x, perm)
    with torch.no_grad():
        assert_close(shuffled.outputs, layer(x).output)
        assert_close(shuffled.permuted_outputs, layer(x[perm]).output)
    assert shuffled.perm is perm and shuffled.gap < 1e-6
    causal = shuffle_tokens(layer, x, perm, "causal")
    expected = float((causal.permuted_outputs - causal.outputs[perm]).abs().max())
    assert causal.gap == expected > 1e-3


def test_sliding_window_mask_sees_the_last_window_keys():
    mask = sliding_window_mask(5, 2)
    assert mask.tolist() == [
        [True, False, False, False, False],
        [True, True, False, False, False],
        [False, True, True, False, False],
        [False, False, True, True, False],
        [False, False, False, True, True],
    ]
    with pytest.raises(ValueError):
        sliding_window_mask(5, 0)


@settings(max_examples=25, deadline=None)
@given(
    T=st.integers(1, 20), block_q=st.integers(1, 9), block_k=st.integers(1, 9),
    causal=st.booleans(), heads=st.integers(1, 3),
)  # fmt: skip
def test_flash_tiled_attention_equals_sdpa(T, block_q, block_k, causal, heads):
    gen = torch.Generator().manual_seed(T * 100 + block_q * 10 + block_k)
    q, k, v = (torch.randn(heads, T, 4, generator=gen) for _ in range(3))
    result = tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert_close(result.output, expected, atol=1e-5, rtol=1e-5)


def test_flash_log_walks_every_tile_with_the_running_statistics():
    q, k, v = (torch.randn(7, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    result = tiled_attention(q, k, v, block_q=3, block_k=2, causal=True)
    assert len(result.steps) == 3 * 4  # ceil(7/3) query blocks x ceil(7/2) key blocks
    first = result.steps[0]
    assert torch.isinf(first.m_before).all() and (first.l_before == 0).all()
    assert first.rows == range(0, 3) and first.cols == range(0, 2)
    assert any(step.skipped for step in result.steps)  # tiles wholly in the future
    for step in result.steps:  # the running max never falls
        assert (step.m_after >= step.m_before).all()
    assert result.tile_bytes < result.full_bytes


def test_flash_sdpa_difference_is_the_largest_gap_to_pytorch():
    q, k, v = (torch.randn(3, 2, generator=torch.Generator().manual_seed(i)) for i in range(3))
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert sdpa_difference(q, k, v, reference, causal=True) == 0.0
    shifted = reference.clone()
    shifted[1, 0] += 0.25
    assert sdpa_difference(q, k, v, shifted, causal=True) == pytest.approx(0.25)
    assert sdpa_difference(q, k, v, reference) > 0  # the open pass differs from the causal one


def test_flash_tile_progress_marks_the_tile_being_computed_and_those_done():
    q = torch.randn(3, 2)
    result = tiled_attention(q, q, q, block_q=2, block_k=2)  # tiles: rows 0-1, 2 x cols 0-1, 2
    assert (TO_COME, DONE, CURRENT) == (0, 1, 2)
    assert tile_progress(result, 0).tolist() == [[2, 2, 0], [2, 2, 0], [0, 0, 0]]
    assert tile_progress(result, 1).tolist() == [[1, 1, 2], [1, 1, 2], [0, 0, 0]]
    assert tile_progress(result, 3).tolist() == [[1, 1, 1], [1, 1, 1], [1, 1, 2]]
    with pytest.raises(ValueError):
        tile_progress(result, 4)


def test_flash_tile_progress_marks_skipped_future_tiles_as_walked():
    q = torch.randn(2, 2)
    result = tiled_attention(q, q, q, block_q=1, block_k=1, causal=True)
    assert result.steps[1].skipped  # query 0 against key 1
    assert tile_progress(result, 2).tolist() == [[1, 1], [2, 0]]


def test_flash_rejects_bad_blocks():
    q = torch.randn(3, 2)
    with pytest.raises(ValueError):
        tiled_attention(q, q, q, block_q=0, block_k=1)


@pytest.mark.parametrize(("H", "H_kv", "window"), [(2, 2, None), (4, 2, None), (4, 1, 3)])
def test_kv_cache_generation_equals_the_full_pass(H, H_kv, window):
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(8, H, n_kv_heads=H_kv)
    x = torch.randn(9, 8)
    with torch.no_grad():
        mask = "causal" if window is None else sliding_window_mask(9, window)
        full = layer(x, mask).output
        generation = generate_with_cache(layer, x, window=window)
    assert_close(generation.outputs, full, atol=1e-5, rtol=1e-5)
    cached = [step.k_cache.shape[1] for step in generation.steps]
    assert cached == [min(t + 1, window or 99) for t in range(9)]
    assert all(step.k_cache.shape[0] == H_kv for step in generation.steps)
    last = generation.steps[-1]
    assert last.macs_cached < last.macs_uncached
    assert last.cache_bytes == 2 * cached[-1] * H_kv * (8 // H) * 4


@pytest.mark.parametrize("window", [None, 2])
def test_kv_cache_full_pass_difference_is_the_largest_gap_to_the_full_pass(window):
    layer = seeded_layer(0, 4, 2)
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        mask = "causal" if window is None else sliding_window_mask(4, window)
        full = layer(x, mask).output
        decoded = generate_with_cache(layer, x, window=window).outputs
    assert full_pass_difference(layer, x, full, window=window) == 0.0
    assert full_pass_difference(layer, x, decoded, window=window) < 1e-6
    shifted = full.clone()
    shifted[2, 1] -= 0.5
    assert full_pass_difference(layer, x, shifted, window=window) == pytest.approx(0.5)


@pytest.mark.parametrize(("H", "H_kv"), [(4, 4), (4, 2), (4, 1), (6, 3), (8, 2)])
def test_gqa_heads_equal_sdpa_with_enable_gqa(H, H_kv):
    torch.manual_seed(1)
    layer = MultiHeadSelfAttention(24, H, n_kv_heads=H_kv)
    x = torch.randn(2, 7, 24)
    with torch.no_grad():
        trace = layer(x, "causal")
    assert trace.k.shape == trace.v.shape == (2, H_kv, 7, 24 // H)
    expected = F.scaled_dot_product_attention(
        trace.q, trace.k, trace.v, is_causal=True, enable_gqa=True
    )
    assert_close(trace.heads, expected, atol=1e-5, rtol=1e-5)


def test_gqa_default_keeps_the_seeded_weights():
    plain = seeded_layer(3, 8, 2)
    same = seeded_layer(3, 8, 2, n_kv_heads=2)
    assert torch.equal(plain.W_k.weight, same.W_k.weight)
    assert seeded_layer(3, 8, 2, n_kv_heads=1).W_k.weight.shape == (4, 8)


@pytest.mark.parametrize("bad", [0, 3, 1.5, True])
def test_gqa_rejects_kv_heads_that_do_not_divide(bad):
    with pytest.raises(ValueError, match="n_kv_heads"):
        MultiHeadSelfAttention(8, 4, n_kv_heads=bad)


def test_tiled_bytes_count_the_same_two_matrices_tile_and_whole():
    """One tile's S and P against the whole S and P (issue 17 item 2: the whole was counted once,
    "32 bytes against 144" where 288 is right)."""
    q, k, v = (torch.randn(6, 4) for _ in range(3))  # float32: 4 bytes a number
    result = tiled_attention(q, k, v, block_q=2, block_k=2)
    assert result.tile_bytes == 2 * 2 * 2 * 4  # S and P of one 2 x 2 tile
    assert result.full_bytes == 2 * 6 * 6 * 4  # S and P of the whole 6 x 6 grid: 288


def test_tiled_full_bytes_equal_the_cost_tables_matrix_bytes():
    """Lesson 11's two memory figures for the full matrices agree (T = 64: 32,768 B)."""
    from attention.cost import measure_costs

    q, k, v = (torch.randn(64, 64) for _ in range(3))
    (cost,) = measure_costs((64,), repeats=1)
    assert tiled_attention(q, k, v, block_q=16, block_k=16).full_bytes == cost.matrix_bytes
