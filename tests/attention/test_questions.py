"""Each lesson's check-yourself questions (beside its maths, made with attention.questions'
toolkit) against references: the answer is what PyTorch computes, the drills' grader takes it
and refuses a near miss, and the hand working lands within the grader's tolerance."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention import build_mask, random_embeddings, seeded_layer
from attention import questions as Q
from attention.bugs.questions import bug_hunt_questions
from attention.check_yourself.masking import masking_questions
from attention.check_yourself.multi_head import multi_head_questions
from attention.check_yourself.step_by_step import step_by_step_questions
from attention.check_yourself.worked_example import worked_example_questions
from attention.drill_set import drills_questions
from attention.drills import TOLERANCE, grade
from attention.flash import at_scale_questions
from attention.kv_cache import generate_with_cache, kv_cache_questions
from attention.positions import position_questions
from attention.scaling import why_sqrt_dk_questions
from attention.tiny.questions import what_heads_learn_questions

SETTINGS = [(6, 8, 2, True), (6, 8, 2, False), (5, 12, 3, True), (2, 4, 1, True), (1, 4, 2, False)]


def trace_of(T, C, H, causal, seed):
    x = random_embeddings(T, C, seed).x
    layer = seeded_layer(seed, C, H)
    with torch.no_grad():
        return layer, x, layer(x, "causal" if causal else None)


def all_questions(T, C, H, causal, seed):
    _, _, trace = trace_of(T, C, H, causal, seed)
    labels = [f"t{i}" for i in range(T)]
    return {
        "step_by_step": step_by_step_questions(trace, labels, seed),
        "multi_head": multi_head_questions(trace, seed),
        "masking": masking_questions(trace, labels, causal, 0, seed),
        "why_sqrt_dk": why_sqrt_dk_questions(seed, (4, 16, 64, 256, 512)),
        "worked_example": worked_example_questions(trace, labels, causal),
        "what_heads_learn": what_heads_learn_questions(trace.weights, seed) if T > 1 else (),
        "bug_hunt": bug_hunt_questions(trace, labels, seed),
        "drills": drills_questions(trace, labels, seed),
        "position": position_questions(trace, labels, seed),
        "kv_cache": kv_cache_questions(trace, seed),
        "at_scale": at_scale_questions(trace, labels, causal, (2, 2), seed),
    }


def near_miss(question):
    """An answer just outside what the grader accepts."""
    if question.kind == "number":
        return f"{question.answer + 2 * TOLERANCE:.4f}"
    if question.kind == "whole":
        return str(question.answer + 1)
    if question.kind == "shape":
        return str((question.answer[0] + 1, *question.answer[1:]))
    if question.kind == "mask":
        flipped = set(question.answer) ^ {0}
        return " ".join(map(str, sorted(flipped))) or "none"
    raise AssertionError(question.kind)


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_questions_grade_their_answer_right_and_a_near_miss_wrong(setting, seed):
    for lesson, questions in all_questions(*setting, seed).items():
        assert 2 <= len(questions) <= 5 or (lesson == "what_heads_learn" and not questions)
        for question in questions:
            assert grade(question, question.answer_text).status == "right", question.prompt
            assert grade(question, near_miss(question)).status == "wrong", question.prompt


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_questions_hand_working_counts_as_right(setting, seed):
    """Working from the 4-decimal digits shown never lands outside the tolerance."""
    for questions in all_questions(*setting, seed).values():
        for question in questions:
            for line in question.working:
                assert not (line.startswith("From the unrounded") and "counts" not in line), line


def test_questions_score_weight_output_equal_pytorch():
    _, _, trace = trace_of(6, 8, 2, True, 4)
    labels = [f"t{i}" for i in range(6)]
    score, weight, output = step_by_step_questions(trace, labels, 4)
    k = trace.k[0]
    q1 = torch.tensor(score.given.rows[0][1])
    j = int(score.given.rows[1][0][2:])
    assert score.answer == pytest.approx(float(q1 @ k[j]) / math.sqrt(4), abs=1e-5)
    row = torch.tensor(weight.given.rows[0][1])
    assert sum(weight.given.rows[0][1]) != 0
    j = int(weight.prompt.split("on key ")[1].split(" ")[0])
    assert weight.answer == pytest.approx(float(F.softmax(row, -1)[j]), abs=1e-5)
    a, column = (torch.tensor(r[1]) for r in output.given.rows)
    assert output.answer == pytest.approx(float(a @ column), abs=1e-5)


def test_questions_masking_answers_match_build_mask_and_a_masked_softmax():
    _, _, trace = trace_of(6, 8, 2, True, 2)
    labels = [f"t{i}" for i in range(6)]
    blocked, weight = masking_questions(trace, labels, True, 0, 2)
    i = int(blocked.prompt.split("query ")[1].split(" ")[0])
    pad = int(blocked.prompt.split("the last ")[1].split(" ")[0]) if "last" in blocked.prompt else 0
    assert pad != 0  # another padding than the page's
    mask = build_mask(6, causal=True, n_padding=pad)
    assert blocked.answer == frozenset(j for j in range(6) if not mask[i, j])
    row = trace.scaled[0, i].masked_fill(~mask[i], float("-inf"))
    j = int(weight.prompt.split("on key ")[1].split(" ")[0])
    assert weight.answer == pytest.approx(float(F.softmax(row, -1)[j]), abs=1e-6)


@pytest.mark.parametrize("seed", [0, 5])
def test_questions_kv_cache_bytes_equal_a_real_cache(seed):
    layer, _, trace = trace_of(6, 8, 2, True, seed)
    plain, grouped = kv_cache_questions(trace, seed)
    t = int(plain.prompt.split("After ")[1].split(" ")[0])
    x = random_embeddings(t, 8, seed).x
    with torch.no_grad():
        assert generate_with_cache(layer, x).steps[-1].cache_bytes == plain.answer
    assert grouped.answer < plain.answer * int(grouped.prompt.split("after ")[1].split()[0]) / t


@pytest.mark.parametrize("seed", [0, 1, 9])
def test_questions_position_shuffle_answer_is_where_attention_puts_the_row(seed):
    layer, x, trace = trace_of(6, 8, 2, False, seed)
    shuffle = position_questions(trace, [f"t{i}" for i in range(6)], seed)[0]
    perm = torch.tensor(shuffle.given.rows[0][1])
    i = int(shuffle.prompt.split("Output row ")[1].split(" ")[0])
    with torch.no_grad():
        plain, shuffled = layer(x, None).output, layer(x[perm], None).output
    torch.testing.assert_close(shuffled[shuffle.answer], plain[i])


def test_questions_multi_head_shape_is_what_torch_gives():
    _, _, trace = trace_of(6, 12, 3, True, 1)
    d_k, _, shape = multi_head_questions(trace, 1)
    H = 12 // d_k.answer
    B = shape.answer[0]
    q_all = torch.zeros(B, 6, 12)
    assert tuple(q_all.view(B, 6, H, 12 // H).transpose(1, 2).shape) == shape.answer
    assert H != 3  # another head count than the page's


def test_questions_at_scale_m_and_l_come_from_the_tiled_walk():
    _, _, trace = trace_of(7, 8, 2, True, 3)
    _, m, ell = at_scale_questions(trace, [f"t{i}" for i in range(7)], True, (2, 2), 3)
    row = [v for v in m.given.rows[0][1]]
    block_k = int(m.prompt.split("B_c = ")[1].split(",")[0])
    seen = [v for v in row[: 2 * block_k] if v is not None]
    assert m.answer == pytest.approx(max(seen), abs=1e-5)
    assert ell.answer == pytest.approx(sum(math.exp(v - max(seen)) for v in seen), abs=1e-4)


def test_grade_whole_and_yesno():
    whole = Q.whole("How many?", None, 12, ("12.",))
    assert grade(whole, "12").status == "right"
    assert grade(whole, "12.5").status == "invalid"
    assert grade(whole, "13").status == "wrong"
    yes = Q.Drill("yesno", "Equal?", None, True, "yes", ("It is.",))
    assert grade(yes, "Yes").status == "right"
    assert grade(yes, "no").status == "wrong"
    assert grade(yes, "maybe").status == "invalid"


def test_questions_previous_token_score_needs_two_tokens():
    with pytest.raises(ValueError, match="two tokens"):
        what_heads_learn_questions(torch.ones(1, 1, 1), 0)


@pytest.mark.parametrize(
    "T, C, H, seed", [(6, 8, 2, 0), (5, 12, 3, 4), (2, 8, 1, 1), (7, 16, 4, 9)]
)
def test_bug_hunt_question_2_gives_the_scores_of_the_query_it_names(T, C, H, seed):
    """Issue 28 item 3: with no mask to invert (causal off), question 2 named query q but gave
    query i's raw row ÷ √C. Its given row is now query q's own raw scores ÷ √C, and its answer
    the softmax of that row."""
    import re

    _, _, trace = trace_of(T, C, H, False, seed)
    question = bug_hunt_questions(trace, [f"t{t}" for t in range(T)], seed)[1]
    head, query = map(int, re.search(r"Head (\d+): query (\d+)'s", question.prompt).groups())
    ((name, row),) = question.given.rows
    assert name == f"buggy s′ row {query}"
    expected = trace.scores[head, query] / math.sqrt(C)
    torch.testing.assert_close(torch.tensor(row, dtype=expected.dtype), expected)
    key = int(re.search(r"give key (\d+)", question.prompt).group(1))
    assert question.answer == pytest.approx(float(torch.softmax(expected, -1)[key]), abs=1e-6)


def test_bug_hunt_questions_say_when_the_bug_changes_nothing():
    """Issue 28, item 4: with d_k = 1 forgetting 1/√d_k changes nothing, and with one head
    1/√C is 1/√d_k: the question says so instead of naming a bug that is not one here."""
    from attention import random_embeddings, seeded_layer

    for C, H, causal in ((2, 2, True), (8, 1, False)):
        layer = seeded_layer(0, C, H).eval()
        trace = layer(random_embeddings(6, C, 0).x, "causal" if causal else None)
        first, second = bug_hunt_questions(trace, [f"t{t}" for t in range(6)], 0)
        if C // H == 1:
            assert "changes nothing" in first.prompt
        if H == 1 and not causal:
            assert "the scale is right here" in second.prompt
    trace = seeded_layer(0, 8, 2).eval()(random_embeddings(6, 8, 0).x, "causal")
    first, _ = bug_hunt_questions(trace, [f"t{t}" for t in range(6)], 0)
    assert "changes nothing" not in first.prompt


def test_at_scale_tile_question_counts_tiles_from_0_and_says_so():
    """Issue 30, item 3: the question's "key tile 1" is the second tile, as the page's walker
    (tiles 0 … n−1) counts them; the prompt says which keys tiles 0 … 1 hold."""
    from attention import random_embeddings, seeded_layer

    trace = seeded_layer(0, 8, 2).eval()(random_embeddings(6, 8, 0).x, "causal")
    questions = at_scale_questions(trace, [f"t{t}" for t in range(6)], True, (2, 2), 0)
    m_question = next(q for q in questions if "running max m" in q.prompt)
    assert "tiles counted from 0" in m_question.prompt
    assert "tiles 0 … 1 hold keys 0 … " in m_question.prompt
