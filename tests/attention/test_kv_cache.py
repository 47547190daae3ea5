"""Lesson 10's comparisons: a grouped-query layer made from a multi-head one (the GQA paper's
mean-pooled K/V heads), decoded with its smaller cache; cache sizes of a real model; the
full pass under a window."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attention import MultiHeadSelfAttention, seeded_layer
from attention.kv_cache import (
    LLAMA_2_70B,
    cache_bytes_per_token,
    decode_grouped,
    full_pass,
    pool_kv_heads,
)
from attention.masks import sliding_window_mask


def x_of(T: int = 7, C: int = 8, seed: int = 1) -> torch.Tensor:
    return torch.randn(T, C, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(("H", "H_kv"), [(4, 2), (4, 1), (2, 1), (4, 4)])
def test_pool_kv_heads_mean_pools_each_groups_key_and_value_heads(H, H_kv):
    layer = seeded_layer(0, 8, H, bias=True)
    pooled = pool_kv_heads(layer, H_kv)
    d_head, group = 8 // H, H // H_kv
    assert pooled.n_heads == H and pooled.n_kv_heads == H_kv
    for name in ("W_k", "W_v"):
        heads = getattr(layer, name).weight.view(H, d_head, 8)
        for j in range(H_kv):
            expected = heads[j * group : (j + 1) * group].mean(0)  # (d_head, C)
            got = getattr(pooled, name).weight[j * d_head : (j + 1) * d_head]
            assert_close(got, expected)
        bias = getattr(layer, name).bias.view(H, d_head)
        assert_close(
            getattr(pooled, name).bias.view(H_kv, d_head), bias.view(H_kv, group, d_head).mean(1)
        )
    assert torch.equal(pooled.W_q.weight, layer.W_q.weight)
    assert torch.equal(pooled.W_o.weight, layer.W_o.weight)


def test_pool_kv_heads_with_every_head_keeps_the_layer():
    layer = seeded_layer(0, 8, 2)
    x = x_of()
    with torch.no_grad():
        assert_close(pool_kv_heads(layer, 2)(x, "causal").output, layer(x, "causal").output)


def test_pool_kv_heads_gives_a_layer_equal_to_sdpa_with_enable_gqa():
    layer = pool_kv_heads(seeded_layer(0, 8, 4), 2)
    with torch.no_grad():
        trace = layer(x_of()[None], "causal")
    expected = F.scaled_dot_product_attention(
        trace.q, trace.k, trace.v, is_causal=True, enable_gqa=True
    )
    assert_close(trace.heads, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("bad", [0, 3, 1.5, True])
def test_pool_kv_heads_rejects_counts_that_do_not_divide(bad):
    with pytest.raises(ValueError, match="n_kv_heads"):
        pool_kv_heads(seeded_layer(0, 8, 4), bad)


def test_pool_kv_heads_needs_a_multi_head_layer():
    with pytest.raises(ValueError, match="multi-head"):
        pool_kv_heads(MultiHeadSelfAttention(8, 4, n_kv_heads=2), 1)


def test_decode_grouped_has_the_smaller_cache_and_other_outputs():
    layer, x = seeded_layer(0, 8, 2), x_of()
    grouped = decode_grouped(layer, x, 1)
    assert grouped.layer.n_kv_heads == 1
    assert [s.k_cache.shape for s in grouped.generation.steps][-1] == (1, 7, 4)
    assert grouped.full_pass_gap < 1e-6  # its own decoding equals its own full pass
    with torch.no_grad():
        plain = layer(x, "causal").output
        pooled = grouped.layer(x, "causal").output
    assert grouped.output_change == pytest.approx(float((pooled - plain).abs().max()), abs=1e-6)
    assert grouped.output_change > 1e-3  # a different layer: other numbers


def test_decode_grouped_with_every_head_changes_nothing():
    grouped = decode_grouped(seeded_layer(0, 8, 2), x_of(), 2)
    assert grouped.output_change < 1e-6


def test_cache_bytes_per_token_counts_k_and_v_of_every_layer():
    assert cache_bytes_per_token(8, 128, bytes_per_number=2, n_layers=80) == 327_680
    assert cache_bytes_per_token(2, 4) == 2 * 2 * 4 * 4


def test_llama_2_70b_shares_eight_kv_heads_among_sixty_four():
    m = LLAMA_2_70B
    assert (m.n_heads, m.n_kv_heads, m.d_head, m.n_layers, m.bytes_per_number) == (
        64, 8, 128, 80, 2,
    )  # fmt: skip


@pytest.mark.parametrize("window", [None, 1, 3])
def test_full_pass_runs_the_layer_under_the_causal_or_window_mask(window):
    layer, x = seeded_layer(0, 8, 2), x_of()
    mask = "causal" if window is None else sliding_window_mask(7, window)
    with torch.no_grad():
        expected = layer(x, mask)
    trace = full_pass(layer, x, window=window)
    assert_close(trace.weights, expected.weights)
    assert torch.equal(trace.allowed.expand(2, 7, 7)[0], expected.allowed.expand(2, 7, 7)[0])


def test_pool_kv_heads_leaves_the_global_random_state_alone():
    layer = seeded_layer(0, 8, 4)
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    pool_kv_heads(layer, 2)
    assert torch.equal(torch.rand(3), expected)
