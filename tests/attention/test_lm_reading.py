"""What lesson 12 computes from the Shakespeare GPT's reading of a text (attention/lm/reading.py,
attention/lm/generate.py), moved out of its view in issue 54 (item 3): each result against
PyTorch's own cross-entropy, argmax and softmax, and the numbers the page showed before the move
(the texts written twice: 3.72 -> 1.07 nats a character for the made-up name, 4.11 -> 0.47 for
random letters, Hamlet's and Juliet's lines 0.04 and 0.07 dearer the second time)."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attention.lm.corpus import encode
from attention.lm.generate import NextCharacters, next_characters, sample, write_after
from attention.lm.reading import (
    Attended,
    attended_most,
    copy_cost,
    losses,
    mean_loss,
    read_twice,
    twice,
)
from attention.lm.training import load

MADE_UP = "Zorblax of Quintavia"
RANDOM = "qXzPwLmKjRtYvBnC"
HAMLET = "HAMLET:\nTo be, or not to be, that is the question:"
JULIET = "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?"
ROMEO = "ROMEO:\nBut soft, what light through yonder window breaks?"


@pytest.fixture(scope="module")
def model():
    return load().model


def test_mean_loss_is_pytorchs_cross_entropy_with_the_heads_knocked_out(model):
    ids = encode("To be, or not to be: that is the question.")
    with torch.no_grad():
        full = F.cross_entropy(model(ids[None]).logits[0, :-1], ids[1:])
        knocked = F.cross_entropy(model(ids[None], {(1, 0)}).logits[0, :-1], ids[1:])
    assert mean_loss(model, ids) == pytest.approx(float(full), abs=1e-6)
    assert mean_loss(model, ids, ((1, 0),)) == pytest.approx(float(knocked), abs=1e-6)
    assert f"{mean_loss(model, ids):.3f} → {mean_loss(model, ids, ((1, 0),)):.3f}" == (
        "1.300 → 1.394"  # what lesson 12 said before the move
    )


def test_attended_most_is_the_rows_argmax_and_its_weight():
    weights = torch.tensor([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.4, 0.2, 0.4]])  # (T, T)
    assert attended_most(weights, 1) == Attended(query=1, key=1, weight=pytest.approx(0.7))
    assert attended_most(weights, 2).key == 0  # the first of equal weights
    assert attended_most(weights, 0) == Attended(0, 0, 1.0)


def test_next_characters_counts_what_can_be_drawn_and_lists_the_likeliest():
    logits = torch.zeros(65)
    logits[[39, 40, 41]] = torch.tensor([3.0, 2.0, 1.0])  # 'a', 'b', 'c'
    shown = next_characters(logits, 1.0, 2, 1.0, shown=10)
    p = torch.softmax(torch.tensor([3.0, 2.0]), -1)
    assert shown.kept == 2
    assert [c for c, _ in shown.top] == ["a", "b"]
    assert_close(torch.tensor([v for _, v in shown.top]), p)
    everything = next_characters(logits, 1.0, None, 1.0, shown=3)
    assert everything.kept == 65 and len(everything.top) == 3
    assert isinstance(everything, NextCharacters)


def test_write_after_is_sample_with_a_generator_of_that_seed(model):
    ids = encode(ROMEO)
    expected = sample(model, ROMEO, 40, temperature=0.8, top_k=10,
                      generator=torch.Generator().manual_seed(0))  # fmt: skip
    written = write_after(model, ids, 40, temperature=0.8, top_k=10, top_p=1.0, seed=0)
    assert written.new == expected.new and written.prompt == ROMEO


def test_read_twice_splits_the_losses_at_the_copies(model):
    ids = encode(MADE_UP)
    read = read_twice(model, ids)
    doubled = twice(ids, model.context)
    L = len(ids)
    assert read.copy_length == L and torch.equal(read.ids, doubled)
    per_char = losses(model, doubled)  # (2 L - 1,)
    assert_close(read.first, per_char[: L - 1])  # characters 1 .. L - 1 of the first copy
    assert_close(read.second, per_char[L:])  # characters L + 1 .. 2 L - 1: the second copy's
    assert read.first.shape == read.second.shape == (L - 1,)
    assert [w.shape for w in read.weights] == [(4, 2 * L, 2 * L)] * 2
    assert read.glyphs[:9] == ["Z", "o", "r", "b", "l", "a", "x", "␣", "o"]


def test_read_twice_cuts_each_copy_to_half_the_context(model):
    read = read_twice(model, encode("x" * 60))
    assert read.copy_length == model.context // 2 and len(read.ids) == model.context


@pytest.mark.parametrize(
    "text, shown",
    [
        (MADE_UP, ("3.72", "1.07", "2.65", "L1H1", "0.51")),
        (RANDOM, ("4.11", "0.47", "3.64", "L1H1", "0.80")),
        (HAMLET, ("1.76", "1.80", "-0.04", "L1H1", "0.14")),
        (JULIET, ("0.81", "0.88", "-0.07", "L1H1", "0.40")),
        (ROMEO, ("1.24", "1.38", "-0.14", "L1H1", "0.22")),
    ],
)
def test_read_twice_costs_what_lesson_12_showed(model, text, shown):
    read = read_twice(model, encode(text))
    cost, head = read.cost(), read.induction_head
    assert cost.first == round(float(read.first.mean()), 2)
    numbers = (f"{cost.first:.2f}", f"{cost.second:.2f}", f"{cost.saved:.2f}")
    assert (*numbers, head.name, f"{head.share('induction'):.2f}") == shown
    assert head.scores["induction"] == max(s.scores["induction"] for s in read.scores)


def test_a_text_of_one_character_twice_has_no_cost(model):
    read = read_twice(model, encode("a"))
    assert not read.costed and read.first.numel() == read.second.numel() == 0
    with pytest.raises(ValueError, match="nothing to predict"):
        read.cost()
    assert read_twice(model, encode("ab")).costed


def test_copy_cost_saves_the_difference_of_the_numbers_as_shown():
    cost = copy_cost(3.6142, 0.2457)  # unrounded, 3.3685 apart: 3.37
    assert (cost.first, cost.second, cost.saved) == (3.61, 0.25, 3.36)
    assert copy_cost(1.24, 1.24).saved == 0
    assert copy_cost(2.37, 2.43).saved == -0.06
    assert copy_cost(1.23456, 1.0, decimals=3).saved == 0.235
