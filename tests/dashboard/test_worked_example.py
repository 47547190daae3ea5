"""The classic 3-token worked example, checked against plain matrix arithmetic on its weights and
against the digits the tutorial prints."""

import math

import torch
from torch.testing import assert_close

from attention import worked_example


def by_hand(x, W_q, W_k, W_v):
    """The tutorial's arithmetic, written out: nothing from the package but the weights."""
    q = x @ W_q.T
    k = x @ W_k.T
    v = x @ W_v.T
    sims = q @ k.T
    scaled = sims / math.sqrt(k.shape[1])
    blocked = torch.tril(torch.ones(3, 3)) == 0
    masked = scaled.masked_fill(blocked, -1e9)
    weights = torch.exp(masked - masked.max(dim=1, keepdim=True).values)
    weights = weights / weights.sum(dim=1, keepdim=True)
    return dict(q=q, k=k, v=v, scores=sims, scaled=scaled, masked=masked, weights=weights,
                output=weights @ v)  # fmt: skip


def test_worked_example_every_stage_equals_hand_arithmetic():
    ex = worked_example()
    with torch.no_grad():
        trace = ex.layer(ex.embedded.x, ex.mask, mask_value=ex.mask_value)
        expected = by_hand(ex.embedded.x, ex.layer.W_q.weight, ex.layer.W_k.weight,
                           ex.layer.W_v.weight)  # fmt: skip
    for name, value in expected.items():
        got = trace.stage(name)
        if got.ndim == 3:  # (H, T, .) with H = 1
            got = got[0]
        assert_close(got, value, msg=name)


def test_worked_example_reproduces_the_printed_output():
    ex = worked_example()
    with torch.no_grad():
        output = ex.layer(ex.embedded.x, ex.mask, mask_value=ex.mask_value).output
        unmasked = ex.layer(ex.embedded.x).output
    assert printed(output) == [["0.6038", "0.7434"], ["-0.0062", "0.6072"], ["3.4989", "2.2427"]]
    assert printed(unmasked) == [["1.0100", "1.0641"], ["0.2040", "0.7057"], ["3.4989", "2.2427"]]


def printed(t):
    """The digits torch prints for this tensor (4 decimals)."""
    return [[f"{value:.4f}" for value in row] for row in t.tolist()]


def test_worked_example_preset_settings():
    ex = worked_example()
    assert ex.layer.d_model == 2 and ex.layer.n_heads == 1 and ex.layer.W_o is None
    assert ex.mask == "causal" and ex.mask_value == -1e9
    assert ex.embedded.x.tolist() == torch.tensor(
        [[1.16, 0.23], [0.57, 1.36], [4.41, -2.16]]).tolist()  # fmt: skip


def test_worked_example_with_edited_encodings_keeps_weights():
    base, edited = worked_example(), worked_example(torch.ones(3, 2))
    assert torch.equal(base.layer.W_q.weight, edited.layer.W_q.weight)
    assert torch.equal(edited.embedded.x, torch.ones(3, 2))


def hand_lesson():
    from dashboard.controls import Settings
    from dashboard.lessons import computed

    return computed(Settings(source="worked"))


def test_worked_by_hand_accepts_what_the_printed_tables_give():
    """The trial: z_2[0] worked from the printed 4-decimal numbers is 3.4991, the exact value
    3.4989; both are right under the one grader, and a number off by more than the printing
    explains is not. The working is the printed numbers' own."""
    from attention.check_yourself.worked_example import worked_example_by_hand
    from attention.drills import grade

    lesson = hand_lesson()
    output = worked_example_by_hand(lesson.trace, lesson.labels)[2]
    assert output.answer_text == "3.4989" and output.working[0].endswith("= 3.4991")
    assert grade(output, "3.4991").status == "right"
    assert grade(output, "3,4989").status == "right"
    assert grade(output, "3.5100").status == "wrong"


HAND = "By hand, before the tables that hold the answers"


def test_worked_by_hand_answers_are_not_on_the_page_before_their_questions():
    """Issue 30, item 7: By hand asked for −0.4725, 0.3606 and 3.4989, each printed in a table
    just above it. The questions now come after the scores, before the stages holding them."""
    from conftest import elements, open_page, printed

    from attention.check_yourself.worked_example import worked_example_by_hand

    at = open_page("pages/worked_example.py")
    lesson = hand_lesson()
    answers = [q.answer_text for q in worked_example_by_hand(lesson.trace, lesson.labels)]
    assert answers == ["-0.4725", "0.3606", "3.4989"]
    above = []
    for element in elements(at.main):
        if element.type == "header" and element.value == HAND:
            break
        above.extend(printed(element))
    else:
        raise AssertionError("no By hand header")
    assert not [a for a in answers if any(a in text for text in above)]
    stages = [h.value for h in at.header]
    assert stages.index(HAND) < stages.index("The rest of the layer")


def test_worked_weight_tables_multiply_as_shown():
    """Lesson 5 shows W_q as the formula Q = X W_q uses it: X's printed table times W_q's
    printed table gives Q's printed table (to the rounding of 4 decimals)."""
    from conftest import open_page

    at = open_page("pages/worked_example.py")
    tables = [df.value for df in at.dataframe]
    w_q = next(t for t in tables if t.columns[0].startswith("in"))
    W_q = torch.tensor(w_q.iloc[:, 1:].to_numpy(dtype=float))
    example = worked_example()
    x = example.embedded.x.double()
    q = example.layer(example.embedded.x).q[0].detach().double()  # (T, d_head) = (3, 2)
    assert_close(x @ W_q, q, atol=2e-4, rtol=0)


def test_worked_working_puts_negative_numbers_in_parentheses():
    from conftest import by_hand, naked_negatives, open_page

    at = open_page("pages/worked_example.py")
    for number, typed in ((1, "1"), (2, "1"), (3, "1")):
        by_hand(at, number).set_value(typed)
    at.run()
    working = " ".join(str(element.value) for element in at.code)
    assert "- -" not in working and "−−" not in working and "− −" not in working
    assert "× -" not in working and "× −" not in working
    assert "× (-" in working  # a negative factor is there, in parentheses
    assert naked_negatives(working) == []


def test_worked_working_parenthesises_a_negative_row_max():
    """With x2 edited to (1, 0.5) both scores of query 1 (x2) are negative, so a_1,0's working
    is exp(s′ − (max)): the row max in parentheses, never "− −"."""
    from conftest import by_hand, naked_negatives, open_page

    from attention.explain import explain_cell
    from dashboard.render.tables import format_number

    example = worked_example(torch.tensor([[1.16, 0.23], [1.0, 0.5], [4.41, -2.16]]))
    with torch.no_grad():
        trace = example.layer(example.embedded.x, example.mask, mask_value=example.mask_value)
    cell = explain_cell(trace, 0, 1, 0)
    assert cell.scaled < 0 and cell.row_max < 0 and cell.scaled != cell.row_max
    at = open_page("pages/worked_example.py")
    at.session_state["encodings_0"] = {
        "edited_rows": {1: {"dim 0": "1", "dim 1": "0.5"}}, "added_rows": [], "deleted_rows": []
    }  # fmt: skip
    at.run()
    at.button(key="check_renew_worked_example_hand_2").click().run()  # at the edited numbers
    by_hand(at, 2).set_value("1")
    at.run()
    assert not at.exception
    working = " ".join(str(element.value) for element in at.code)
    scaled, row_max = format_number(cell.scaled), format_number(cell.row_max)
    assert f"exp({scaled} − ({row_max}))" in working
    assert naked_negatives(working) == []
