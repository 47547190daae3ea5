"""Issue 30: a self-learner alone. Each item's test (items 1 and 7's are in
test_questions_stay_put.py and test_worked_example.py)."""

import pytest
from conftest import before_check, no_exception, open_page, printed


@pytest.mark.parametrize(
    "page, asked, needed",
    [
        # lesson 2's question 3 asks for the shape after q_all.view(B, T, H, C // H)
        # .transpose(1, 2): B, view and transpose were only in the objectives
        (
            "pages/multi_head.py",
            "q_all.view(B, T, H, C // H).transpose(1, 2)",
            ("view(B, T, H, C // H)", ".transpose(1, 2)", "batch"),
        ),
        # lesson 9's question 3 asks for a rotated q₀: the formula was only in its solution
        ("pages/position.py", "What is the rotated q₀?", ("q₀ cos θ − q₁ sin θ",)),
    ],
)
def test_item_2_what_a_question_needs_is_taught_above_it(page, asked, needed):
    at = open_page(page)
    no_exception(at)
    assert any(asked in str(text.value) for text in at.text)  # the question is asked
    shown = " ".join(text for element in before_check(at) for text in printed(element))
    assert [term for term in needed if term not in shown] == []
