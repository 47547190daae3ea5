"""MultiHeadSelfAttention against nn.MultiheadAttention, its shapes, and its bad input."""

import dataclasses

import pytest
import torch
from torch import nn
from torch.testing import assert_close

from attention import (
    STAGE_NAMES,
    STAGES,
    MultiHeadSelfAttention,
    as_blocked,
    causal_mask,
    head_columns,
    seeded_layer,
)
from attention.ops import PLAIN


def reference_mha(layer: MultiHeadSelfAttention, bias: bool) -> nn.MultiheadAttention:
    """nn.MultiheadAttention holding our layer's weights."""
    C, H = layer.d_model, layer.n_heads
    mha = nn.MultiheadAttention(C, H, bias=bias, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.W_q.weight, layer.W_k.weight, layer.W_v.weight]))
        mha.out_proj.weight.copy_(layer.W_o.weight)
        if bias:
            mha.in_proj_bias.copy_(torch.cat([layer.W_q.bias, layer.W_k.bias, layer.W_v.bias]))
            mha.out_proj.bias.copy_(layer.W_o.bias)
    return mha.eval()


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("B,T,C,H", [(1, 1, 4, 1), (2, 7, 16, 4), (3, 64, 64, 8), (1, 5, 12, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_layer_equals_nn_multihead_attention(gen, bias, B, T, C, H, causal):
    layer = seeded_layer(0, C, H, bias=bias).eval()
    if bias:  # nn.Linear's default bias init is small; make it matter
        with torch.no_grad():
            for lin in (layer.W_q, layer.W_k, layer.W_v, layer.W_o):
                lin.bias.normal_(generator=gen)
    x = torch.randn(B, T, C, generator=gen)
    trace = layer(x, "causal" if causal else None)
    mha = reference_mha(layer, bias)
    blocked = as_blocked(causal_mask(T)) if causal else None
    out, weights = mha(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)
    assert_close(trace.output, out, atol=1e-5, rtol=0)
    assert_close(trace.weights, weights, atol=1e-5, rtol=0)


def test_layer_trace_shapes_batched(gen):
    layer = MultiHeadSelfAttention(12, 3)
    trace = layer(torch.randn(2, 5, 12, generator=gen))
    shapes = {name: tuple(trace.stage(name).shape) for name in STAGE_NAMES}
    assert shapes == {
        "x": (2, 5, 12), "q": (2, 3, 5, 4), "k": (2, 3, 5, 4), "v": (2, 3, 5, 4),
        "scores": (2, 3, 5, 5), "scaled": (2, 3, 5, 5), "masked": (2, 3, 5, 5),
        "weights": (2, 3, 5, 5), "heads": (2, 3, 5, 4), "concat": (2, 5, 12),
        "output": (2, 5, 12),
    }  # fmt: skip


def test_layer_trace_shapes_unbatched_match_stage_dims(gen):
    layer = MultiHeadSelfAttention(12, 3)
    trace = layer(torch.randn(5, 12, generator=gen))
    sizes = {"T": 5, "C": 12, "H": 3, "H_kv": 3, "d_k": 4}
    for stage in STAGES:
        assert tuple(trace.stage(stage.name).shape) == tuple(sizes[d] for d in stage.dims)


def test_layer_unbatched_equals_batched(gen):
    layer = MultiHeadSelfAttention(8, 2)
    x = torch.randn(4, 8, generator=gen)
    assert_close(layer(x, "causal").output, layer(x[None], "causal").output[0])


def test_trace_fields_are_in_pipeline_order():
    names = [f.name for f in dataclasses.fields(layer_trace_type())]
    assert names[:11] == [
        "x", "q", "k", "v", "scores", "scaled", "masked", "weights", "heads", "concat", "output",
    ]  # fmt: skip
    assert list(STAGE_NAMES) == names[:11]


def layer_trace_type():
    from attention import AttentionTrace

    return AttentionTrace


def test_trace_cannot_be_modified(gen):
    trace = MultiHeadSelfAttention(4, 2)(torch.randn(3, 4, generator=gen))
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.weights = torch.zeros(2, 3, 3)


def test_trace_unknown_stage_is_a_value_error(gen):
    trace = MultiHeadSelfAttention(4, 2)(torch.randn(3, 4, generator=gen))
    with pytest.raises(ValueError, match="unknown stage"):
        trace.stage("pattern")


def test_layer_without_out_proj_returns_concat(gen):
    layer = MultiHeadSelfAttention(4, 2, out_proj=False)
    assert layer.W_o is None
    trace = layer(torch.randn(3, 4, generator=gen))
    assert torch.equal(trace.output, trace.concat)


def test_layer_projections_created_in_order():
    torch.manual_seed(7)
    expected = [torch.empty(4, 4) for _ in range(4)]
    torch.manual_seed(7)
    for w in expected:
        nn.init.kaiming_uniform_(w, a=5**0.5)
    layer = seeded_layer(7, 4, 2)
    got = [layer.W_q.weight, layer.W_k.weight, layer.W_v.weight, layer.W_o.weight]
    for w, e in zip(got, expected, strict=True):
        assert_close(w.detach(), e)


def test_seeded_layer_leaves_global_random_state_alone():
    torch.manual_seed(3)
    before = torch.rand(1)
    torch.manual_seed(3)
    seeded_layer(99, 8, 2)
    assert torch.equal(torch.rand(1), before)


def test_layer_heads_own_consecutive_columns(gen):
    layer = MultiHeadSelfAttention(6, 3)
    x = torch.randn(4, 6, generator=gen)
    trace = layer(x)
    q_all = x @ layer.W_q.weight.T
    for h in range(3):
        assert_close(trace.q[h], q_all[:, list(head_columns(6, 3, h))])
        assert_close(trace.concat[:, list(head_columns(6, 3, h))], trace.heads[h])


def test_layer_fused_projection_equals_separate(gen):
    layer = seeded_layer(1, 8, 2, bias=True)
    x = torch.randn(5, 8, generator=gen)
    for fused, separate in zip(layer.project_qkv_fused(x), layer.project_qkv(x), strict=True):
        assert_close(fused, separate)


def test_layer_float64_stays_float64(gen):
    layer = MultiHeadSelfAttention(4, 2)
    trace = layer(torch.randn(3, 4, generator=gen, dtype=torch.float64))
    assert trace.output.dtype == torch.float64
    assert trace.weights.dtype == torch.float64


def test_layer_float32_by_default(gen):
    trace = MultiHeadSelfAttention(4, 2)(torch.randn(3, 4, generator=gen))
    assert trace.output.dtype == torch.float32


def test_layer_dropout_only_in_training_and_reproducible(gen):
    layer = seeded_layer(0, 8, 2, dropout=0.5)
    x = torch.randn(6, 8, generator=gen)
    layer.eval()
    assert layer(x).dropped is None
    layer.train()
    first = layer(x, generator=torch.Generator().manual_seed(5))
    again = layer(x, generator=torch.Generator().manual_seed(5))
    assert torch.equal(first.dropped, again.dropped)
    zeroed = first.dropped == 0
    assert zeroed.any() and (~zeroed).any()
    kept = ~zeroed
    assert_close(first.dropped[kept], first.weights[kept] * 2)
    assert_close(first.heads, first.dropped @ first.v)


@pytest.mark.parametrize(
    "args, message",
    [((0, 1), "d_model"), ((4, 0), "n_heads"), ((6, 4), "divisible"), ((4.0, 2), "d_model")],
)
def test_layer_rejects_bad_sizes(args, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadSelfAttention(*args)


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_layer_rejects_bad_dropout(p):
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadSelfAttention(4, 2, dropout=p)


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.zeros(4), r"shape \(T, C\)"),
        (torch.zeros(1, 1, 3, 4), r"shape \(T, C\)"),
        (torch.zeros(3, 5), "last dimension"),
        (torch.zeros(0, 4), "empty sequence"),
        (torch.zeros(3, 4, dtype=torch.int64), "floating-point"),
        (torch.tensor([[0.0, 1.0, float("nan"), 0.0]]), "NaN"),
        (torch.tensor([[0.0, 1.0, float("inf"), 0.0]]), "infinite"),
        ([[0.0] * 4], "must be a tensor"),
    ],
)
def test_layer_rejects_bad_input(x, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadSelfAttention(4, 2)(x)


@pytest.mark.parametrize(
    "mask, message",
    [
        ("future", "not the word"),
        (torch.ones(3, 3), "bool tensor"),
        (torch.ones(4, 4, dtype=torch.bool), "does not broadcast"),
        ([[True]], "bool tensor"),
    ],
)
def test_layer_rejects_bad_mask(gen, mask, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadSelfAttention(4, 2)(torch.randn(3, 4, generator=gen), mask)


def test_layer_runs_plain_steps_by_default():
    assert MultiHeadSelfAttention(4, 2).steps is PLAIN


def test_layer_runs_the_steps_it_holds(gen):
    """One step replaced changes that step's stage and what follows, nothing before it."""
    calls = []

    def merge_heads_counted(heads):
        calls.append(heads.shape)
        return PLAIN.merge_heads(heads)

    swapped = dataclasses.replace(PLAIN, mix_values=lambda weights, k, v: weights @ k)
    x = torch.randn(5, 8, generator=gen)
    plain = seeded_layer(0, 8, 2)(x, "causal")
    trace = seeded_layer(0, 8, 2, steps=swapped)(x, "causal")
    assert_close(trace.weights, plain.weights)
    assert_close(trace.heads, trace.weights @ trace.k)
    assert not torch.allclose(trace.output, plain.output)
    counted = dataclasses.replace(PLAIN, merge_heads=merge_heads_counted)
    assert_close(seeded_layer(0, 8, 2, steps=counted)(x, "causal").output, plain.output)
    assert calls == [(1, 2, 5, 4)]


def test_layer_rejects_steps_that_are_not_a_steps_record():
    with pytest.raises(ValueError, match="Steps record"):
        MultiHeadSelfAttention(4, 2, steps={"mix_values": None})


def test_layer_causal_mask_comes_from_its_steps(gen):
    every_key = dataclasses.replace(PLAIN, build_causal_mask=lambda T: torch.ones(T, T).bool())
    x = torch.randn(4, 8, generator=gen)
    trace = seeded_layer(0, 8, 2, steps=every_key)(x, "causal")
    assert torch.equal(trace.allowed, torch.ones(4, 4, dtype=torch.bool))
    assert_close(trace.output, seeded_layer(0, 8, 2)(x).output)


def test_layer_scale_comes_from_its_steps_unless_given(gen):
    halved = dataclasses.replace(PLAIN, choose_scale=lambda d_head, d_model: 0.5)
    layer = seeded_layer(0, 8, 2, steps=halved)
    x = torch.randn(3, 8, generator=gen)
    assert layer(x).scale == 0.5 and layer(x, scale=0.25).scale == 0.25
    assert MultiHeadSelfAttention(8, 2)(x).scale == pytest.approx(0.5)  # 1/sqrt(d_head = 4)


def test_package_exports_every_public_name():
    import attention

    assert len(set(attention.__all__)) == len(attention.__all__)
    for name in attention.__all__:
        assert getattr(attention, name) is not None


def test_trace_maps_fields_to_transformerlens_hook_names():
    """The mapping table in attention/trace.py names TransformerLens's hooks where they are:
    hook_resid_pre and hook_attn_out on the block, the rest on blocks.L.attn (issue 17 item 4;
    checked against TL's transformer_block.py and abstract_attention.py)."""
    import attention.trace

    rows = {}
    for line in attention.trace.__doc__.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] and cells[0] != "field":
            rows[cells[0]] = cells[1]
    assert rows == {
        "x": "blocks.L.hook_resid_pre",
        "q": "blocks.L.attn.hook_q",
        "k, v": "blocks.L.attn.hook_k, hook_v",
        "scores": "(none)",
        "scaled": "(none)",
        "masked": "blocks.L.attn.hook_attn_scores",
        "weights": "blocks.L.attn.hook_pattern",
        "heads": "blocks.L.attn.hook_z",
        "concat": "(none)",
        "output": "blocks.L.hook_attn_out",
    }
