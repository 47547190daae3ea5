"""scaled_dot_product_attention against PyTorch's own, and its invariants; the plain steps."""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attention import causal_mask, naive_softmax, ops, scaled_dot_product_attention
from attention.ops import PLAIN, STEP_NAMES, Steps, attend


def random_qkv(gen, B, H, T, d):
    shape = (B, H, T, d)
    return tuple(torch.randn(shape, generator=gen) for _ in range(3))


@pytest.mark.parametrize("B,H,T,d", [(1, 1, 1, 1), (2, 3, 5, 4), (3, 8, 64, 8), (1, 2, 17, 16)])
@pytest.mark.parametrize("kind", ["none", "causal", "random"])
def test_sdpa_equals_pytorch(gen, B, H, T, d, kind):
    q, k, v = random_qkv(gen, B, H, T, d)
    if kind == "none":
        mask, reference_mask = None, None
    elif kind == "causal":
        mask, reference_mask = "causal", causal_mask(T)
    else:
        mask = torch.rand(B, H, T, T, generator=gen) > 0.4
        mask[..., 0, :] = False  # one fully blocked row in every head
        reference_mask = mask
    trace = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=reference_mask)
    assert_close(trace.output, expected, atol=1e-5, rtol=0)


def test_sdpa_fully_blocked_row_is_zero_not_nan(gen):
    q, k, v = random_qkv(gen, 1, 1, 3, 2)
    mask = torch.tensor([[False, False, False], [True, False, False], [True, True, True]])
    trace = scaled_dot_product_attention(q, k, v, mask)
    assert torch.equal(trace.weights[0, 0, 0], torch.zeros(3))
    assert torch.equal(trace.output[0, 0, 0], torch.zeros(2))
    assert not torch.isnan(trace.weights).any()


def test_sdpa_scaled_is_scores_times_scale(gen):
    q, k, v = random_qkv(gen, 2, 2, 4, 9)
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.scale == pytest.approx(1 / 3)
    assert_close(trace.scaled, trace.scores * (1 / 3))
    assert_close(trace.scores, q @ k.transpose(-2, -1))


def test_sdpa_custom_scale_is_used(gen):
    q, k, v = random_qkv(gen, 1, 1, 4, 4)
    trace = scaled_dot_product_attention(q, k, v, scale=2.0)
    expected = F.scaled_dot_product_attention(q, k, v, scale=2.0)
    assert_close(trace.output, expected, atol=1e-5, rtol=0)


def test_sdpa_rows_sum_to_one_and_blocked_exactly_zero(gen):
    q, k, v = random_qkv(gen, 2, 4, 10, 8)
    trace = scaled_dot_product_attention(q, k, v, "causal")
    assert_close(trace.weights.sum(-1), torch.ones(2, 4, 10))
    blocked = ~causal_mask(10).expand(2, 4, 10, 10)
    assert (trace.weights[blocked] == 0).all()


def test_sdpa_masked_holds_mask_value(gen):
    q, k, v = random_qkv(gen, 1, 1, 3, 2)
    trace = scaled_dot_product_attention(q, k, v, "causal", mask_value=-1e9)
    assert trace.masked[0, 0, 0, 1].item() == -1e9
    assert trace.masked[0, 0, 1, 0].item() == trace.scaled[0, 0, 1, 0].item()


def test_sdpa_weights_ignore_mask_value(gen):
    q, k, v = random_qkv(gen, 1, 2, 5, 3)
    mask = torch.ones(5, 5, dtype=torch.bool)
    mask[2] = False
    inf_fill = scaled_dot_product_attention(q, k, v, mask)
    big_fill = scaled_dot_product_attention(q, k, v, mask, mask_value=-1e9)
    assert torch.equal(inf_fill.weights, big_fill.weights)


def test_naive_softmax_shows_the_leak_and_the_nan(gen):
    q, k, v = random_qkv(gen, 1, 1, 4, 2)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    leak = naive_softmax(scaled_dot_product_attention(q, k, v, mask, mask_value=-1e9).masked)
    assert_close(leak[0, 0, 1], torch.full((4,), 0.25))
    nan = naive_softmax(scaled_dot_product_attention(q, k, v, mask).masked)
    assert torch.isnan(nan[0, 0, 1]).all()


def test_sdpa_float64_stays_float64(gen):
    q, k, v = (t.double() for t in random_qkv(gen, 1, 1, 3, 2))
    trace = scaled_dot_product_attention(q, k, v)
    assert trace.output.dtype == torch.float64
    assert trace.weights.dtype == torch.float64


def test_sdpa_different_query_and_key_lengths(gen):
    q = torch.randn(1, 2, 3, 4, generator=gen)
    k = torch.randn(1, 2, 5, 4, generator=gen)
    v = torch.randn(1, 2, 5, 6, generator=gen)
    trace = scaled_dot_product_attention(q, k, v, "causal")
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert trace.weights.shape == (1, 2, 3, 5)
    assert_close(trace.output, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "scale, message",
    [
        (0.0, "positive"),
        (-1.0, "positive"),
        (math.inf, "finite"),
        (math.nan, "finite"),
        ("2", "number"),
    ],
)
def test_sdpa_rejects_bad_scale(gen, scale, message):
    q, k, v = random_qkv(gen, 1, 1, 2, 2)
    with pytest.raises(ValueError, match=message):
        scaled_dot_product_attention(q, k, v, scale=scale)


@pytest.mark.parametrize("value", [0.0, 5.0, math.nan])
def test_sdpa_rejects_bad_mask_value(gen, value):
    q, k, v = random_qkv(gen, 1, 1, 2, 2)
    with pytest.raises(ValueError, match="mask_value"):
        scaled_dot_product_attention(q, k, v, "causal", mask_value=value)


def test_sdpa_rejects_empty_sequence():
    q = torch.zeros(1, 1, 0, 2)
    with pytest.raises(ValueError, match="empty sequence"):
        scaled_dot_product_attention(q, q, q)


def test_sdpa_rejects_non_finite(gen):
    q, k, v = random_qkv(gen, 1, 1, 2, 2)
    k[0, 0, 1, 1] = math.nan
    with pytest.raises(ValueError, match="k contains NaN"):
        scaled_dot_product_attention(q, k, v)


def test_sdpa_rejects_overflowing_scores():
    q = torch.full((1, 1, 2, 2), 1e30)
    with pytest.raises(ValueError, match="too large"):
        scaled_dot_product_attention(q, q, q)


def test_sdpa_rejects_mismatched_dims(gen):
    q, k, v = random_qkv(gen, 1, 1, 2, 2)
    with pytest.raises(ValueError, match="same last dimension"):
        scaled_dot_product_attention(q, k[..., :1], v)
    with pytest.raises(ValueError, match="same length"):
        scaled_dot_product_attention(q, k, v[..., :1, :])


def test_plain_steps_are_this_modules_functions_in_pipeline_order():
    assert STEP_NAMES == (
        "project_qkv", "split_heads", "build_causal_mask", "dot_scores", "choose_scale",
        "scale_scores", "mask_and_softmax", "dropout_weights", "mix_values", "merge_heads",
        "project_out",
    )  # fmt: skip
    for name in STEP_NAMES:
        step = getattr(PLAIN, name)
        assert step is getattr(ops, name) and step.__name__ == name
        assert step.__doc__ and "\n" not in step.__doc__.strip()  # one line: formula, shapes


def test_plain_steps_cannot_be_modified():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLAIN.mix_values = None
    assert isinstance(PLAIN, Steps)


def test_plain_causal_mask_equals_the_masks_module():
    for T in (1, 2, 7):
        assert torch.equal(PLAIN.build_causal_mask(T), causal_mask(T))


def test_plain_choose_scale_is_one_over_root_d_head():
    assert PLAIN.choose_scale(16, 64) == 0.25


def test_attend_runs_the_steps_it_is_given(gen):
    q, k, v = random_qkv(gen, 1, 2, 4, 3)
    allowed = causal_mask(4)
    swapped = dataclasses.replace(PLAIN, mix_values=lambda weights, k, v: weights @ k)
    plain = attend(q, k, v, allowed, 0.5, float("-inf"))
    other = attend(q, k, v, allowed, 0.5, float("-inf"), steps=swapped)
    assert_close(other["weights"], plain["weights"])
    assert_close(other["heads"], plain["weights"] @ k)


def test_dropout_only_in_training(gen):
    weights = torch.softmax(torch.randn(2, 4, 4, generator=gen), dim=-1)
    assert PLAIN.dropout_weights(weights, 0.5, False, None) is None
    assert PLAIN.dropout_weights(weights, 0.0, True, None) is None
    dropped = PLAIN.dropout_weights(weights, 0.5, True, torch.Generator().manual_seed(0))
    kept = dropped != 0
    assert kept.any() and (~kept).any()
    assert_close(dropped[kept], weights[kept] * 2)
