"""Property-based checks over shapes and masks (hypothesis)."""

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

from attention import scaled_dot_product_attention, seeded_layer


@st.composite
def attention_case(draw):
    B = draw(st.integers(1, 3))
    H = draw(st.integers(1, 8))
    T = draw(st.integers(1, 64))
    d = draw(st.integers(1, 16))
    seed = draw(st.integers(0, 2**31 - 1))
    kind = draw(st.sampled_from(["none", "causal", "random", "broadcast"]))
    return B, H, T, d, seed, kind


def build(B, H, T, d, seed, kind):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, H, T, d, generator=gen) for _ in range(3))
    if kind == "none":
        return q, k, v, None, None
    if kind == "causal":
        return q, k, v, "causal", torch.ones(T, T, dtype=torch.bool).tril()
    shape = (B, H, T, T) if kind == "random" else (B, 1, 1, T)
    mask = torch.rand(shape, generator=gen) > 0.5
    return q, k, v, mask, mask


@settings(max_examples=60, deadline=None)
@given(attention_case())
def test_property_sdpa_equals_pytorch(case):
    q, k, v, mask, reference = build(*case)
    trace = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=reference)
    assert_close(trace.output, expected, atol=1e-5, rtol=0)


@settings(max_examples=60, deadline=None)
@given(attention_case())
def test_property_weights_rows_sum_to_one_or_zero(case):
    q, k, v, mask, _ = build(*case)
    trace = scaled_dot_product_attention(q, k, v, mask)
    allowed = trace.allowed.expand_as(trace.weights)
    assert (trace.weights[~allowed] == 0).all()
    sums = trace.weights.sum(-1)
    any_allowed = allowed.any(-1)
    assert_close(sums[any_allowed], torch.ones_like(sums[any_allowed]))
    assert (sums[~any_allowed] == 0).all()
    assert not torch.isnan(trace.weights).any()


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.sampled_from([1, 2, 4]), st.integers(1, 20), st.integers(0, 99))
def test_property_layer_shapes(B, H, T, seed):
    C = 4 * H
    layer = seeded_layer(seed, C, H)
    trace = layer(torch.randn(B, T, C, generator=torch.Generator().manual_seed(seed)), "causal")
    assert trace.q.shape == trace.heads.shape == (B, H, T, C // H)
    assert trace.weights.shape == (B, H, T, T)
    assert trace.output.shape == trace.concat.shape == trace.x.shape == (B, T, C)
