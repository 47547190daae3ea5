"""Lesson 4 through AppTest: the default d_k shows the collapse the page promises, and the
sentence about it is made from the numbers in the table above it."""

from conftest import as_read, no_exception, open_page

from attention.scaling import ONE_HOT, random_scores, softmax_saturation
from dashboard.render.tables import format_number

PAGE = "pages/why_sqrt_dk.py"
KEYS = 8


def said(at, *words: str) -> bool:
    return any(all(w in as_read(e.value) for w in words) for e in (*at.markdown, *at.caption))


def test_why_sqrt_dk_default_d_k_collapses_the_unscaled_softmax():
    at = open_page(PAGE)
    no_exception(at)
    d_k = at.select_slider(key="dk").value
    summary = at.dataframe[1].value
    raw, scaled = summary.iloc[0], summary.iloc[1]
    assert raw["max weight"] >= ONE_HOT  # one-hot: the promise holds at the default
    assert raw["gradient size ‖J‖"] < 0.01 * scaled["gradient size ‖J‖"]
    assert said(at, f"At d_k = {d_k}", "without scaling", format_number(raw["max weight"]))
    assert said(at, format_number(raw["gradient size ‖J‖"]),
                format_number(scaled["gradient size ‖J‖"]))  # fmt: skip


def test_why_sqrt_dk_sentence_says_when_the_softmax_has_not_collapsed():
    """d_k = 64 with seed 0 leaves the unscaled softmax at 0.81: the page says so instead of
    promising a collapse the table does not show."""
    at = open_page(PAGE)
    at.select_slider(key="dk").set_value(64).run()
    no_exception(at)
    raw = softmax_saturation(random_scores(KEYS, 64, 0), 1.0)
    assert raw.max_weight < ONE_HOT
    assert said(at, "not collapsed", format_number(raw.max_weight))
    assert not said(at, "has collapsed onto one key")
