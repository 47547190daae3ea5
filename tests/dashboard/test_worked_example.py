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
    from dashboard.lessons import lesson

    return lesson(Settings(source="worked"))


def test_worked_check_yourself_accepts_what_the_printed_tables_give():
    """The trial: z₃[0] worked from the printed 4-decimal tables is 3.4991, the exact value
    3.4989; both are right, and a number off by more than the printing explains is not."""
    from attention.explain import from_printed
    from dashboard.views.worked_example import check_answer

    trace = hand_lesson().trace
    exact = float(trace.output[2, 0])
    printed = from_printed(trace, "output", 2, 0)
    assert f"{exact:.4f}" == "3.4989" and f"{printed:.4f}" == "3.4991"
    assert check_answer("3.4991", exact, printed)[0] is True
    assert check_answer("3,4989", exact, printed)[0] is True
    assert check_answer("3.4995", exact, printed)[0] is False
    for stage, (i, j) in (("scaled", (2, 1)), ("weights", (1, 0))):
        value = float(trace.stage(stage)[0, i, j])
        assert abs(from_printed(trace, stage, i, j) - value) < 3e-4


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
    latex = " ".join(element.value for element in at.get("latex") if hasattr(element, "value"))
    latex += " ".join(str(el.proto.body) for el in at.get("markdown"))
    assert "- -" not in latex and "−−" not in latex and "--" not in latex.replace("---", "")
    assert "× -" not in latex and "× −" not in latex
    assert "× (-" in latex  # a negative factor is there, in parentheses
    assert naked_negatives(latex) == []


def test_worked_working_parenthesises_a_negative_row_max():
    """With x2 edited to (1, 0.5) both scores of query x2 are negative, so a₂₁'s working is
    e^{s' − (max)}: the row max in parentheses, never "− −"."""
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
    by_hand(at, 2).set_value("1")
    at.run()
    assert not at.exception
    working = " ".join(element.value for element in at.get("latex"))
    scaled, row_max = format_number(cell.scaled), format_number(cell.row_max)
    assert f"e^{{{scaled} - ({row_max})}}" in working
    assert naked_negatives(working) == []
