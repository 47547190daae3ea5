"""RoPE's two pairings against the code that defines them: interleaved pairs (RoFormer, Meta's
Llama `apply_rotary_emb`, complex multiplication) and half-split pairs (Hugging Face's Llama
`rotate_half`); the same rotation up to a permutation of the features."""

import pytest
import torch
from torch.testing import assert_close

from attention.positions import (
    compare_rope_pairings,
    half_split_order,
    rope,
    rope_half,
    shuffle_tokens,
)


def meta_apply_rotary_emb(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Meta's llama/model.py: consecutive features (x_2i, x_2i+1) read as one complex number,
    multiplied by e^(i p theta_i); x (T, d)."""
    T, d = x.shape
    freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].double() / d))
    freqs_cis = torch.polar(torch.ones(T, d // 2, dtype=torch.float64),
                            torch.outer(torch.arange(T).double(), freqs))  # fmt: skip
    x_ = torch.view_as_complex(x.double().reshape(T, -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(1)


def hf_rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Hugging Face's modeling_llama.rotate_half."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def hf_apply_rotary_pos_emb(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Hugging Face's Llama: emb = cat(freqs, freqs); x * cos + rotate_half(x) * sin."""
    T, d = x.shape
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).double() / d))
    freqs = torch.outer(torch.arange(T).double(), inv_freq)  # (T, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, d)
    return x * emb.cos() + hf_rotate_half(x) * emb.sin()


def sample(T: int = 7, d: int = 8, seed: int = 0) -> torch.Tensor:
    return torch.randn(T, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("d", [2, 4, 8, 16])
def test_rope_interleaved_equals_metas_complex_multiplication(d):
    x = sample(d=d)
    assert_close(rope(x), meta_apply_rotary_emb(x))


@pytest.mark.parametrize("d", [2, 4, 8, 16])
def test_rope_half_equals_hugging_faces_rotate_half(d):
    x = sample(d=d)
    assert_close(rope_half(x), hf_apply_rotary_pos_emb(x))


def test_half_split_order_lists_even_features_then_odd():
    assert half_split_order(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert half_split_order(2).tolist() == [0, 1]


def test_half_split_order_is_hugging_faces_weight_permutation():
    """convert_llama_weights_to_hf.py's permute(w) on one head's rows of W_q is w[order]."""
    d, C = 8, 5
    w = sample(T=d, d=C)
    hf_permuted = w.view(1, d // 2, 2, C).transpose(1, 2).reshape(d, C)
    assert torch.equal(hf_permuted, w[half_split_order(d)])


@pytest.mark.parametrize("d", [2, 6, 8, 16])
def test_rope_pairings_are_one_rotation_up_to_the_feature_order(d):
    x = sample(d=d)
    order = half_split_order(d)
    assert_close(rope_half(x[:, order]), rope(x)[:, order], atol=0, rtol=0)


def test_rope_pairings_give_other_numbers_on_the_same_features():
    x = sample(d=8)
    assert float((rope_half(x) - rope(x)).abs().max()) > 0.1


def test_rope_pairings_agree_at_position_zero_where_nothing_turns():
    x = sample(d=8)
    assert torch.equal(rope_half(x)[0], x[0])
    assert torch.equal(rope(x)[0], x[0])


def test_compare_rope_pairings_measures_both_gaps_and_the_scores():
    q, k = sample(seed=1).float(), sample(seed=2).float()
    check = compare_rope_pairings(q, k)
    assert check.order.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert check.permuted_gap == 0.0
    assert check.score_gap < 1e-5
    assert check.same_features_gap == pytest.approx(float((rope_half(q) - rope(q)).abs().max()))
    assert check.same_features_gap > 0.1
    assert_close(check.interleaved, rope(q))
    assert_close(check.half_split_permuted, rope_half(q[:, check.order]))
    assert_close(check.interleaved_permuted, rope(q)[:, check.order])


@pytest.mark.parametrize(
    "bad", [torch.randn(4, 3), torch.randn(3), torch.zeros(2, 2, dtype=torch.long)]
)
def test_rope_half_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        rope_half(bad)


@pytest.mark.parametrize("bad", [0, 3, -2, 2.0, True])
def test_half_split_order_rejects_odd_or_non_positive_d(bad):
    with pytest.raises(ValueError):
        half_split_order(bad)


def test_compare_rope_pairings_rejects_mismatched_q_and_k():
    with pytest.raises(ValueError):
        compare_rope_pairings(torch.randn(3, 4), torch.randn(3, 6))


def test_shuffle_tokens_row_gaps_are_zero_without_a_mask_and_not_under_the_causal_mask():
    from attention import seeded_layer
    from attention.positions import random_permutation

    layer = seeded_layer(0, 8, 2)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
    perm = random_permutation(6, 0)
    open_ = shuffle_tokens(layer, x, perm)
    causal = shuffle_tokens(layer, x, perm, "causal")
    assert open_.row_gaps.shape == (6,)
    assert float(open_.row_gaps.max()) < 1e-6
    assert float(causal.row_gaps.max()) == pytest.approx(causal.gap)
    expected = (causal.permuted_outputs - causal.outputs[perm]).abs().amax(dim=-1)
    assert_close(causal.row_gaps, expected)


def test_changed_rows_lists_the_positions_whose_row_moved():
    from attention import seeded_layer
    from attention.positions import changed_rows, random_permutation

    layer = seeded_layer(0, 8, 2)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
    perm = random_permutation(6, 0)
    assert changed_rows(shuffle_tokens(layer, x, perm)) == []
    causal = shuffle_tokens(layer, x, perm, "causal")
    expected = [i for i in range(6) if float(causal.row_gaps[i]) > 1e-5]
    assert changed_rows(causal) == expected
    assert 0 < len(expected) <= 6
