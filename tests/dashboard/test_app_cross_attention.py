"""Lesson 13 through AppTest: every control of its own moved (the word, the layer and head,
the step, the pads), bad words and bad links answered with a message, and the page's sentences
computed from the model's numbers at the default, two other words and the shortest and longest
the box accepts (issue 55: the figures on held-out words, what a longer word becomes, the
terms defined and linked where first used)."""

import pytest
from conftest import as_read, no_exception, open_page

from attention.cross import held_out
from attention.cross.model import MAX_SOURCE, padding_effect, share_written, write
from attention.cross.training import BATCH, CHECKPOINT, SEED, STEPS, load
from dashboard import glossary
from dashboard.views import cross_attention as view

PAGE = "pages/cross_attention.py"


def shown(at) -> str:
    return " ".join(as_read(m.value) for m in at.markdown).replace("**", "")


@pytest.mark.parametrize("word", ["black", "fig", "hijack"])
def test_the_page_says_what_the_model_wrote_and_every_pad_changes_nothing(word):
    at = open_page(PAGE, cross_word=word)
    no_exception(at)
    done = view.written(word)
    assert f"The model wrote {done.written} (correct), then </s>: T = {done.steps} steps" in (
        shown(at)
    )
    for pads in (1, MAX_SOURCE - len(word)):
        at.select_slider(key="cross_pad").set_value(pads).run()
        no_exception(at)
        effect = padding_effect(done, view.written(word, pads))
        assert effect.same and effect.on_pads == 0.0 and effect.change < 1e-4
        assert f"after '{word}', the model writes the same letters." in shown(at)
        assert "Largest weight on a pad, in any head at any step: exactly 0;" in shown(at)


def test_every_step_layer_and_head_reads_the_source_row_it_says():
    at = open_page(PAGE)
    no_exception(at)
    done = view.written(view.WORD_DEFAULT)
    for layer, head, t in ((0, 0, 0), (1, 1, 3), (1, 0, done.steps - 1)):
        at.button_group(key="cross_layer").set_value(layer).run()
        at.button_group(key="cross_head").set_value(head).run()
        at.select_slider(key="cross_step").set_value(t).run()
        no_exception(at)
        reads, weight = done.reads(layer, head, t)
        caption = " ".join(as_read(c.value) for c in at.caption)
        assert f"This head puts {weight:.2f} of its weight on {reads} " in caption
        titles = [m.value for m in at.markdown if m.value.startswith("**Cross-attention")]
        assert titles == [
            f"**Cross-attention, layer {layer} head {head}: T × S = {done.steps} × "
            f"{len(done.word)}**"
        ]


@pytest.mark.parametrize(
    "word, said",
    [("barn", "only the letters a to l"), ("abba", "each letter may appear once"),
     ("", "type a word")],
)  # fmt: skip
def test_a_word_the_model_cannot_read_gets_a_message_and_the_default(word, said):
    at = open_page(PAGE)
    at.text_input(key="cross_word").set_value(word).run()
    no_exception(at)
    (error,) = [as_read(e.value) for e in at.error]
    assert said in error
    assert f"The model wrote {view.written(view.WORD_DEFAULT).written}" in shown(at)


def test_a_bad_link_is_answered_not_raised():
    at = open_page(PAGE, cross_word="zzz", cross_layer="7", cross_step="99", cross_pad="-1")
    no_exception(at)
    assert at.error and "only the letters a to l" in as_read(at.error[0].value)


def test_the_alignment_sentence_is_the_tables_numbers():
    """Issue 55, items 1 and 6: the figures are on the shipped held-out words (never drawn in
    training: tests/attention/test_cross.py replays the stream), the page says how many and
    over what the score averages, and each number is the table's."""
    at = open_page(PAGE)
    no_exception(at)
    table = next(d.value for d in at.dataframe if "alignment" in d.value.columns)
    best = table.loc[table.alignment.idxmax()]
    text = shown(at)
    words = list(held_out.held_out().words)
    assert view.held_out_words() == words
    assert (int(best["decoder layer"]), int(best["head"])) == view.cross_questions.ALIGNER
    assert f"Measured on {len(words)} held-out words" in text
    assert f"none of them is among its {held_out.held_out().trained:,} different words" in text
    lengths = sorted(map(len, words))
    assert f"They have {lengths[0]} to {lengths[-1]} letters." in text
    assert "Training drew every possible word of 2 and 3 letters" in text
    assert f"it puts {best.alignment:.2f} of its weight" in text
    assert f"averaged over all {sum(lengths):,} such steps of the {len(words)} words" in text
    assert f"({best['alignment per word']:.2f} averaged over each word's steps first" in text
    assert f"reverses {best['accuracy with it knocked out']:.1%} of them" in text
    assert f"the model reverses {view.accuracy():.1%} of them" in text
    for _, row in table.iterrows():
        ablate = ((int(row["decoder layer"]), int(row["head"])),)
        assert row["accuracy with it knocked out"] == view.accuracy(ablate)


def test_the_model_card_says_where_its_weights_come_from():
    """Issue 55, item 3: "trained on this machine" was false; the weights ship, and the page
    says which file, the command that made them and the recipe, from the code's numbers."""
    at = open_page(PAGE)
    text = shown(at)
    assert "Nothing is trained on this page" in text and "trained on this machine" not in text
    assert f"attention/cross/{CHECKPOINT.name}" in text
    assert "python -m attention.cross.training" in text and held_out.COMMAND in text
    assert f"seed {SEED}, {STEPS:,} steps of {BATCH} random words of 2 to 8 letters" in text
    assert f"{STEPS * BATCH:,} draws in all, {held_out.held_out().trained:,} different" in text


@pytest.mark.parametrize("word", ["black", "ab", "abcdefghij", "lkjihgfedcba"])
def test_the_page_says_how_writing_stopped_and_what_a_longer_word_becomes(word):
    """Issue 55, items 4 and 5: the last step's token is the model's, not typed as </s>; of
    the longer words the page says what the model writes, as computed."""
    at = open_page(PAGE, cross_word=word)
    no_exception(at)
    text = shown(at)
    done = write(load(), word)
    ending = "then </s>" if done.ended else "and no </s>"
    assert f"The model wrote {done.written} " in text and ending in text
    words = held_out.longer_words()
    first = round(share_written(load(), words, held_out.first_reversed(words)) * len(words))
    assert f"for {first} of the {len(words)} it writes the word's first 8 letters backwards" in (
        text
    )
    if len(word) > 8:
        assert f"Your word has {len(word)} letters: the model wrote '{done.written}', not" in text
        assert "but its first 8 letters backwards, then </s>." in text
    else:
        assert "Your word has" not in text


def test_a_one_letter_word_is_refused_with_why():
    """Issue 55, item 4: "a" was accepted and wrote "aa…" with no end; training never showed a
    one-letter word, and the box says so."""
    at = open_page(PAGE, cross_word="a")
    no_exception(at)
    (error,) = [as_read(e.value) for e in at.error]
    assert "2 letters or more: training never showed a word of fewer" in error


@pytest.mark.parametrize("word", ["black", "abcdefghij"])
def test_lesson_13_defines_and_links_each_term_where_first_used(word):
    """Issue 55, item 8: encoder, decoder, LayerNorm (LN), MLP, greedy decoding, teacher
    forcing, <s> and </s> were used and defined nowhere. Each is in the glossary, and its
    first use on the page is a link to its entry."""
    at = open_page(PAGE, cross_word=word)
    text = "\n".join(str(m.value) for m in at.markdown)
    names = ["encoder", "decoder", "LayerNorm", "MLP", "greedy decoding", "teacher forcing",
             "start token <s>", "end token </s>"]  # fmt: skip
    for name in names:
        assert name in glossary.BY_NAME, name
        assert f"]({glossary.glossary_link(name)})" in text, name
    missing = set(glossary.unlinked_uses(text, 0)) & set(names)
    assert not missing


def test_the_exercise_notebook_checks_each_step_against_the_page():
    """Issue 44: the learner writes cross-attention in a notebook on the page's numbers. Solved,
    every check passes; as given, the first check says what to write; a classic mistake (the
    softmax over the target axis) is caught by the weights' check."""
    import nbformat
    from conftest import run_notebook
    from nbclient.exceptions import CellExecutionError

    solved = run_notebook(view.exercises("black", 1, 1, solved=True))
    printed = " ".join(
        out.get("text", "") for cell in solved.cells if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )  # fmt: skip
    assert printed.count(": right (largest difference") == 3
    with pytest.raises(CellExecutionError, match="scaled: write it in the cell above"):
        run_notebook(view.exercises("black", 1, 1))
    wrong = view.exercises("fig", 0, 0, solved=True)
    for cell in wrong.cells:
        cell.source = cell.source.replace("softmax(scaled, dim=-1)", "softmax(scaled, dim=0)")
    with pytest.raises(CellExecutionError, match="weights: off by"):
        run_notebook(nbformat.from_dict(wrong))
