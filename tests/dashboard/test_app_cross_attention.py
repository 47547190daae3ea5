"""Lesson 13 through AppTest: every control of its own moved (the word, the layer and head,
the step, the pads), bad words and bad links answered with a message, and the page's sentences
computed from the model's numbers at the default and two other words."""

import pytest
from conftest import as_read, no_exception, open_page

from attention.cross.model import MAX_SOURCE, padding_effect
from dashboard.views import cross_attention as view

PAGE = "pages/cross_attention.py"


def shown(at) -> str:
    return " ".join(as_read(m.value) for m in at.markdown).replace("**", "")


@pytest.mark.parametrize("word", ["black", "fig", "hijack"])
def test_the_page_says_what_the_model_wrote_and_every_pad_changes_nothing(word):
    at = open_page(PAGE, cross_word=word)
    no_exception(at)
    done = view.written(word)
    assert f"The model wrote {done.written} (correct)." in shown(at)
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
    at = open_page(PAGE)
    no_exception(at)
    table = next(d.value for d in at.dataframe if "alignment" in d.value.columns)
    best = table.loc[table.alignment.idxmax()]
    text = shown(at)
    assert (int(best["decoder layer"]), int(best["head"])) == view.cross_questions.ALIGNER
    assert f"it puts {best.alignment:.2f} of its weight" in text
    assert f"reverses {best['accuracy with it knocked out']:.0%} of them" in text
    assert f"reverses {view.accuracy():.0%}" in text


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
