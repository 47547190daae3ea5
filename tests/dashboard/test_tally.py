"""The projector's tally (issue 28, item 7): answers the grader takes as one are one bar, and
the percentages add up to 100."""

from types import SimpleNamespace

import pytest

from dashboard.classroom.asking import grouped, is_right
from dashboard.render.tally import percentages, tally_frame


def numeric(answer: str):
    return SimpleNamespace(choices=None, answer=answer, prompt="q")


def test_tally_right_answers_typed_two_ways_are_one_green_bar():
    question = numeric("0.17604")
    bars = grouped(question, {"0.176": 2, "0.17604": 1, "0.19": 1, "0.5": 3, "0.503": 1})
    assert bars == {"0.17604": 3, "0.19": 1, "0.5": 4}  # 0.176 is within 0.005: right
    frame = tally_frame(bars, 8, lambda value: is_right(question, value))
    assert list(frame.verdict) == ["right", "wrong", "wrong"]


def test_tally_groups_are_what_the_grader_grades_alike():
    question = numeric("0.17604")
    counts = {"0.176": 2, "0.17604": 1, "0.18": 1, "0.5": 3, "0.503": 1, "0.19": 2}
    bars = grouped(question, counts)
    for value in counts:
        bar = next(b for b in bars if abs(float(b) - float(value)) <= 0.005 + 1e-9)
        assert is_right(question, value) == is_right(question, bar)
    assert sum(bars.values()) == sum(counts.values())


def test_tally_choices_are_left_as_they_are():
    question = SimpleNamespace(choices=("a", "b"), answer="a", prompt="q")
    assert grouped(question, {"a": 1, "b": 0}) == {"a": 1, "b": 0}


@pytest.mark.parametrize("counts", [[1, 1, 1], [2, 2, 2, 1], [1, 0, 0], [7, 5, 3, 3, 1], [0, 0]])
def test_tally_percentages_add_up_to_100(counts):
    shares = percentages(counts)
    assert sum(shares) == (100 if sum(counts) else 0)
    assert all(
        abs(s - 100 * n / max(sum(counts), 1)) < 1 for s, n in zip(shares, counts, strict=True)
    )
