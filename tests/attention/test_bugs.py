"""The classic mistakes: each buggy forward against the mistake written out by hand, each silent
bug changing the output, each loud bug raising what PyTorch raises, and the live checks."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention import causal_mask, head_columns, random_embeddings, seeded_layer, split_heads
from attention.bugs import (
    BUG_NAMES,
    BUGS,
    CHECKS,
    DROPOUT_P,
    SILENT_BUGS,
    differing_stages,
    run_buggy,
    run_checks,
)

NAMED = (
    "softmax_over_queries", "scale_by_d_model", "split_without_transpose", "mask_after_softmax",
    "no_output_projection", "mask_inverted", "mask_off_by_one", "fill_1e9_fp16",
)  # fmt: skip
LOUD = tuple(name for name in BUG_NAMES if BUGS[name].loud)


def ordinary(T=6, d_model=8, heads=2, seed=0):
    """A causal multi-head layer and ordinary input: the defaults of the dashboard."""
    return seeded_layer(seed, d_model, heads), random_embeddings(T, d_model, seed).x


def by_hand(layer, x, bug=None, generator=None):
    """The forward written out head by head with plain tensors, the mistake `bug` made in its
    own line. A row with no allowed key gets zero weights (the layer's convention, as SDPA)."""
    T, C = x.shape
    H = layer.n_heads
    d = C // H
    Q = x @ layer.W_q.weight.T  # (T, C)
    K = x @ layer.W_k.weight.T
    V = x @ layer.W_v.weight.T
    if bug == "mask_off_by_one":
        allowed = torch.tril(torch.ones(T, T), diagonal=1).bool()
    elif bug == "mask_blocks_self":
        allowed = ~torch.triu(torch.ones(T, T), diagonal=0).bool()
    else:
        allowed = torch.tril(torch.ones(T, T)).bool()
    if bug == "dropout_at_eval":
        keep = torch.rand((1, H, T, T), generator=generator) >= DROPOUT_P
    outputs = []
    for h in range(H):
        if bug == "split_without_transpose":  # head h is the h-th chunk of Q's memory
            q, k, v = (M.reshape(-1)[h * T * d : (h + 1) * T * d].view(T, d) for M in (Q, K, V))
        else:
            q, k, v = (
                Q[:, h * d : (h + 1) * d],
                K[:, h * d : (h + 1) * d],
                V[:, h * d : (h + 1) * d],
            )
        scores = q @ k.T
        if bug == "no_scaling":
            scaled = scores
        elif bug == "scale_by_d_model":
            scaled = scores / math.sqrt(C)
        else:
            scaled = scores / math.sqrt(d)
        if bug == "mask_after_softmax":
            weights = torch.softmax(scaled, dim=-1).masked_fill(~allowed, 0.0)
        elif bug == "mask_inverted":
            weights = torch.softmax(scaled.masked_fill(allowed, float("-inf")), dim=-1)
        elif bug == "softmax_over_queries":
            weights = torch.softmax(scaled.masked_fill(~allowed, float("-inf")), dim=-2)
        else:
            weights = torch.softmax(scaled.masked_fill(~allowed, float("-inf")), dim=-1)
        weights = torch.nan_to_num(weights, nan=0.0)  # rows with no key: zeros
        if bug == "dropout_at_eval":
            weights = weights * keep[0, h] / (1 - DROPOUT_P)
        outputs.append(weights @ (k if bug == "mix_with_keys" else v))  # (T, d)
    if bug == "merge_without_transpose":
        concat = torch.stack(outputs).reshape(T, C)  # (H, T, d) read row by row
    else:
        concat = torch.cat(outputs, dim=-1)  # (T, C)
    return concat if bug == "no_output_projection" else concat @ layer.W_o.weight.T


def test_bugs_include_the_named_eight_and_more():
    assert set(NAMED) <= set(BUGS)
    assert len(BUGS) >= 10
    assert {"fill_1e9_fp16", "view_without_contiguous"} <= set(LOUD)


@pytest.mark.parametrize("name", BUG_NAMES)
def test_bugs_each_bug_is_described(name):
    bug = BUGS[name]
    assert bug.title and bug.symptom and bug.caught_by
    assert bug.wrong != bug.right
    assert set(bug.checks) <= set(CHECKS)
    assert all(link.startswith("https://github.com/") for link in bug.seen_in)
    assert bug.test.startswith("def test_")


def test_bugs_most_have_public_reports():
    assert sum(bool(bug.seen_in) for bug in BUGS.values()) >= 0.75 * len(BUGS)


@pytest.mark.parametrize("name", SILENT_BUGS)
def test_run_buggy_equals_the_mistake_by_hand(name):
    layer, x = ordinary()
    with torch.no_grad():
        trace = run_buggy(name, layer, x, "causal", generator=torch.Generator().manual_seed(3))
        expected = by_hand(layer, x, name, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(trace.output, expected)


def test_by_hand_without_a_bug_is_the_layer():
    layer, x = ordinary()
    with torch.no_grad():
        torch.testing.assert_close(by_hand(layer, x), layer(x, "causal").output)


@pytest.mark.parametrize("name", SILENT_BUGS)
def test_run_buggy_silent_bug_changes_the_output(name):
    layer, x = ordinary()
    with torch.no_grad():
        buggy = run_buggy(name, layer, x, "causal", generator=torch.Generator().manual_seed(0))
        correct = layer(x, "causal")
    assert not torch.allclose(buggy.output, correct.output, atol=1e-4)
    assert "output" in differing_stages(buggy, correct)


@pytest.mark.parametrize(
    "name, pytorch_line, message",
    [
        (
            "fill_1e9_fp16",
            lambda: torch.zeros(2, 2, dtype=torch.half).masked_fill(torch.eye(2).bool(), -1e9),
            "without overflow",
        ),
        (
            "view_without_contiguous",
            lambda: torch.zeros(1, 2, 3, 4).transpose(1, 2).view(1, 3, 8),
            "view size is not compatible",
        ),
    ],
)
def test_run_buggy_loud_bug_raises_what_pytorch_raises(name, pytorch_line, message):
    layer, x = ordinary()
    with pytest.raises(RuntimeError, match=message) as raised:
        run_buggy(name, layer, x, "causal")
    with pytest.raises(RuntimeError) as by_pytorch:
        pytorch_line()
    assert str(raised.value) == str(by_pytorch.value)


def test_run_buggy_every_loud_bug_is_tested():
    assert set(LOUD) == {"fill_1e9_fp16", "view_without_contiguous"}


@pytest.mark.parametrize("name", BUG_NAMES)
def test_run_checks_fail_exactly_as_the_bug_says(name):
    layer, x = ordinary()
    with torch.no_grad():
        results = run_checks(name, layer, x, "causal")
    assert [c.key for c in results] == list(CHECKS)
    assert {c.key for c in results if c.passed is False} == set(BUGS[name].checks)


def test_run_checks_all_pass_for_the_correct_layer():
    layer, x = ordinary()
    with torch.no_grad():
        results = run_checks(None, layer, x, "causal")
    assert [c.key for c in results] == list(CHECKS)
    assert all(c.passed for c in results), results


def test_run_checks_look_ahead_needs_the_causal_mask():
    layer, x = ordinary()
    with torch.no_grad():
        causal = {c.key: c.passed for c in run_checks(None, layer, x, None)}
    assert causal["causal"] is None and causal["pytorch"] is True


class BuggyLayer(nn.Module):
    """A student's layer: the same weights, the buggy forward (and no W_o if they forgot it)."""

    def __init__(self, name, layer):
        super().__init__()
        self.name = name
        object.__setattr__(self, "inner", layer)  # not a submodule: only the weights below count
        self.n_heads, self.d_model = layer.n_heads, layer.d_model
        self.W_q, self.W_k, self.W_v = layer.W_q, layer.W_k, layer.W_v
        self.W_o = None if name == "no_output_projection" else layer.W_o

    def project_qkv(self, x):
        return self.inner.project_qkv(x)

    def forward(self, x, mask=None):
        return run_buggy(self.name, self.inner, x, mask)


def run_snippet(source, layer, x):
    namespace = {
        "torch": torch, "F": F, "split_heads": split_heads, "head_columns": head_columns,
        "causal_mask": causal_mask,
    }  # fmt: skip
    exec(source, namespace)
    test = next(value for key, value in namespace.items() if key.startswith("test_"))
    arguments = {"layer": layer, "x": x}
    test(**{k: arguments[k] for k in test.__code__.co_varnames[: test.__code__.co_argcount]})


@pytest.mark.parametrize("name", BUG_NAMES)
def test_bug_test_passes_on_the_layer_and_catches_the_bug(name):
    layer, x = ordinary()
    run_snippet(BUGS[name].test, layer, x)
    buggy_layer, x = ordinary()
    with pytest.raises((AssertionError, RuntimeError)):
        run_snippet(BUGS[name].test, BuggyLayer(name, buggy_layer), x)


def test_run_buggy_is_differentiable():
    layer, x = ordinary()
    run_buggy("softmax_over_queries", layer, x, "causal").output.square().sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.parameters())


def test_run_buggy_mix_with_keys_leaves_w_v_without_gradient():
    layer, x = ordinary()
    run_buggy("mix_with_keys", layer, x, "causal").output.square().sum().backward()
    assert layer.W_v.weight.grad is None and layer.W_k.weight.grad.abs().sum() > 0


def test_run_buggy_batched_equals_unbatched():
    layer, x = ordinary()
    with torch.no_grad():
        one = run_buggy("split_without_transpose", layer, x, "causal")
        batch = run_buggy("split_without_transpose", layer, torch.stack([x, x]), "causal")
    torch.testing.assert_close(batch.output[1], one.output)
    assert batch.weights.shape == (2, 2, 6, 6)


def test_run_buggy_one_head_scale_bug_changes_nothing():
    layer, x = ordinary(heads=1)
    with torch.no_grad():
        buggy = run_buggy("scale_by_d_model", layer, x, "causal")
        torch.testing.assert_close(buggy.output, layer(x, "causal").output)


def test_run_buggy_mask_inverted_attends_only_to_the_future():
    layer, x = ordinary()
    with torch.no_grad():
        weights = run_buggy("mask_inverted", layer, x, "causal").weights  # (H, T, T)
    assert bool((weights[:, causal_mask(6)] == 0).all())
    assert bool((weights[:, -1] == 0).all())  # the last query has no key left


def test_run_buggy_unknown_name_raises_value_error():
    layer, x = ordinary()
    with pytest.raises(ValueError, match="unknown bug 'typo'"):
        run_buggy("typo", layer, x, "causal")
