"""Lesson 2 through AppTest: the page reads right for a one-head layer (the trained induction
model's layer 1) as well as for several heads."""

from conftest import as_read, no_exception, open_page

PAGE = "pages/multi_head.py"


def texts(at) -> list[str]:
    return [as_read(e.value) for e in (*at.markdown, *at.caption)]


def said(at, *words: str) -> bool:
    return any(all(word in text for word in words) for text in texts(at))


def test_multi_head_one_head_trained_layer_says_the_split_is_the_whole_of_q():
    at = open_page(PAGE, src="trained", task="induction", layer="1")
    no_exception(at)
    assert not said(at, "1 consecutive groups")
    assert not said(at, "and so on")
    assert said(at, "one head", "the whole of Q", "d_k = C = 32")
    assert said(at, "Layer 0 of this model has 2 heads")  # where to see a split
    assert not said(at, "All heads share one colour scale")


def test_multi_head_one_head_random_layer_points_to_the_heads_control():
    at = open_page(PAGE, heads="1")
    no_exception(at)
    assert said(at, "one head", "the whole of Q")
    assert said(at, "Heads H", "sidebar")


def test_multi_head_two_heads_still_cut_q_into_groups():
    at = open_page(PAGE, src="trained", task="induction", layer="0")
    no_exception(at)
    assert said(at, "cuts Q's columns into 2 consecutive groups", "d_k = C / H = 16")
    assert said(at, "All heads share one colour scale")
