"""Issue 30: a self-learner alone. Each item's test (items 1 and 7's are in
test_questions_stay_put.py and test_worked_example.py)."""

import pytest
from conftest import LESSON_PAGES, before_check, no_exception, open_page, printed


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


def test_item_4_the_shuffle_tables_say_they_have_no_mask_while_the_causal_switch_is_on():
    """Lesson 9's shuffle tables are computed without a mask while the sidebar's causal switch
    is on (the default), and nothing said so."""
    at = open_page("pages/position.py")
    no_exception(at)
    assert at.sidebar.toggle(key="causal").value
    words = [str(m.value) for m in at.markdown]
    assert any("**without any mask**" in w for w in words)
    assert "**Attn(X), no mask**" in words and "**Attn(P X), no mask**" in words


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_item_5_no_table_prints_none_for_an_empty_cell(page):
    """Given-value tables printed "None" where the question says the blocked keys are empty
    (lessons 3, 7, 8): every table with an empty cell says what it shows there."""
    at = open_page(page)
    no_exception(at)
    for frame in at.dataframe:
        if frame.value.isna().any(axis=None):
            assert frame.proto.HasField("placeholder"), (page, frame.value.head(2))
