"""Issue 26: the Shakespeare GPT as a source of every lesson (the student's text, one layer of
a real model, characters on the axes) and lesson 12, where the model reads the student's text.
Numbers on the pages are checked against the model's own forward; bad text gets a message."""

import pytest
import torch
from conftest import LESSON_PAGES, no_exception, open_page, said, table

from attention.lm.corpus import encode
from attention.lm.reading import copy_cost
from attention.lm.training import load
from dashboard import lessons
from dashboard.controls import Settings
from dashboard.views import real_model

PAGE = "pages/real_model.py"
TEXT = "To be, or not to be: that is the question."


@pytest.fixture(scope="module")
def model():
    return load().model


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_every_lesson_reads_the_students_text_through_the_model(page):
    at = open_page(page, src="shakespeare", text=TEXT, layer="1")
    no_exception(at)
    assert not [e.value for e in at.error]


@pytest.mark.parametrize("layer", [0, 1])
def test_the_source_is_the_models_own_layer_with_characters_on_the_axes(model, layer):
    lesson = lessons.computed(Settings(source="shakespeare", text=TEXT, layer=layer))
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


@pytest.mark.parametrize("top_p", ["0.5", "0.9"])
def test_lesson_12_top_p_says_how_many_characters_can_be_drawn(model, top_p):
    from attention.lm.generate import next_distribution

    at = open_page(PAGE, rm_text=TEXT, rm_topp=top_p, rm_temp="1.5", rm_topk="20")
    no_exception(at)
    ids = encode(TEXT)
    with torch.no_grad():
        logits = model(ids[None]).logits[0, -1]
    kept = int((next_distribution(logits, 1.5, 20, float(top_p)) > 0).sum())
    assert said(at, f"Top-p {top_p} then keeps the likeliest", f"{kept} character")


FIGURES = {"held_out": 1.516, "bigram": 2.482}


@pytest.mark.parametrize(
    "first, second, words",
    [
        # random symbols: both copies far above the bigram, the second a little cheaper (issue 41)
        (13.45, 12.97, ["above the bigram model's 2.48", "the second is **0.48 nats cheaper**"]),
        # a learner's sentence at the bigram's level: the second costs more
        (
            2.37,
            2.43,
            [
                "between the model's held-out average 1.52 and the bigram model's 2.48",
                "costs 0.06 nats more",
            ],
        ),
        # the difference of the numbers as shown: 3.61 and 0.25 are 3.36 apart (issue 41 review)
        (3.6142, 0.2457, ["the first copy costs 3.61", "the second 0.25", "**3.36 nats cheaper**"]),
        # 0.39 cheaper is said as cheaper, never "no better the second time"
        (2.14, 1.75, ["the second is **0.39 nats cheaper**"]),
        (1.24, 1.24, ["below the model's held-out average 1.52", "the second costs the same"]),
    ],
)
def test_copy_verdict_says_what_the_two_costs_show(first, second, words):
    verdict = real_model.copy_verdict(copy_cost(first, second), FIGURES)
    assert all(w in verdict for w in words), verdict
    assert "copies" not in verdict and "English" not in verdict  # no guess at why


def test_copying_summary_holds_on_the_fixed_texts_and_only_when_they_show_it():
    """The sentence "copies the strings of letters ... and not the lines of Shakespeare" is shown
    only when the fixed rows show it; on the shipped model they do (the name 3.72 -> 1.07 nats,
    random letters 4.11 -> 0.47; Hamlet's and Juliet's lines within 0.1)."""
    figures = real_model.model_figures()
    texts = {**real_model.UNPREDICTABLE, **real_model.ORDINARY}
    costs = {name: real_model.doubled(text).cost() for name, text in texts.items()}
    assert min(costs[n].saved for n in real_model.UNPREDICTABLE) >= real_model.COPIED_NATS
    assert max(abs(costs[n].saved) for n in real_model.ORDINARY) < real_model.ORDINARY_NATS
    summary = real_model.copying_summary(costs, figures)
    assert summary is not None and "copies the strings of letters" in summary
    assert "cost 3.72 and 4.11 nats a character the first time" in summary
    assert "2.65 to 3.64 less the second time" in summary
    assert "Shakespeare cost 0.04 to 0.07 more the second time" in summary

    def changed(name: str, first: float, saved: float) -> dict:
        return costs | {name: copy_cost(first, first - saved)}

    assert real_model.copying_summary(changed("random letters", 4.11, 0.2), figures) is None
    assert real_model.copying_summary(changed("Hamlet's line", 1.76, 0.7), figures) is None
    # it could predict it
    assert real_model.copying_summary(changed("a made-up name", 2.0, 1.5), figures) is None
    fewer = {name: costs[name] for name in list(costs)[:3]}
    assert real_model.copying_summary(fewer, figures) is None


def test_twice_row_shows_the_costs_and_the_difference_of_the_numbers_shown():
    """Lesson 12's table before issue 54 moved its numbers to attention/lm/reading.py."""
    row = real_model.twice_row("a made-up name", real_model.doubled(real_model.MADE_UP))
    assert row == {
        "twice": "a made-up name", "1st copy": "3.72", "2nd copy": "1.07",
        "2nd cheaper by": "2.65", "induction head": "L1H1 0.51",
    }  # fmt: skip
    assert real_model.twice_row("one letter", real_model.doubled("a")) is None


@pytest.mark.parametrize("text", [real_model.MADE_UP, real_model.TEXT_DEFAULT, TEXT])
def test_induction_caption_is_the_heads_weight_on_the_target(model, text):
    """The map's caption is the head's mean weight on the induction target over the rows that
    have one, recomputed here from the model's weights on the text twice."""
    doubled = real_model.doubled(text)
    best = max(doubled.scores, key=lambda s: s.scores["induction"])
    assert doubled.induction_head is best
    labels = real_model.position_labels(doubled.glyphs)
    ids = encode(text)[:32]
    doubled_ids = torch.cat([ids, ids]).tolist()
    w = doubled.weights[best.layer][best.head]
    on_target = []
    for i, token in enumerate(doubled_ids):
        targets = [j + 1 for j in range(i) if doubled_ids[j] == token]
        if targets:
            on_target.append(float(sum(w[i, j] for j in targets)))
    expected = sum(on_target) / len(on_target)
    caption = real_model.induction_caption("x", labels, best)
    assert f"**{expected:.2f}**" in caption


def test_lesson_12_text_twice_on_the_page():
    at = open_page(PAGE)
    no_exception(at)
    assert said(at, "For your text, the first copy costs", "the second costs", "nats more")
    assert said(at, "copies the strings of letters, the kind it was trained to copy")
    assert said(at, "Zorblax of Quintavia” written twice", "of its weight there, on average")
    frame = next(d.value for d in at.dataframe if "twice" in d.value.columns)
    assert list(frame["twice"]) == ["your text", "a made-up name", "random letters",
                                    "Hamlet's line", "Juliet's line"]  # fmt: skip
    assert said(at, "The texts: a made-up name, “Zorblax of Quintavia”; random letters, ")


def test_model_card_counts_what_it_trained_on_and_its_parameters(model):
    from attention.lm.corpus import TRAIN_CHARS, split
    from attention.lm.model import parameter_groups

    assert TRAIN_CHARS == len(split("train")) == 1_003_854
    parts = parameter_groups(model)
    assert sum(parts.values()) == sum(p.numel() for p in model.parameters()) == 420_608
    assert parts["attention"] == 2 * 4 * 128 * 128  # W_q, W_k, W_v, W_o, no biases
    assert parts["output"] == 65 * 128  # untied, no bias
    at = open_page(PAGE)
    no_exception(at)
    assert said(at, "first 90 % of tiny Shakespeare (1,003,854 of its 1,115,394 characters")
    assert said(
        at,
        f"without biases: {parts['attention']:,}",
        f"128 → 512 → 128 with biases: {parts['mlp']:,}",
    )
    assert not said(at, "rewards copying")


@pytest.mark.parametrize(
    "text, message",
    [("", "nothing to read"), ("ñññ", "nothing to read"), ("é" + "a" * 70, "dropped")],
)
def test_lesson_12_bad_text(text, message):
    at = open_page(PAGE, rm_text=text)
    no_exception(at)
    assert said(at, message)


@pytest.mark.parametrize("first", ["", "To be.", "a" * 200])
def test_lesson_12_a_new_text_starts_at_its_last_position(first):
    """Issue 42, item 12: after an empty text then a 489-character one the position slider
    stayed at 56 of 63; every new text now opens at its own last position, and a position the
    learner picks on a text stays while the text does."""
    at = open_page(PAGE, rm_text=first)
    no_exception(at)
    long_text = ("My cat sleeps on the warm laptop every single morning. " * 9)[:489]
    at.text_area(key="rm_text").set_value(long_text).run()
    no_exception(at)
    picker = at.select_slider(key="rm_pos")
    assert picker.value == len(picker.options) - 1
    picker.set_value(3).run()
    at.select_slider(key="rm_temp").set_value(at.select_slider(key="rm_temp").options[0]).run()
    assert at.select_slider(key="rm_pos").value == 3  # the same text: the pick stays
    at.text_area(key="rm_text").set_value("To be, or not.").run()
    picker = at.select_slider(key="rm_pos")
    assert picker.value == len(picker.options) - 1 == len("To be, or not.") - 1


def test_lesson_12_writes_only_when_asked_and_with_the_sliders_settings(model):
    """Issue 40: sampling on every move of the sampler's sliders saturated one core under a
    class; the 120 characters are written when Write is pressed, with the settings shown, and
    a move of a slider asks for Write again."""
    from attention.lm.generate import sample

    at = open_page(PAGE, rm_temp="1.5", rm_topk="20", rm_topp="0.9")
    no_exception(at)
    assert said(at, "Press Write to sample 120 characters")
    at.button(key="rm_write").click().run()
    no_exception(at)
    prompt = real_model.TEXT_DEFAULT
    seeded = torch.Generator().manual_seed(real_model.SAMPLE_SEED)
    expected = sample(model, prompt, 120, temperature=1.5, top_k=20, top_p=0.9, generator=seeded)
    assert [c.value.strip() for c in at.code] == [expected.new.strip()]  # st.code trims ends
    at.select_slider(key="rm_temp").set_value(0.5).run()
    assert not at.code and said(at, "Press Write to sample 120 characters")
