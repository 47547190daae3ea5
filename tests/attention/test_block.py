"""Lesson 14's maths (attention/lm/block.py): the block written out equals the model's own
forward, the logit lens ends at the model's logits, the parts of a logit add to it, LayerNorm on
one row is PyTorch's, and bad input is refused with the reason. At the lesson's default text, a
text of random symbols and a single character."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from attention.lm.block import (
    char_id,
    check_position,
    direct_attribution,
    guess_agreement,
    held_out_windows,
    layer_norm_input,
    layer_norm_row,
    layer_norms,
    lens_without_final_norm,
    logit_lens,
    mlp_shape,
    stream_of,
)
from attention.lm.corpus import TRAIN_CHARS, text, vocabulary
from attention.lm.training import load

DEFAULT = "ROMEO:\nBut soft, what light through yonder window breaks?"  # lesson 14's own
TEXTS = [DEFAULT, "q$7&Zx!;Pw3:k-Q", "a"]  # the default, random symbols, a single character


@pytest.fixture(scope="module")
def model():
    return load().model


def own_forward(model, ids):
    """The model's own forward, each block's output (the stream after it) caught by a hook."""
    caught = []
    hooks = [
        block.register_forward_hook(lambda _m, _i, out: caught.append(out[0][0]))
        for block in model.blocks
    ]
    try:
        with torch.inference_mode():
            out = model(ids[None])
    finally:
        for hook in hooks:
            hook.remove()
    return out, caught


@pytest.mark.parametrize("typed", TEXTS)
def test_stream_equals_the_models_own_forward(model, typed):
    stream = stream_of(model, typed)
    out, after_blocks = own_forward(model, stream.ids)
    assert_close(stream.logits, out.logits[0], rtol=0, atol=1e-6)
    for b, trace, resid in zip(stream.blocks, out.traces, after_blocks, strict=True):
        assert_close(b.ln1, trace.x[0], rtol=0, atol=1e-6)
        assert_close(b.attn.weights, trace.weights[0], rtol=0, atol=1e-6)
        assert_close(b.attn_out, trace.output[0], rtol=0, atol=1e-6)
        assert_close(b.resid_post, resid, rtol=0, atol=1e-6)
        assert_close(b.resid_mid, b.resid_pre + b.attn_out, rtol=0, atol=1e-6)
        assert_close(b.resid_post, b.resid_mid + b.mlp_out, rtol=0, atol=1e-6)
        assert_close(b.head_out.sum(0), b.attn_out, rtol=0, atol=1e-5)
        assert_close(b.mlp_post, F.gelu(b.mlp_pre))
    assert stream.blocks[0].resid_pre.shape == (len(stream.ids), 128)
    assert stream.blocks[0].mlp_pre.shape == (len(stream.ids), 512)


@pytest.mark.parametrize("typed", TEXTS)
def test_stream_stages_are_the_embedding_then_each_attention_and_mlp(model, typed):
    stream = stream_of(model, typed)
    names = [s.name for s in stream.stages]
    assert names == ["embedding", "attention 0", "MLP 0", "attention 1", "MLP 1"]
    resid, added = stream.resid(), stream.added()
    assert resid.shape == added.shape == (5, len(stream.ids), 128)
    assert_close(added.cumsum(0), resid, rtol=0, atol=1e-5)  # the stream is what was added


@pytest.mark.parametrize("typed", TEXTS)
def test_lens_last_stage_is_the_models_logits_and_each_row_a_distribution(model, typed):
    stream = stream_of(model, typed)
    lens = logit_lens(model, stream)
    # equal up to float32's rounding: the lens multiplies every stage at once, (S, T, C), the
    # model one stream, (T, C), and a CPU's kernels may sum the two in another order (one ulp
    # of a logit of 8 is 1e-6: an AVX-512 EPYC differed by 1.2e-6 here and 2.9e-6 on the first
    # stage, where CI's machines had stayed within 1e-6)
    assert_close(lens.logits[-1], stream.logits)  # float32's defaults: rtol 1.3e-6, atol 1e-5
    assert_close(lens.probs.sum(-1), torch.ones(5, len(stream.ids)))
    with torch.no_grad():
        first = model.unembed(model.ln_f(stream.blocks[0].resid_pre))  # LN_f then U, by hand
    assert_close(lens.logits[0], first)
    raw = lens_without_final_norm(model, stream)
    assert not torch.allclose(raw[0], lens.logits[0], atol=1e-2)  # the mistake differs


def test_lens_top_and_the_first_stage_that_guesses(model):
    lens = logit_lens(model, stream_of(model, DEFAULT))
    last = len(DEFAULT) - 1
    top = lens.top(4, last, 3)
    assert [c for c, _ in top] == ["\n", " ", "-"] and top[0][1] > top[1][1] > top[2][1]
    newline = vocabulary().index("\n")
    assert lens.first_stage_guessing(last, newline) == 2  # '&' after layer 0's attention
    assert lens.first_stage_guessing(last, vocabulary().index("-")) is None


@pytest.mark.parametrize("typed", TEXTS)
def test_attribution_parts_add_to_the_logit(model, typed):
    stream = stream_of(model, typed)
    for position in {0, len(stream.ids) - 1}:
        for char in (0, int(stream.logits[position].argmax()), len(vocabulary()) - 1):
            split = direct_attribution(model, stream, position, char)
            assert split.total == pytest.approx(split.logit, abs=1e-5)
            assert split.logit == pytest.approx(float(stream.logits[position, char]), abs=1e-6)
            assert len(split.parts) == 2 + 4 + 1 + 4 + 1 + 1
            assert len(split.pushing()) == 10


def test_attribution_freezes_the_final_scale_at_the_real_forward(model):
    stream = stream_of(model, DEFAULT)
    split = direct_attribution(model, stream, 5, 0)
    last = stream.blocks[-1].resid_post[5]
    assert split.scale == pytest.approx(float((last.var(unbiased=False) + 1e-5).sqrt()))
    assert [p.value for p in split.pushing()] == sorted(
        (p.value for p in split.parts if p.kind in ("head", "MLP")), reverse=True
    )


@pytest.mark.parametrize("typed", TEXTS)
def test_layer_norm_row_is_pytorchs(model, typed):
    stream = stream_of(model, typed)
    for name, ln in layer_norms(model).items():
        row = layer_norm_input(stream, name)[-1]
        done = layer_norm_row(ln, row)
        with torch.no_grad():
            assert_close(done.output, ln(row), rtol=1e-6, atol=1e-6)
        assert done.mean == pytest.approx(float(row.mean()), abs=1e-6)
        assert done.std == pytest.approx(float((row.var(unbiased=False) + ln.eps).sqrt()))
        assert_close(done.normalised.mean(), torch.tensor(0.0), rtol=0, atol=1e-5)


def test_mlp_shape_is_the_models():
    shape = mlp_shape(load().model)
    assert (shape.d_model, shape.hidden, shape.activation) == (128, 512, "GELU")
    assert shape.parameters == 128 * 512 + 512 + 512 * 128 + 128


@pytest.mark.parametrize(
    ("typed", "words"),
    [("", "nothing to read"), ("€€€", "nothing to read"), (None, "must be a string")],
)
def test_bad_text_is_refused_with_the_reason(model, typed, words):
    with pytest.raises(ValueError, match=words):
        stream_of(model, typed)


def test_a_position_past_the_text_is_refused(model):
    stream = stream_of(model, "a")
    assert check_position(stream, 0) == 0
    for position in (1, -1, 64):
        with pytest.raises(ValueError, match="past the text: it has 1 character, positions 0"):
            direct_attribution(model, stream, position, 0)
    with pytest.raises(ValueError, match="whole number"):
        check_position(stream, 0.5)


def test_a_character_outside_the_vocabulary_is_refused():
    assert char_id("a") == vocabulary().index("a")
    assert char_id("␣") == vocabulary().index(" ")
    with pytest.raises(ValueError, match="outside the model's vocabulary"):
        char_id("é")
    with pytest.raises(ValueError, match="one character"):
        char_id("ab")


def test_held_out_windows_are_nowhere_in_the_training_text(model):
    windows = held_out_windows(6, 64)
    trained, held = text()[:TRAIN_CHARS], text()[TRAIN_CHARS:]
    assert len(windows) == 6
    for window in windows:
        assert len(window) == 64 and window in held and window not in trained
    agreement = guess_agreement(model, windows)
    assert agreement.positions == 6 * 64 and agreement.shares[-1] == 1.0
    assert all(0 <= share <= 1 for share in agreement.shares)


@pytest.mark.parametrize("typed", TEXTS)
def test_questions_are_right_on_their_answer_and_name_each_mistake(model, typed):
    from attention.drills import grade
    from attention.lm.block_questions import MISCONCEPTIONS, SHOWN_FEATURES, block_questions

    stream = stream_of(model, typed)
    position = len(stream.ids) - 1
    chosen = int(stream.logits[position].argmax())
    asked = block_questions(model, stream, position, chosen)
    assert len(asked) == 3
    named = set()
    for question in asked:
        assert grade(question, question.answer_text).status == "right"
        for mistake in question.mistakes:
            verdict = grade(question, f"{mistake.value:.4f}")
            assert verdict.status == "wrong" and verdict.mistake == mistake
            named |= set(mistake.bugs)
    assert {"block_lens_no_final_ln", "block_add_before_ln", "block_ln_no_affine"} <= named
    assert named <= set(MISCONCEPTIONS)
    if len(stream.ids) > 1:  # a column of one position gives 1, a mistake of its own
        assert "block_softmax_wrong_axis" in named
    residual, lens_asked, norm = asked
    b = stream.blocks[0]
    j = int(residual.prompt.split("feature ")[1].split(" ")[0])
    assert j >= SHOWN_FEATURES  # past the LayerNorm table the page prints
    assert residual.answer == pytest.approx(float(b.resid_post[position, j]))
    assert residual.answer == pytest.approx(
        float(b.resid_pre[position, j] + b.attn_out[position, j] + b.mlp_out[position, j]),
        abs=1e-5,
    )
    lens = logit_lens(model, stream)
    stage = next(i for i, s in enumerate(lens.stages) if f"lens {s.title}:" in lens_asked.prompt)
    listed = {c for c, _ in lens.top(stage, position, 3)}  # the lens's row on the page, there
    asked_char = lens_asked.given.columns[0].strip("'")
    assert asked_char not in listed and lens_asked.takes_percent
    assert 0 < lens_asked.answer < 1
    assert grade(lens_asked, "0").status != "right"  # a blank guess is not within the tolerance
    ln = model.blocks[1].ln_2
    j = int(norm.prompt.split("at feature ")[1].rstrip("?"))
    with torch.no_grad():
        assert norm.answer == pytest.approx(
            float(ln(stream.blocks[1].resid_mid[position])[j]), abs=1e-5
        )


def test_questions_refuse_a_position_past_the_text(model):
    from attention.lm.block_questions import block_questions

    with pytest.raises(ValueError, match="past the text"):
        block_questions(model, stream_of(model, "ab"), 2, 0)


def test_the_docs_figures_are_the_models(model):
    """docs/lessons.md's lesson 14 paragraph: the lens at the default text's last position,
    the largest parts of the final guess's logit, the held-out shares."""
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "lessons.md").read_text()
    docs = " ".join(docs.split())  # the paragraph's line breaks
    stream = stream_of(model, DEFAULT)
    lens = logit_lens(model, stream)
    last = len(stream.ids) - 1
    glyphs = {"\n": "⏎", " ": "␣"}
    for stage in range(5):
        top = ", ".join(f"{glyphs.get(c, c)} {100 * p:.1f} %" for c, p in lens.top(stage, last, 3))
        assert top in docs, top
    split = direct_attribution(model, stream, last, lens.likeliest(-1, last))
    assert f"final guess's logit ({split.logit:.3f})" in docs
    parts = sorted(split.parts, key=lambda p: -abs(p.value))[:3]
    assert ", ".join(f"{p.name} {p.value:+.3f}" for p in parts[:2]) in docs
    figures = guess_agreement(model, held_out_windows(length=64))
    shares = [f"{100 * s:.1f} %" for s in figures.shares]
    assert f"{shares[0]} of the {figures.positions:,} positions" in docs
    assert all(share in docs for share in shares[1:4])
    assert f"at the other {100 * (1 - figures.shares[3]):.1f} %" in docs
