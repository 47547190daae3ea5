"""Where X comes from: random, sentences, the worked example, typed matrices."""

import math

import pytest
import torch
from torch.testing import assert_close

from attention import (
    parse_matrix,
    random_embeddings,
    seeded_layer,
    sentence_embeddings,
    sinusoidal_positions,
    tokenize,
)


def test_random_embeddings_fixed_by_seed():
    a, b = random_embeddings(5, 8, seed=3), random_embeddings(5, 8, seed=3)
    assert torch.equal(a.x, b.x)
    assert a.x.shape == (5, 8)
    assert a.tokens == ("t0", "t1", "t2", "t3", "t4")
    assert not torch.equal(a.x, random_embeddings(5, 8, seed=4).x)


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("The cat sat.", ["The", "cat", "sat", "."]),
        ("Hi, you!", ["Hi", ",", "you", "!"]),
        ("don't", ["don", "'", "t"]),
        ("שלום עולם", ["שלום", "עולם"]),
        ("I ❤ 🍕", ["I", "❤", "🍕"]),
        ("<script>", ["<", "script", ">"]),
        ("   ", []),
    ],
)
def test_tokenize_words_and_punctuation(text, tokens):
    assert tokenize(text) == tokens


def test_sentence_same_token_same_vector_without_positions():
    emb = sentence_embeddings("the cat the", 6, seed=0, max_len=10, positional=False)
    assert torch.equal(emb.x[0], emb.x[2])
    assert not torch.equal(emb.x[0], emb.x[1])


def test_sentence_positions_make_repeated_tokens_differ():
    emb = sentence_embeddings("the cat the", 6, seed=0, max_len=10)
    plain = sentence_embeddings("the cat the", 6, seed=0, max_len=10, positional=False)
    assert_close(emb.x - plain.x, sinusoidal_positions(3, 6))
    assert not torch.equal(emb.x[0], emb.x[2])


def test_sentence_is_deterministic_and_seeded():
    a = sentence_embeddings("a b", 4, seed=1, max_len=5)
    assert torch.equal(a.x, sentence_embeddings("a b", 4, seed=1, max_len=5).x)
    assert not torch.equal(a.x, sentence_embeddings("a b", 4, seed=2, max_len=5).x)


def test_sentence_too_long_is_cut_with_a_notice():
    emb = sentence_embeddings("a b c d e", 4, seed=0, max_len=3)
    assert emb.tokens == ("a", "b", "c")
    assert "5 tokens" in emb.notice and "first 3" in emb.notice


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_sentence_without_tokens_is_an_error(text):
    with pytest.raises(ValueError, match="no tokens"):
        sentence_embeddings(text, 4, seed=0, max_len=3)


def test_sinusoidal_positions_values():
    pe = sinusoidal_positions(3, 5)
    assert pe.shape == (3, 5)
    assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0]))
    assert_close(pe[2, 0], torch.tensor(math.sin(2.0)))
    assert_close(pe[2, 3], torch.tensor(math.cos(2.0 / 10000 ** (2 / 5))))


def test_parse_matrix_accepts_numbers_and_numeric_text():
    x = parse_matrix([[1, "2.5"], [" -3 ", 4.0]], max_rows=4, max_cols=4)
    assert_close(x, torch.tensor([[1.0, 2.5], [-3.0, 4.0]]))


@pytest.mark.parametrize(
    "rows, message",
    [
        ([], "no rows"),
        ([[]], "no columns"),
        ([[1, 2], [3]], "row 2 has 1 numbers but row 1 has 2"),
        ([[1, "x"]], "row 1, column 2 is not a number"),
        ([[1, None]], "blank"),
        ([[1, "  "]], "blank"),
        ([[1, float("nan")]], "NaN"),
        ([[1, "inf"]], "infinite"),
        ([[1, 1e30]], "too large"),
        ([[1]] * 5, "at most 4"),
        ([[1] * 5], "at most 4"),
        ([[True]], "not a number"),
    ],
)
def test_parse_matrix_rejects_bad_input(rows, message):
    with pytest.raises(ValueError, match=message):
        parse_matrix(rows, max_rows=4, max_cols=4)


@pytest.mark.parametrize("t, d", [(0, 4), (4, 0), (2.5, 4)])
def test_random_embeddings_rejects_bad_sizes(t, d):
    with pytest.raises(ValueError, match="at least 1"):
        random_embeddings(t, d, seed=0)


def test_random_embeddings_are_independent_of_the_layer_weights():
    """X and the layer share one seed but not one random stream: no correlation between X's
    rows and W_q's rows, so Q = X W_q has no systematic diagonal (it had one: mean cosine
    -0.35, Q's diagonal averaging -1.6 at T = C = 64)."""
    cosines, diagonals = [], []
    for seed in range(8):
        x = random_embeddings(64, 64, seed).x  # (T, C)
        W_q = seeded_layer(seed, 64, 2).W_q.weight.detach()  # (C, C)
        cos = torch.nn.functional.cosine_similarity(x[:, None], W_q[None], dim=-1)
        cosines.append(cos.diagonal().mean())
        diagonals.append((x @ W_q.T).diagonal().mean())
    assert abs(float(torch.stack(cosines).mean())) < 0.03
    assert abs(float(torch.stack(diagonals).mean())) < 0.15


def test_tutorial_attention_equals_the_worked_example_layer():
    """Lesson 5 shows tutorial_attention's source: it must compute what the page shows."""
    from attention.inputs import WORKED_ENCODINGS, tutorial_attention, worked_example

    x = torch.tensor(WORKED_ENCODINGS)
    example = worked_example()
    expected = example.layer(x, example.mask, mask_value=example.mask_value).output
    with torch.random.fork_rng(devices=[]):
        actual = tutorial_attention(x)
    torch.testing.assert_close(actual, expected)
