"""Issue 26: the Shakespeare GPT as a source of every lesson (the student's text, one layer of
a real model, characters on the axes) and lesson 12, where the model reads the student's text.
Numbers on the pages are checked against the model's own forward; bad text gets a message."""

import pytest
import torch
from conftest import LESSON_PAGES, as_read, no_exception, open_page, table

from attention.lm.corpus import encode
from attention.lm.training import load
from dashboard import lessons
from dashboard.controls import Settings
from dashboard.views import real_model

PAGE = "pages/real_model.py"
TEXT = "To be, or not to be: that is the question."


@pytest.fixture(scope="module")
def model():
    return load().model


def texts(at) -> list[str]:
    shown = (*at.markdown, *at.caption, *at.info, *at.warning, *at.error)
    return [as_read(m.value) for m in shown]


def said(at, *fragments: str) -> bool:
    return any(all(f in text for f in fragments) for text in texts(at))


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_every_lesson_reads_the_students_text_through_the_model(page):
    at = open_page(page, src="shakespeare", text=TEXT, layer="1")
    no_exception(at)
    assert not [e.value for e in at.error]


@pytest.mark.parametrize("layer", [0, 1])
def test_the_source_is_the_models_own_layer_with_characters_on_the_axes(model, layer):
    lesson = lessons.lesson(Settings(source="shakespeare", text=TEXT, layer=layer))
    ids = encode(TEXT)
    own = model(ids[None]).traces[layer]
    torch.testing.assert_close(lesson.trace.weights, own.weights[0])
    torch.testing.assert_close(lesson.trace.output, own.output[0])
    assert lesson.labels[:3] == ["T", "o#1", "␣#1"]
    assert (lesson.settings.d_model, lesson.settings.n_heads) == (128, 4)
    at = open_page("pages/step_by_step.py", src="shakespeare", text=TEXT, layer=str(layer))
    no_exception(at)
    x = table(at.dataframe[0])
    assert list(x.index[:3]) == ["T", "o#1", "␣#1"]
    assert said(at, f"X is layer {layer}'s input", "trained on tiny Shakespeare")


def test_the_source_says_what_it_did_with_bad_text():
    at = open_page("pages/step_by_step.py", src="shakespeare", text="café ünïcode")
    no_exception(at)
    assert said(at, "were dropped")
    at = open_page("pages/step_by_step.py", src="shakespeare", text="€€€")
    no_exception(at)
    assert said(at, "nothing to read")
    at = open_page("pages/step_by_step.py", src="shakespeare", text="x" * 80)
    no_exception(at)
    assert said(at, "the first 64 are used")


def test_lesson_12_shows_every_head_named_from_its_scores(model):
    at = open_page(PAGE)
    no_exception(at)
    read = real_model.reading(real_model.TEXT_DEFAULT)
    assert len(read.scores) == 8
    for score in read.scores:
        assert said(at, real_model.role_words(score))
    # the large head's sentence, at two texts, from the model's own weights
    for text in (real_model.TEXT_DEFAULT, TEXT):
        at = open_page(PAGE, rm_text=text, rm_layer="1", rm_head="2")
        no_exception(at)
        ids = encode(text)
        with torch.no_grad():  # numbers to compare, not to train
            weights = model(ids[None]).traces[1].weights[0, 2]
        last = len(ids) - 1
        key = int(weights[last].argmax())
        assert said(at, f"gives key {key}", f"{float(weights[last, key]):.2f}")


def test_lesson_12_next_character_and_knock_out(model):
    at = open_page(PAGE, rm_text=TEXT, rm_temp="0.5", rm_topk="5", rm_off="layer 1 · head 0")
    no_exception(at)
    ids = encode(TEXT)
    with torch.no_grad():
        full = torch.nn.functional.cross_entropy(model(ids[None]).logits[0, :-1], ids[1:])
        knocked = model(ids[None], {(1, 0)}).logits[0, :-1]
        off = torch.nn.functional.cross_entropy(knocked, ids[1:])
    assert said(at, f"{float(full):.3f} → {float(off):.3f}")
    assert said(at, "top-k 5 keeps the 5 likeliest")


def test_lesson_12_text_twice_says_where_the_model_copies():
    """A made-up name is copied (measured: 4.2 -> 0.9 nats a character); a line of Shakespeare
    the model can already predict is not, and the page says which from the two losses."""
    at = open_page(PAGE)
    no_exception(at)
    _, first, second, _, _ = real_model.doubled(real_model.MADE_UP)
    assert float(first.mean()) - float(second.mean()) > 1.0
    assert said(at, "For a made-up name, the second copy costs", "nats less", "it copies")
    _, first, second, _, _ = real_model.doubled(real_model.TEXT_DEFAULT)
    assert abs(float(first.mean()) - float(second.mean())) <= 0.5
    assert said(at, "For your text, both copies cost about the same")


@pytest.mark.parametrize(
    "text, message",
    [("", "nothing to read"), ("ñññ", "nothing to read"), ("é" + "a" * 70, "dropped")],
)
def test_lesson_12_bad_text(text, message):
    at = open_page(PAGE, rm_text=text)
    no_exception(at)
    assert said(at, message)
