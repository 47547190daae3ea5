"""Lesson 14, the block around attention, through AppTest: every sentence about a number, a
head or a layer is the maths' own at the default text, a text of random symbols and a single
character; the position control moves them; bad text and bad links get a message; the
exercise notebook fails blank and passes solved."""

import pytest
import torch
from conftest import as_read, no_exception, open_page, run_notebook, said

from attention.lm.block import (
    direct_attribution,
    guess_agreement,
    held_out_windows,
    logit_lens,
    mlp_row,
    stage_sizes,
    stream_of,
)
from attention.lm.corpus import TRAIN_CHARS, text, vocabulary
from attention.lm.training import load
from dashboard.shakespeare import TEXT_DEFAULT
from dashboard.views import block as view

PAGE = "pages/block.py"
TEXTS = [TEXT_DEFAULT, "q$7&Zx!;Pw3:k-Q", "a"]  # the default, random symbols, one character


@pytest.fixture(scope="module")
def model():
    return load().model


def glyph(char: int) -> str:
    return view.glyph(char)


def check_sentences(at, model, typed: str, position: int) -> None:
    """The page's sentences at `position` are the maths' numbers (computed here again)."""
    stream = stream_of(model, typed)
    lens = logit_lens(model, stream)
    guess = int(lens.probs[-1, position].argmax())
    p = float(lens.probs[-1, position, guess])
    assert said(at, f"final guess after position {position} is **'{glyph(guess)}'**",
                f"({100 * p:.1f} %)")  # fmt: skip
    split = direct_attribution(model, stream, position, guess)
    movers = sorted((q for q in split.parts if q.kind in ("head", "MLP")), key=lambda q: -q.value)
    assert said(at, f"**{movers[0].name}** ({movers[0].value:+.3f})") or said(
        at, f"the largest, {movers[0].name}'s, is {movers[0].value:+.3f}"
    )
    assert said(at, f"add to {split.total:.3f}", f"is {float(stream.logits[position, guess]):.3f}")
    sizes = stage_sizes(stream, position)
    most = max(sizes[1:], key=lambda s: s.added)
    assert said(at, f"largest addition is {most.stage.title.removeprefix('after ')}'s "
                f"(size {most.added:.2f})")  # fmt: skip
    row = mlp_row(stream, 0, position)
    passed = int((row.post > 0).sum())
    assert said(at, f"GELU passes {passed} of them", f"the other {512 - passed}")
    first = stream.blocks[0].resid_pre[position]
    spread = float((first.var(unbiased=False) + 1e-5).sqrt())
    assert said(at, f"mean **{float(first.mean()):.3f}**", f"= **{spread:.3f}**")
    gamma = model.blocks[0].ln_1.weight.detach()
    assert said(at, f"(here from {float(gamma.min()):.2f} to {float(gamma.max()):.2f})")
    stage = lens.first_stage_guessing(position, guess)
    if stage == 0:
        assert said(at, "already the likeliest after the embedding alone")
    else:
        assert said(at, f"It is the likeliest from {stream.stages[stage].title} on")
    w_in = model.blocks[0].mlp[0]
    per_mlp = sum(p.numel() for p in model.blocks[0].mlp.parameters())
    assert said(at, f"This model stacks **{len(model.blocks)} blocks**",
                f"to {w_in.out_features} numbers (4C)")  # fmt: skip
    assert said(at, f"{per_mlp:,} parameters an MLP, {len(model.blocks) * per_mlp:,} in the")


@pytest.mark.parametrize("typed", TEXTS)
def test_block_page_says_the_models_numbers_at_three_texts(model, typed):
    at = open_page(PAGE, blk_text=typed)
    no_exception(at)
    assert not at.error and not at.warning, [w.value for w in (*at.error, *at.warning)]
    assert len(at.get("vega_lite_chart")) >= 4 and len(at.dataframe) >= 3
    T = len(stream_of(model, typed).ids)
    check_sentences(at, model, typed, T - 1)


def test_block_moving_the_position_moves_every_sentence(model):
    at = open_page(PAGE)
    no_exception(at)
    for position in (0, 20):
        at.select_slider(key="blk_pos").set_value(position).run()
        no_exception(at)
        check_sentences(at, model, TEXT_DEFAULT, position)
    nxt = glyph(vocabulary().index(TEXT_DEFAULT[21]))  # a space is drawn ␣
    assert said(at, f"Your text has '{nxt}' next")


def test_block_following_another_character_says_its_probabilities(model):
    at = open_page(PAGE, blk_char="e")
    no_exception(at)
    stream = stream_of(model, TEXT_DEFAULT)
    lens = logit_lens(model, stream)
    e, T = vocabulary().index("e"), len(stream.ids)
    first, last = float(lens.probs[0, T - 1, e]), float(lens.probs[-1, T - 1, e])
    assert said(at, f"'e' goes from {100 * first:.1f} % after the embedding to {100 * last:.1f} %")
    split = direct_attribution(model, stream, T - 1, e)
    assert said(at, f"model's logit for 'e' is {split.logit:.3f}")


def test_block_held_out_claim_is_measured_on_text_never_trained_on(model):
    at = open_page(PAGE)
    no_exception(at)
    windows = held_out_windows(length=64)
    trained = text()[:TRAIN_CHARS]
    assert windows and not any(w in trained for w in windows)
    figures = guess_agreement(model, windows)
    assert said(at, f"{figures.windows} windows", f"{figures.positions:,} positions",
                f"after the embedding {100 * figures.shares[0]:.1f} %")  # fmt: skip


@pytest.mark.parametrize("typed", ["", "€€€✓✓"])
def test_block_text_with_nothing_to_read_gets_a_message_and_the_default(typed):
    at = open_page(PAGE, blk_text=typed)
    no_exception(at)
    assert said(at, "The model has nothing to read")
    assert said(at, "Showing the default text")
    assert at.warning and not at.error


def test_block_link_values_it_cannot_use_get_a_message():
    at = open_page(PAGE, blk_text="ab", blk_pos="7", blk_char="é", blk_ln="LN9")
    no_exception(at)
    warned = [as_read(w.value) for w in at.warning]
    assert any("blk_pos=7 is not a position of the text, 0 to 1: using 1" in w for w in warned)
    assert any("blk_char=é is not one of the model's 65 characters" in w for w in warned)
    assert any("blk_ln=LN9 is not one of the model's LayerNorms" in w for w in warned)


def test_block_a_single_character_has_no_slider_to_move():
    at = open_page(PAGE, blk_text="a")
    no_exception(at)
    assert not [s for s in at.select_slider if s.key == "blk_pos"]
    assert said(at, "Position: 0, 'a' (the text has one character).")


def test_block_a_markdown_character_is_shown_as_typed():
    at = open_page(PAGE, blk_text="I paid $3 & $5.", blk_char="$")
    no_exception(at)
    assert said(at, "'$' goes from") and said(at, "model's logit for '$'")
    assert any("\\$" in m.value for m in at.markdown)  # escaped: never read as LaTeX
    assert not any(m.proto.allow_html for m in at.markdown)


def test_block_presenter_sections_draw_at_a_moved_position():
    at = open_page(PAGE, present="1", blk_pos="3", blk_char="e")
    no_exception(at)
    for number in range(1, 8):
        at.query_params["section"] = str(number)
        at.run()
        no_exception(at)
        assert not at.error


def test_block_exercises_blank_fail_their_checks_and_solved_pass():
    from nbclient.exceptions import CellExecutionError

    blank = view.exercises("To be, or not to be", 7)
    solved = view.exercises("To be, or not to be", 7, solved=True)
    yours = [c.source for c in blank.cells if c.source.startswith("# Your code")]
    assert len(yours) == 2 and "stream = None" in yours[0] and "lens = None" in yours[1]
    with pytest.raises(CellExecutionError, match="stream: write it in the cell above"):
        run_notebook(blank)
    run_notebook(solved)
    text_out = "".join(
        o.get("text", "") for c in solved.cells if c.cell_type == "code" for o in c.outputs
    )
    assert text_out.count(": right") == 2 and "Every step right" in text_out


def test_block_exercise_checks_name_the_mistakes():
    """The lens check names a lens read without the final LayerNorm and a softmax over the
    stages; the stream check names rows of what each stage added instead of their sum."""
    import runpy

    from dashboard.exports.notebooks import CELLS

    cells = runpy.run_path(str(CELLS / "block.py"), run_name="__main__")
    check, U, C = cells["check"], cells["U"], cells["C"]
    page_stream, page_lens = cells["stream_by_dashboard"], cells["lens_by_dashboard"]
    mistakes = cells["lens_mistakes"]()
    with pytest.raises(AssertionError, match="final LayerNorm is missing"):
        check("lens", torch.softmax(page_stream @ U.T, -1), page_lens, mistakes)
    normed = torch.nn.functional.layer_norm(
        page_stream, (C,), cells["gamma_f"], cells["beta_f"], cells["eps"]
    )
    with pytest.raises(AssertionError, match="over the stages"):
        check("lens", torch.softmax(normed @ U.T, 0), page_lens, mistakes)
    added = page_stream.diff(dim=0, prepend=torch.zeros(1, C))  # each row: what a stage added
    with pytest.raises(AssertionError, match="not the running sum"):
        check("stream", added, page_stream, cells["stream_mistakes"]())
    with pytest.raises(AssertionError, match="at stage"):
        check("stream", page_stream + 1, page_stream)


@pytest.mark.parametrize("typed", TEXTS)
def test_block_no_answer_is_printed_above_its_question(model, typed):
    """At the default text and the two others: no question's 4-decimal answer is in a table or
    a sentence above Check yourself (the questions ask past what the page prints)."""
    from conftest import before_check, printed

    at = open_page(PAGE, blk_text=typed)
    no_exception(at)
    shown = [line for element in before_check(at) for line in printed(element)]
    stream = stream_of(model, typed)
    position = len(stream.ids) - 1
    read = view.Text(typed, view.stream(typed))
    for question in view.lesson_questions(
        read, position, view.followed(read, position, view.GUESS)
    ):
        assert not any(question.answer_text in line for line in shown), question.answer_text


@pytest.mark.parametrize("typed", TEXTS)
@pytest.mark.parametrize("where", ["last", "first"])
def test_the_pushes_sentence_names_the_largest_bar_whatever_its_kind(model, typed, where):
    """The sentence names the heads' and MLPs' largest pushes and, where an embedding or β
    outdoes them, that bar too (a reviewer found "the largest push down is layer 1 · head 2's"
    beside a larger position-embedding bar): every character the model could follow."""
    stream = stream_of(model, typed)
    position = len(stream.ids) - 1 if where == "last" else 0
    for char in range(len(vocabulary())):
        split = direct_attribution(model, stream, position, char)
        words = view.attribution_words(split)
        top = max(split.parts, key=lambda p: p.value)
        bottom = min(split.parts, key=lambda p: p.value)
        movers = split.pushing()
        if top.value > 0:
            assert f"{top.name}" in words and f"{top.value:+.3f}" in words, words
        if bottom.value < 0:
            assert f"{bottom.name}" in words and f"{bottom.value:+.3f}" in words, words
        assert f"**{movers[0].name}**" in words or movers[0].value <= 0, words
