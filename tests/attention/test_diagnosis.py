"""Wrong answers with a cause (issue 27): each diagnostic choice is the number its mistake gives,
computed here again by hand from the layer's own tensors, at several seeds; coinciding mistakes
are one choice; a mistake that gives the right number is no choice; grading names the mistake."""

import math

import pytest
import torch

from attention import random_embeddings, seeded_layer
from attention.diagnosis import (
    DIAGNOSTIC_BUGS,
    diagnosed,
    mistaken_stages,
    mistakes_at,
    question_input,
    weight_question,
)
from attention.drills import TOLERANCE, grade
from attention.masks import build_mask


def layer_and_trace(seed: int, T: int = 6, C: int = 8, H: int = 2, causal: bool = True):
    layer = seeded_layer(seed, C, H).eval()
    x = random_embeddings(T, C, seed).x
    mask = build_mask(T, causal=causal)
    with torch.no_grad():
        return layer, layer(x, mask)


def by_hand(layer, trace, bug: str, h: int, i: int, j: int) -> float | None:
    """The weight a_ij of head h as each mistake computes it, from the layer's own Q, K."""
    q, k = trace.q[h].double(), trace.k[trace.kv_head(h)].double()  # (T, d_k)
    d_k, C = q.shape[-1], q.shape[-1] * trace.weights.shape[0]
    allowed = trace.allowed.bool()
    raw = q @ k.T  # (T, T)

    def masked(scale: float) -> torch.Tensor:
        return (raw * scale).masked_fill(~allowed, -math.inf)

    if bug == "softmax_over_queries":
        return float(masked(d_k**-0.5).softmax(-2)[i, j])
    if bug == "scale_by_d_model":
        return float(masked(C**-0.5).softmax(-1)[i, j])
    if bug == "no_scaling":
        return float(masked(1.0).softmax(-1)[i, j])
    if bug == "mask_after_softmax":
        return float((raw * d_k**-0.5).softmax(-1)[i, j] * allowed[i, j])
    return None  # the others scramble heads or masks: checked through the catalogue's run


@pytest.mark.parametrize("seed", [0, 1, 7, 42])
def test_diagnosis_each_choice_is_its_mistake_computed_by_hand(seed):
    layer, page = layer_and_trace(seed)
    drill = weight_question(layer, page.allowed, seed)
    assert drill is not None and not drill.mistakes  # one forward: the mistakes run on demand
    drill = diagnosed(drill)
    assert drill.mistakes and len(drill.working) == 1 + len(drill.mistakes)
    with torch.no_grad():  # the question's own input through the page's layer and mask
        trace = layer(question_input(6, 8, seed), page.allowed)
    assert not torch.equal(trace.x, page.x)  # not the page's tokens: not the page's numbers
    h, i, j = next(
        (h, i, j)
        for h in range(2)
        for i in range(6)
        for j in range(6)
        if abs(float(trace.weights[h, i, j]) - float(drill.answer)) < 1e-12
    )
    checked = 0
    for mistake in drill.mistakes:
        assert abs(mistake.value - float(drill.answer)) > 2 * TOLERANCE  # told apart
        for n, bug in enumerate(mistake.bugs):  # each its own number; the choice near all
            expected = by_hand(layer, trace, bug, h, i, j)
            if expected is not None:
                assert mistake.values[n] == pytest.approx(expected, abs=1e-5), bug
                assert mistake.value == pytest.approx(expected, abs=TOLERANCE + 1e-9), bug
                checked += 1
    assert checked >= 2  # the softmax's axis and the scale, at least, are checked by hand


def test_diagnosis_merges_mistakes_that_give_one_number_and_drops_the_right_one():
    """With one head, √d_model = √d_head: scaling by d_model is the right number, no choice."""
    layer, trace = layer_and_trace(3, H=1)
    mistaken = mistaken_stages(layer, trace.x, trace.allowed, "weights")
    found = mistakes_at(mistaken, (0, 3, 1), float(trace.weights[0, 3, 1]))
    names = [bug for m in found for bug in m.bugs]
    assert "scale_by_d_model" not in names
    assert len(names) == len(set(names))
    values = [m.value for m in found]
    assert all(abs(a - b) > TOLERANCE for n, a in enumerate(values) for b in values[n + 1 :])
    assert set(names) <= set(DIAGNOSTIC_BUGS) and "dropout_at_eval" not in DIAGNOSTIC_BUGS


def test_diagnosis_offers_nothing_where_no_query_has_a_choice():
    """T = 1: one key, weight 1: no question."""
    layer, trace = layer_and_trace(0, T=1)
    assert weight_question(layer, trace.allowed, 0) is None


def test_grading_names_the_mistake_a_typed_number_comes_from():
    layer, trace = layer_and_trace(1)
    drill = diagnosed(weight_question(layer, trace.allowed, 1))
    mistake = drill.mistakes[0]
    verdict = grade(drill, f"{mistake.value:.4f}")
    assert verdict.status == "wrong" and verdict.mistake == mistake
    assert mistake.titles[0].lower() in verdict.message.lower()
    assert grade(drill, drill.answer_text).status == "right"
    far = next(v / 100 for v in range(100) if all(abs(v / 100 - m.value) > 0.01 for m in
               (*drill.mistakes,)) and abs(v / 100 - float(drill.answer)) > 0.01)  # fmt: skip
    assert grade(drill, str(far)).mistake is None  # a wrong number no mistake gives: no name


# The Check-yourself questions that run one step of the forward on their own numbers: a fresh
# query's scaled score (choose_scale), its output entry (mix_values), a weight under a mask
# (mask_and_softmax). Each choice is recomputed here from the question's given numbers and the
# page's tensors, not through attention.diagnosis.

SETTINGS = [  # (seed, T, C, H, causal, padding)
    (0, 6, 8, 2, True, 0), (3, 5, 12, 3, True, 1), (11, 7, 8, 1, False, 2),
    (42, 4, 16, 4, False, 0),
]  # fmt: skip


def given_row(drill, prefix: str) -> tuple[str, list[float | None]]:
    name, values = next((n, v) for n, v in drill.given.rows if n.startswith(prefix))
    return name, list(values)


def choices_of(drill) -> dict[str, float]:
    """Each diagnostic choice by bug name: a merged choice's number for each of its bugs."""
    return {bug: m.value for m in diagnosed(drill).mistakes for bug in m.bugs}


@pytest.mark.parametrize(("seed", "T", "C", "H", "causal", "padding"), SETTINGS)
def test_diagnosis_lesson_1_score_and_output_choices_by_hand(seed, T, C, H, causal, padding):
    from attention.check_yourself.step_by_step import step_by_step_questions

    _, trace = layer_and_trace(seed, T, C, H, causal)
    labels = tuple(f"t{t}" for t in range(T))
    score, _, output = step_by_step_questions(trace, labels, seed)
    _, q = given_row(score, "q*")
    _, k_j = given_row(score, "k_")
    dot = sum(a * b for a, b in zip(q, k_j, strict=True))
    d_k = C // H
    expected = {"no_scaling": dot, "scale_by_d_model": dot / math.sqrt(C)}
    found = choices_of(score)
    for bug, value in expected.items():
        if abs(value - dot / math.sqrt(d_k)) > 2 * TOLERANCE:  # else it is the right number
            assert found[bug] == pytest.approx(value, abs=1e-5), bug
        else:
            assert bug not in found
    assert set(found) <= set(expected)

    # the output entry gives a* and v[:, c], no key: the keys mixed in are not a mistake a
    # student could make from it, so it diagnoses nothing
    assert output.diagnose is None


@pytest.mark.parametrize(("seed", "T", "C", "H", "causal", "padding"), SETTINGS)
def test_diagnosis_masked_weight_choices_by_hand(seed, T, C, H, causal, padding):
    """Lesson 5's weight under the other mask (it gives row i and column j of the scaled
    scores before any mask): softmax down the columns and the mask after the softmax, each
    recomputed from head 0's scaled scores and the question's own mask. Lesson 3's gives only
    the row, blocked keys empty: neither mistake can be made from it, so it diagnoses nothing."""
    import re

    from attention.check_yourself.masking import masking_questions
    from attention.check_yourself.worked_example import worked_example_questions

    _, trace = layer_and_trace(seed, T, C, H, causal)
    labels = tuple(f"t{t}" for t in range(T))
    scaled = trace.scaled[0].double()  # (T, T)
    _, lesson_3 = masking_questions(trace, labels, causal, padding, seed)
    assert lesson_3.diagnose is None
    lesson_5, _ = worked_example_questions(trace, labels, causal)
    mask_5 = build_mask(T, causal=not causal)
    for drill, mask in ((lesson_5, mask_5),):
        i = int(re.search(r"query (\d+)", drill.prompt).group(1))
        j = int(re.search(r"key (\d+)", drill.prompt).group(1))
        mask = mask.expand(T, T).bool()
        right = float(scaled[i].masked_fill(~mask[i], -math.inf).softmax(-1)[j])
        assert float(drill.answer) == pytest.approx(right, abs=1e-6)
        # the question gives every number its choices come from (issue 41, 14): row i and
        # column j before any mask, and which keys the mask blocks for query i
        given = dict(drill.given.rows)
        assert given[f"s′ row {i}"] == pytest.approx(scaled[i].tolist(), abs=1e-6)
        assert given[f"s′ column {j}"] == pytest.approx(scaled[:, j].tolist(), abs=1e-6)
        blocked = [k for k in range(T) if not bool(mask[i, k])]
        if blocked:
            assert f"may not attend to key{'s' if len(blocked) > 1 else ''} " in drill.prompt
        expected = {
            "softmax_over_queries": float(scaled.masked_fill(~mask, -math.inf).softmax(0)[i, j]),
            "mask_after_softmax": float(scaled[i].softmax(-1)[j]) * bool(mask[i, j]),
        }
        found = choices_of(drill)
        for bug, value in expected.items():
            if math.isfinite(value) and abs(value - right) > 2 * TOLERANCE:
                assert found[bug] == pytest.approx(value, abs=TOLERANCE + 1e-9), bug
            else:
                assert bug not in found
        assert set(found) <= set(expected)


@pytest.mark.parametrize("seed", [0, 5, 9, 23])
def test_diagnosis_lesson_8_drills_choices_by_hand_and_named_when_typed(seed):
    """Lesson 8's score drill on the page's own tensors: each mistake's number recomputed here,
    and typing it is answered with the mistake's name. The weight drill (a row, blocked keys
    empty) and the output drill (no key given) give no number a listed mistake needs."""
    import re

    from attention.drill_set import make_drills

    _, trace = layer_and_trace(seed, 6, 8, 2, True)
    labels = [f"t{t}" for t in range(6)]
    _, score, weight, output, *_ = make_drills(trace, labels, causal=True, seed=seed)
    h, i, j = (int(n) for n in re.findall(r"(?:Head|query|key) (\d+)", score.prompt))
    q, k = trace.q[h].double(), trace.k[trace.kv_head(h)].double()  # (T, d_k)
    dot = float(q[i] @ k[j])
    expected = {"no_scaling": dot, "scale_by_d_model": dot / math.sqrt(8)}
    right = float(score.answer)
    assert choices_of(score) == {
        bug: pytest.approx(value, abs=1e-5)
        for bug, value in expected.items()
        if abs(value - right) > 2 * TOLERANCE
    }
    assert weight.diagnose is None and output.diagnose is None
    for mistake in diagnosed(score).mistakes:
        verdict = grade(diagnosed(score), f"{mistake.value:.4f}")
        assert verdict.status == "wrong" and verdict.mistake == mistake


@pytest.mark.parametrize("seed", range(12))
def test_weight_question_offers_only_mistakes_its_given_scores_can_make(seed):
    """The question hands the student S = QKᵀ: splitting or merging heads, W_o and mixing the
    values happen before or after what it asks, so no choice may name them (issue 41, 12);
    it states d_model, which the √d_model mistake needs (14)."""
    from attention.bugs import BUGS
    from attention.diagnosis import AFTER_SCORES

    layer, page = layer_and_trace(seed)
    drill = diagnosed(weight_question(layer, page.allowed, seed))
    steps = {BUGS[bug].replaces for m in drill.mistakes for bug in m.bugs}
    assert steps <= set(AFTER_SCORES)
    assert f"d_model = {layer.d_model}" in drill.prompt


def test_a_merged_choice_names_each_mistake_with_its_own_number():
    """Two mistakes within the tolerance of each other: one choice at their mean, and the working
    names each with the number it gives (issue 41, 13)."""
    from attention.diagnosis import merged

    found = merged({"mask_after_softmax": 0.0680, "softmax_over_queries": 0.0652}, right=0.5)
    assert len(found) == 1
    choice = found[0]
    assert choice.value == pytest.approx(0.0666)
    assert choice.values == (0.0680, 0.0652)
    said = choice.said()
    assert "0.0666 is what" in said and "(0.0680)" in said and "(0.0652)" in said
    single = merged({"no_scaling": 0.3}, right=0.5)[0]
    assert single.said() == "0.3000 is what no scaling at all gives."
