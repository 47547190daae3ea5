"""Lesson 13's maths: cross-attention equals PyTorch's, bad input says why, and the shipped
encoder-decoder reverses words, with a head that aligns each step to the letter it writes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention.cross.layer import CrossAttention
from attention.cross.model import MAX_SOURCE, accuracy, alignment_scores, check_word, write
from attention.cross.questions import ALIGNER, cross_questions
from attention.cross.training import held_out, load
from attention.drills import grade


def layer_and_reference(C: int, H: int) -> tuple[CrossAttention, nn.MultiheadAttention]:
    torch.manual_seed(C * 10 + H)
    ours = CrossAttention(C, H).double()
    theirs = nn.MultiheadAttention(C, H, bias=False, batch_first=True).double()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
    return ours, theirs


@pytest.mark.parametrize("T, S, C, H", [(3, 5, 8, 2), (6, 2, 12, 3), (1, 7, 16, 4), (4, 4, 8, 1)])
@pytest.mark.parametrize("padded", [False, True])
def test_cross_attention_equals_multihead_attention_and_sdpa(T, S, C, H, padded):
    ours, theirs = layer_and_reference(C, H)
    y, x = torch.randn(2, T, C, dtype=torch.double), torch.randn(2, S, C, dtype=torch.double)
    pad = torch.zeros(2, S, dtype=torch.bool)
    if padded and S > 1:
        pad[0, -1] = True  # the first source is one shorter
        pad[1, S // 2 :] = True
    trace = ours(y, x, pad if padded else None)
    assert trace.scores.shape == (2, H, T, S)  # T x S, not square
    expected, weights = theirs(
        y, x, x, key_padding_mask=pad if padded else None, average_attn_weights=False
    )
    torch.testing.assert_close(trace.output, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(trace.weights, weights, atol=1e-6, rtol=0)
    allowed = ~pad[:, None, None, :] if padded else None
    sdpa = F.scaled_dot_product_attention(trace.q, trace.k, trace.v, attn_mask=allowed)
    torch.testing.assert_close(trace.heads, sdpa, atol=1e-6, rtol=0)
    blocked = ~trace.allowed.expand_as(trace.weights)
    assert float(trace.weights.detach().masked_select(blocked).abs().sum()) == 0


def test_cross_attention_bad_input_says_why():
    layer = CrossAttention(8, 2)
    with pytest.raises(ValueError, match="both have d_model = 8"):
        layer(torch.randn(1, 3, 6), torch.randn(1, 4, 8))
    with pytest.raises(ValueError, match="all padding"):
        layer(torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.tensor([[False] * 4, [True] * 4]))
    with pytest.raises(ValueError, match="shape"):
        layer(torch.randn(1, 3, 8), torch.randn(1, 4, 8), torch.zeros(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="divisible"):
        CrossAttention(8, 3)
    for word, said in (("", "type a word"), ("bark", "only the letters a to l"),
                       ("abba", "each letter may appear once")):  # fmt: skip
        with pytest.raises(ValueError, match=said):
            check_word(word)


def test_the_model_reverses_held_out_words():
    """A threshold of learning: the shipped model reverses unseen words of 2 to 8 letters."""
    assert accuracy(load(), held_out(n=200, seed=99)) >= 0.98


def test_one_head_aligns_each_step_to_the_letter_it_writes():
    """The aligner the page shows first (ALIGNER) puts most of its weight on the right source
    letter; knocking it out breaks the model, knocking out its neighbour in the layer does not."""
    model = load()
    words = held_out(n=200, seed=99)
    scores = alignment_scores(model, words)
    LAYER, HEAD = ALIGNER
    assert float(scores[LAYER, HEAD]) >= 0.75
    assert float(scores[LAYER, HEAD]) == float(scores.max())
    small = words[:100]
    assert sum(write(model, w, ablate=[(LAYER, HEAD)]).right for w in small) / 100 <= 0.2
    assert sum(write(model, w, ablate=[(LAYER, 1 - HEAD)]).right for w in small) / 100 >= 0.5


@pytest.mark.parametrize("word", ["black", "fig", "hijack"])
def test_padding_the_source_changes_nothing(word):
    model = load()
    plain, padded = write(model, word), write(model, word, padded=MAX_SOURCE - len(word))
    assert plain.written == padded.written == word[::-1]
    S = len(word)
    for read, read_padded in zip(plain.output.cross, padded.output.cross, strict=True):
        assert float(read_padded.weights[..., S:].abs().max()) == 0.0
        torch.testing.assert_close(read_padded.weights[..., :S], read.weights, atol=1e-5, rtol=0)


def test_words_longer_than_any_seen_in_training_are_not_reversed():
    """The page says so, with the share it computes: the model never saw a position past 8."""
    assert accuracy(load(), held_out(range(9, MAX_SOURCE + 1), 50, seed=5)) <= 0.1


@pytest.mark.parametrize("word", ["black", "fig", "hijack"])
def test_questions_grade_their_answers_and_name_the_misconceptions(word):
    weight, size, where = cross_questions(load(), word)
    for drill in (weight, size, where):
        assert grade(drill, drill.answer_text).status == "right"
    for mistake in weight.mistakes:
        verdict = grade(weight, f"{mistake.value:.4f}")
        assert verdict.status == "wrong" and verdict.mistake == mistake
    assert {b for m in weight.mistakes for b in m.bugs} >= {"cross_softmax_over_target"}
    T = len(word) + 1
    assert size.answer == T * len(word)
    assert grade(size, str(T * T)).reading.startswith(f"{T * T} is T × T")
