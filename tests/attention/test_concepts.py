"""Issue 45: the concept check's two forms are parallel (the same concept and misconceptions in
each item, other numbers), each wrong choice is what its misconception computes, and the class
figures equal hand computations, undefined ones said, never a division by zero."""

from __future__ import annotations

import math
import re

import pytest

from attention.concepts import (
    BUG_KEYS,
    CONCEPTS,
    FORMS,
    MISCONCEPTIONS,
    gain,
    misconception_title,
    normalized_change,
    point_biserial,
    score,
)


def test_the_two_forms_are_parallel_and_their_choices_distinct():
    assert len(FORMS["A"]) == len(FORMS["B"]) == len(CONCEPTS) == 10
    for a, b in zip(FORMS["A"], FORMS["B"], strict=True):
        assert (a.number, a.concept) == (b.number, b.concept)
        named = [sorted(k for _, keys in item.wrong for k in keys) for item in (a, b)]
        assert named[0] == named[1] and len(a.wrong) == len(b.wrong) >= 3, a.number
        assert a.prompt != b.prompt and a.right != b.right, a.number
        for item in (a, b):
            assert len(set(item.choices)) == 1 + len(item.wrong) and item.right in item.choices
            for choice, keys in item.wrong:
                assert item.diagnosis(choice) == keys
                assert all(misconception_title(k) for k in keys)
            assert item.diagnosis(item.right) == ()


def kind(choice: str) -> str:
    """What a choice looks like to a student guessing by elimination: a decimal somewhere, whole
    numbers only, or words."""
    if re.search(r"\d\.\d", choice):
        return "decimal"
    return "whole" if re.search(r"\d", choice) else "words"


def test_concepts_both_forms_of_an_item_have_choices_of_the_same_shape():
    """Issue 55, item 13: item 7's form A had two decimal choices where form B had none, and
    item 10's form B printed only its right answer with decimals. In every item the right
    choice looks the same in both forms, and so do the wrong ones, taken together."""
    for a, b in zip(FORMS["A"], FORMS["B"], strict=True):
        assert kind(a.right) == kind(b.right), a.number
        shapes = [sorted(kind(choice) for choice, _ in item.wrong) for item in (a, b)]
        assert shapes[0] == shapes[1], (a.number, shapes)


def test_concepts_each_wrong_choice_names_the_mistake_that_gives_it():
    """Issue 55, items 10-12: item 7's d_k (no square root) was labelled as giving the variance
    where a spread is asked (item 2's misconception); item 8's "average of every row" as
    averaging the values evenly (item 10's); item 9 offered no count of the causal triangle."""
    for form, (C, H), (T, heads) in (("A", (64, 4), (10, 4)), ("B", (36, 4), (6, 2))):
        d_k = FORMS[form][6]
        assert dict(d_k.wrong)[str(C // H)] == ("scale_by_d_k",)
        assert "variance_as_sd" not in {k for _, keys in d_k.wrong for k in keys}
        position = FORMS[form][7]
        assert dict(position.wrong)["the average of every row"] == ("order_blurs",)
        cache = FORMS[form][8]
        assert dict(cache.wrong)[str(T * (T + 1) // 2 * heads)] == ("cache_causal_weights",)
        assert dict(cache.wrong)[str(T * T * heads)] == ("cache_weights",)
    assert misconception_title("scale_by_d_k") == "dividing by d_k itself, not by its square root"


def test_concepts_name_each_listed_misconception_and_no_other():
    """A wrong choice names a misconception of the course's list or a bug of the catalogue the
    check lists (BUG_KEYS); each listed one is named by some choice, and no other is titled."""
    from attention.bugs import BUGS

    named = {k for form in FORMS.values() for item in form for _, keys in item.wrong for k in keys}
    assert named == set(MISCONCEPTIONS) | set(BUG_KEYS)
    assert set(BUG_KEYS) <= set(BUGS)
    assert misconception_title("mask_after_softmax") == BUGS["mask_after_softmax"].title
    with pytest.raises(KeyError, match="no misconception"):
        misconception_title("dropout_at_eval")  # a bug of the catalogue no choice names


@pytest.mark.parametrize("form", ["A", "B"])
def test_a_numeric_items_choices_are_what_each_mistake_computes(form):
    score_item, scale_item, axis_item = FORMS[form][:3]
    q, k = ((1, 2), (3, -1)) if form == "A" else ((2, 2), (1, -3))
    dot = q[0] * k[0] + q[1] * k[1]
    assert score_item.right == str(dot)
    assert dict(score_item.wrong)[f"{dot / math.sqrt(2):.2f}"] == ("score_scaled",)
    d_k = 16 if form == "A" else 64
    assert scale_item.right == str(int(math.sqrt(d_k)))
    assert dict(scale_item.wrong)[str(d_k)] == ("variance_as_sd",)
    # form A: rows (ln 4, 0), (ln 2, 0), query 1 on key 0: 2/3 by the row, 2/(4+2) = 1/3 down
    # the column, 2/(4+1+2+1) = 1/4 over every entry
    if form == "A":
        assert axis_item.right == "0.67"
        assert dict(axis_item.wrong) == {
            "0.33": ("softmax_over_queries",), "0.25": ("softmax_all_entries",),
            "1": ("hard_attention",),
        }  # fmt: skip


def test_a_student_scores_the_share_of_a_forms_items_right():
    items = FORMS["A"]
    answers = {item.number: item.right for item in items[:7]}
    answers[8] = items[7].wrong[0][0]
    assert score("A", answers) == 70.0


def test_the_figures_of_a_class_of_three_by_hand():
    """Before 20, 50, 80 %; after 60, 50, 90 %. Means 50 and 66.67: <g> = 16.67 / 50 = 1/3.
    c: 40/80 = 0.5, 0, 10/20 = 0.5, mean 1/3. Differences 40, 0, 10: mean 16.67, sample sd
    20.82, d = 0.801; its interval d ± 1.96 √(1/3 + d²/6)."""
    figures = gain([(20, 60), (50, 50), (80, 90)])
    assert figures.students == 3 and figures.c_left_out == 0
    assert figures.pre == pytest.approx(50) and figures.post == pytest.approx(200 / 3)
    assert figures.g == pytest.approx(1 / 3)
    assert figures.c == pytest.approx(1 / 3)
    sd = math.sqrt(((40 - 50 / 3) ** 2 + (50 / 3) ** 2 + (10 - 50 / 3) ** 2) / 2)
    assert figures.d == pytest.approx((50 / 3) / sd) == pytest.approx(0.8006, abs=1e-4)
    half = 1.96 * math.sqrt(1 / 3 + figures.d**2 / 6)
    assert figures.d_interval == pytest.approx((figures.d - half, figures.d + half))
    # pooled: sd before 30, sd after √433.3 = 20.82; √((900 + 433.3) / 2) = 25.82; 16.67 / 25.82
    assert figures.d_pooled == pytest.approx((50 / 3) / math.sqrt((900 + 1300 / 3) / 2))
    assert figures.d_pooled == pytest.approx(0.6455, abs=1e-4)


def test_a_student_who_drops_and_one_at_100_before():
    assert normalized_change(50, 30) == pytest.approx(-0.4)  # loss / pre
    assert normalized_change(100, 90) == pytest.approx(-0.1)
    assert normalized_change(100, 100) is None and normalized_change(0, 0) is None
    assert normalized_change(40, 40) == 0.0
    figures = gain([(50, 30), (100, 100), (60, 80)])
    assert figures.c_left_out == 1  # the student at 100 both times
    assert figures.c == pytest.approx((-0.4 + 20 / 40) / 2)


def test_a_class_right_on_everything_before_has_no_gain_and_says_why():
    figures = gain([(100, 100), (100, 90)])
    assert figures.g is None and "undefined" in figures.why
    assert gain([]).g is None and gain([]).why == "no student took both"
    same = gain([(20, 30), (50, 60)])  # every student moved by 10: no spread, no d
    assert same.d is None and "same amount" in same.why
    assert gain([(20, 30)]).d is None


def test_point_biserial_by_hand():
    """Right on the item: rests 3 and 2 (mean 2.5); wrong: 1 and 0 (mean 0.5); p = 0.5; the
    rests' population sd √1.25: r = 2 / √1.25 × 0.5 = 0.894."""
    assert point_biserial([True, True, False, False], [3, 2, 1, 0]) == pytest.approx(0.8944, 1e-4)
    assert point_biserial([True, True], [3, 2]) is None  # everyone right: no spread


def test_the_docs_list_every_item_with_what_each_wrong_choice_diagnoses():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "concept_check.md").read_text()
    for form in ("A", "B"):
        for item in FORMS[form]:
            assert f"**Form {form}** (" in doc and item.prompt in doc, item.prompt
            assert f"  - right: `{item.right}`" in doc
            for choice, keys in item.wrong:
                line = f"  - `{choice}`: " + "; ".join(misconception_title(k) for k in keys)
                assert line in doc, line
