"""The tests that catch the classic mistakes, as a student would add them to their own suite.

Each takes a layer and an input x (T, C), passes on the correct layer and fails (AssertionError,
or what PyTorch raises) on the layer with the mistake (`student_layer`); the lesson shows its
source. Not collected by pytest here: tests/attention/test_bugs.py runs each on both layers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.layer import MultiHeadSelfAttention, head_columns, split_heads
from attention.masks import causal_mask


def test_weights_rows_sum_to_one(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """Every query's weights are a distribution over the keys."""
    weights = layer(x, "causal").weights
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))


def test_layer_equals_sdpa(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """The heads equal PyTorch's own attention on the same q, k, v."""
    q, k, v = (split_heads(t, layer.n_heads) for t in layer.project_qkv(x[None]))
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)[0]
    torch.testing.assert_close(layer(x, "causal").heads, expected)


def test_head_h_owns_its_columns(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """Head h's queries are columns h*d_head .. (h+1)*d_head - 1 of X W_q."""
    trace = layer(x, "causal")
    q_all = x @ layer.W_q.weight.T
    for h in range(layer.n_heads):
        cols = head_columns(layer.d_model, layer.n_heads, h)
        torch.testing.assert_close(trace.q[h], q_all[:, list(cols)])


def test_concat_row_t_is_token_t(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """Row t of the concatenation holds every head's output for token t."""
    trace = layer(x, "causal")
    for h in range(layer.n_heads):
        cols = head_columns(layer.d_model, layer.n_heads, h)
        torch.testing.assert_close(trace.concat[:, list(cols)], trace.heads[h])


def test_forward_runs(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """The forward runs at all (with more than one head and token)."""
    layer(x, "causal")


def test_blocked_weights_are_zero(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """No query puts weight on a key the causal mask blocks."""
    trace = layer(x, "causal")
    assert (trace.weights[..., ~causal_mask(len(x))] == 0).all()


def test_no_look_ahead(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """Changing the last token changes no earlier output."""
    changed = x.clone()
    changed[-1] += 1.0
    before, after = layer(x, "causal").output, layer(changed, "causal").output
    torch.testing.assert_close(before[:-1], after[:-1])


def test_forward_in_float16(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """The forward runs in float16, as under mixed precision."""
    layer.half()(x.half(), "causal")


def test_every_weight_gets_a_gradient(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """W_q, W_k, W_v and W_o all take part: each gets a gradient."""
    layer(x, "causal").output.sum().backward()
    for W in (layer.W_q, layer.W_k, layer.W_v, layer.W_o):
        assert W.weight.grad is not None and W.weight.grad.abs().sum() > 0


def test_eval_is_deterministic(layer: MultiHeadSelfAttention, x: Tensor) -> None:
    """In eval mode the same input gives the same output twice."""
    layer.eval()
    torch.testing.assert_close(layer(x, "causal").output, layer(x, "causal").output)
