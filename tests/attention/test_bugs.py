"""The classic mistakes: each one replaced step of the plain forward, shown as the source it runs;
each buggy forward against the mistake written out by hand, each silent bug changing the output,
each loud bug raising what PyTorch raises, each catching test catching it, and the live checks."""

import inspect
import math

import pytest
import torch

from attention import causal_mask, random_embeddings, seeded_layer
from attention.bugs import (
    BUG_NAMES,
    BUGS,
    CHECKS,
    DROPOUT_P,
    SILENT_BUGS,
    code_lines,
    differing_stages,
    run_buggy,
    run_checks,
    source,
    source_diff,
    stage_difference,
    student_layer,
)
from attention.ops import PLAIN, STEP_NAMES

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
    assert set(bug.checks) <= set(CHECKS)
    assert all(link.startswith("https://github.com/") for link in bug.seen_in)
    assert (
        bug.test.__name__.startswith("test_") and bug.test.__module__ == "attention.bugs.catching"
    )
    assert bug.mistake.__name__ == name and bug.mistake.__module__ == "attention.bugs.mistakes"


@pytest.mark.parametrize("name", BUG_NAMES)
def test_bugs_each_bug_replaces_exactly_one_plain_step(name):
    bug = BUGS[name]
    assert bug.replaces in STEP_NAMES
    changed = [s for s in STEP_NAMES if getattr(bug.steps, s) is not getattr(PLAIN, s)]
    assert changed == [bug.replaces]
    assert getattr(bug.steps, bug.replaces) is bug.mistake
    assert inspect.signature(bug.mistake) == inspect.signature(bug.plain)


@pytest.mark.parametrize("name", BUG_NAMES)
def test_source_diff_is_the_two_functions_sources(name):
    """The lines shown are the plain step's and the mistake's, as written (docstrings left out,
    the plain step's header for both: the signatures are the same)."""
    bug = BUGS[name]
    lines = source_diff(bug).splitlines()
    header, plain = code_lines(bug.plain)
    _, wrong = code_lines(bug.mistake)
    assert lines[: len(header)] == [" " + line for line in header]
    body = lines[len(header) :]
    assert [line[1:] for line in body if line[0] in " -"] == plain
    assert [line[1:] for line in body if line[0] in " +"] == wrong
    assert "\n".join(plain) in inspect.getsource(bug.plain)
    assert "\n".join(wrong) in inspect.getsource(bug.mistake)


@pytest.mark.parametrize("name", BUG_NAMES)
def test_source_diff_is_short(name):
    """One step, one or two lines written wrong: what a student reads stays small."""
    lines = source_diff(BUGS[name]).splitlines()
    assert 1 <= sum(line.startswith("-") for line in lines) <= 2
    assert 1 <= sum(line.startswith("+") for line in lines) <= 2
    assert len(lines) <= 10


def test_source_diff_of_softmax_over_queries_changes_the_axis():
    lines = source_diff(BUGS["softmax_over_queries"]).splitlines()
    assert lines[:5] == [
        " def mask_and_softmax(",
        "     scaled: Tensor,",
        "     allowed: Tensor,",
        "     mask_value: float,",
        " ) -> tuple[Tensor, Tensor]:",
    ]
    added = [line for line in lines if line.startswith("+")]
    assert added == [
        "+    weights = torch.softmax(masked, dim=-2)  # over the queries: each column sums to 1"
    ]


@pytest.mark.parametrize("name", BUG_NAMES)
def test_shown_code_fits_the_lesson_without_scrolling(name):
    """The diff and the catching test as shown: no line wider than a code block at 1280 px."""
    bug = BUGS[name]
    for line in (*source_diff(bug).splitlines(), *source(bug.test).splitlines()):
        assert len(line) <= 88, line


def test_source_of_a_catching_test_is_its_code():
    text = source(BUGS["mask_inverted"].test)
    assert text.startswith("def test_blocked_weights_are_zero(layer")
    assert text == inspect.getsource(BUGS["mask_inverted"].test).rstrip("\n")


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


@pytest.mark.parametrize("name", BUG_NAMES)
def test_catching_test_passes_on_the_layer(name):
    layer, x = ordinary()
    BUGS[name].test(layer, x)


@pytest.mark.parametrize("name", BUG_NAMES)
def test_catching_test_fails_on_the_students_layer(name):
    layer, x = ordinary()
    with pytest.raises((AssertionError, RuntimeError)):
        BUGS[name].test(student_layer(name, layer), x)


def test_student_layer_shares_the_weights_and_leaves_the_layer_alone():
    layer, _ = ordinary()
    student = student_layer("softmax_over_queries", layer)
    assert student.W_q.weight is layer.W_q.weight and student.W_o is layer.W_o
    assert student.steps == BUGS["softmax_over_queries"].steps and not student.training
    assert layer.steps == PLAIN and layer.training and layer.dropout == 0.0
    assert student_layer("dropout_at_eval", layer).dropout == DROPOUT_P


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


@pytest.mark.parametrize("name", ["mask_inverted", "mask_off_by_one", "mask_blocks_self"])
def test_run_buggy_mask_bugs_apply_the_students_mask(name):
    """The trace's allowed is the mask the buggy code applied; without a causal mask there is
    nothing for the student's causal mask to get wrong."""
    layer, x = ordinary()
    with torch.no_grad():
        trace = run_buggy(name, layer, x, "causal")
        torch.testing.assert_close(trace.allowed, BUGS[name].mistake(6))
        unmasked = run_buggy(name, layer, x, None)
        assert differing_stages(unmasked, layer(x)) == ()


def test_run_buggy_mask_after_softmax_masks_after():
    layer, x = ordinary()
    with torch.no_grad():
        trace = run_buggy("mask_after_softmax", layer, x, "causal")
    assert torch.equal(trace.masked, trace.scaled)
    assert torch.equal(trace.allowed, causal_mask(6))
    assert bool((trace.weights[:, ~causal_mask(6)] == 0).all())


def test_stage_difference_is_buggy_minus_correct_where_both_are_numbers():
    layer, x = ordinary()
    with torch.no_grad():
        correct = layer(x, "causal")
        buggy = run_buggy("no_scaling", layer, x, "causal")
    diff, unusable = stage_difference(buggy, correct, "masked", 1)
    assert diff.dtype == torch.float64
    assert torch.equal(unusable, ~causal_mask(6))  # -inf on both sides
    expected = buggy.masked[1].double() - correct.masked[1].double()
    torch.testing.assert_close(diff[~unusable], expected[~unusable])
    assert bool((diff[unusable] == 0).all())
    diff, unusable = stage_difference(buggy, correct, "output", 0)  # not per head: (T, C)
    assert diff.shape == (6, 8) and not unusable.any()


def test_stage_difference_leaves_blocked_zero_weights_out():
    """Weights the intended mask blocks and the bug leaves at 0 are not worth a colour; those
    the bug moves off 0 are."""
    layer, x = ordinary()
    with torch.no_grad():
        correct = layer(x, "causal")
        buggy = run_buggy("mask_off_by_one", layer, x, "causal")
    diff, unusable = stage_difference(buggy, correct, "weights", 0)
    blocked = ~causal_mask(6)
    assert torch.equal(unusable, blocked & (buggy.weights[0] == 0))
    assert bool((diff[blocked & ~unusable] > 0).all())  # the next key: weight where none belongs
    assert (blocked & ~unusable).sum() == 5
