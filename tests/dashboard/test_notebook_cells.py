"""The notebooks' code as code: the cell files run as plain scripts, their one attention forward
equals the attention package's, and the reader and the data writer behave as documented.
(tests/dashboard/test_exports.py runs the same cells inside executed notebooks.)"""

import math
import re
import runpy

import pytest
import torch
from torch.testing import assert_close

from attention import STAGES, seeded_layer
from dashboard.controls import Settings
from dashboard.exports.cells.example import BLOCK, CROSS, PAGE, SCALING
from dashboard.exports.cells.forward import attention_stages
from dashboard.exports.notebooks import CELLS, JsonText, cells_of, fill, literal, read_cells
from dashboard.lessons import Variant, computed

CELL_FILES = [
    "page", "forward", "stages", "decode", "tiling", "position", "rope", "scaling", "exercise",
    "scaling_exercise", "block", "cross",
]  # fmt: skip


def test_cells_every_file_is_a_notebook_part():
    files = {p.stem for p in CELLS.glob("*.py")} - {"__init__", "example"}
    assert files == set(CELL_FILES)


ENDS = {  # what a file prints once its assertions held
    "stages": "Every stage equals the dashboard", "decode": "equals the full causal pass",
    "tiling": "The tiled walk equals head 0", "rope": "RoPE all equal the page",
    "scaling": "Every variance and every softmax equals the page",
    "exercise": "Every step right", "scaling_exercise": "Every step right",
    "block": "Every step right", "cross": "out: right",
}  # fmt: skip


@pytest.mark.parametrize("name", CELL_FILES)
def test_cells_file_runs_as_a_plain_script_and_its_assertions_hold(name, capsys):
    runpy.run_path(str(CELLS / f"{name}.py"), run_name="__main__")
    assert ENDS.get(name, "") in capsys.readouterr().out


@pytest.mark.parametrize(
    ("settings", "variant"),
    [
        (Settings(seq_len=4, d_model=6, n_heads=3, seed=2), Variant()),
        (Settings(seq_len=3, d_model=4, n_heads=2, causal=False, seed=5),
         Variant(n_padding=1, empty_last_row=True, mask_value=-1e9)),
        (Settings(source="worked"), Variant()),  # no W_o, the -1e9 fill
    ],
)  # fmt: skip
def test_cells_forward_equals_the_attention_layer_at_every_stage(settings, variant):
    shown = computed(settings, variant)
    trace, layer = shown.trace, shown.layer
    allowed = trace.allowed.expand(trace.weights.shape)[0]  # (T, T)
    stages = attention_stages(
        trace.x, allowed, layer.W_q, layer.W_k, layer.W_v, layer.W_o, layer.n_heads,
        float(trace.mask_value),
    )  # fmt: skip
    assert list(stages) == [s.name for s in STAGES]
    for stage in STAGES:
        assert_close(stages[stage.name], trace.stage(stage.name), rtol=1e-5, atol=1e-6)


def test_cells_forward_gives_a_query_with_no_key_zero_weights():
    layer = seeded_layer(0, 2, 1)
    allowed = torch.tensor([[True, False], [False, False]])
    stages = attention_stages(torch.ones(2, 2), allowed, layer.W_q, layer.W_k, layer.W_v, None, 1)
    assert stages["weights"].tolist() == [[[1.0, 0.0], [0.0, 0.0]]]
    assert stages["output"][1].tolist() == [0.0, 0.0]


def test_cells_reader_splits_code_markdown_and_the_scripts_own_cells(tmp_path):
    path = tmp_path / "cells.py"
    path.write_text(
        '"""The file\'s own docstring."""\n\n'
        '# %% active="py"\nfrom example import A\n\n'
        "# %% [markdown]\n# ## A title\n#\n# Prose.\n\n"
        '# %% tags=["parameters"]\nb = A  # b\n\n\n'
        "# %%\nprint(b)\n"
    )
    cells = read_cells(path)
    assert [(c.kind, c.source, c.tags, c.script_only) for c in cells] == [
        ("code", "from example import A", (), True),
        ("markdown", "## A title\n\nProse.", (), False),
        ("code", "b = A  # b", ("parameters",), False),
        ("code", "print(b)", (), False),
    ]


def test_cells_fill_gives_only_the_named_assignments_the_data_and_keeps_comments():
    source = "B_r, B_c = 1, 1  # blocks\nq = stages['q']\nt = f(q)  # the page's\nt = 2\n"
    filled, names = fill(source, {"B_r": 3, "B_c": 2, "t": torch.tensor([1.5, -2.0])})
    assert filled == (
        "B_r, B_c = 3, 2  # blocks\nq = stages['q']\nt = torch.tensor([1.5, -2.0])  # the page's\n"
        "t = 2\n"
    )
    assert names == {"B_r", "B_c", "t"}


def test_cells_fill_refuses_a_tuple_assignment_given_part_of_its_names():
    with pytest.raises(ValueError, match="every name"):
        fill("a, b = 1, 2\n", {"a": 3})


@pytest.mark.parametrize(
    ("value", "source"),
    [(-math.inf, "-math.inf"), (0.1, "0.1"), ("it's", '"it\'s"'), ([(4, 2.5)], "[(4, 2.5)]"),
     (torch.tensor([[1, 2]]), "torch.tensor([[1, 2]])"), (None, "None"),
     (torch.tensor([0.1, -2.0]), "torch.tensor([0.10000000149011612, -2.0])"),
     (torch.tensor([True]), "torch.tensor([True])"),
     (JsonText('{"a": null}'), 'json.loads("{\\"a\\": null}")')],
)  # fmt: skip
def test_cells_literal_writes_data_as_python(value, source):
    assert literal(value) == source


@pytest.mark.parametrize("value", [print, {"a": 1}, [math.nan], torch.tensor([math.inf])])
def test_cells_literal_refuses_anything_but_data(value):
    with pytest.raises((TypeError, ValueError)):
        literal(value)


def test_cells_of_refuses_data_the_file_has_no_parameter_for():
    with pytest.raises(ValueError, match="no parameter"):
        cells_of("rope", rope_by_dashboard=torch.zeros(2, 2), typo=1)


def test_cells_notebooks_leave_the_scripts_own_cells_out():
    for name in CELL_FILES:
        source = "".join(cell.source for cell in cells_of(name, **parameters_of(name)))
        assert "dashboard.exports" not in source and "import attention" not in source


def parameters_of(name: str) -> dict:
    """Stand-in data for one file's parameters (never executed)."""
    tensor = torch.zeros(1)
    return {
        "page": PAGE, "scaling": SCALING, "block": BLOCK, "cross": CROSS,
        "decode": {"decoded_by_dashboard": tensor},
        "tiling": {"B_r": 1, "B_c": 1, "tiled_by_dashboard": tensor},
        "position": {"perm": tensor, "shuffled_by_dashboard": tensor, "pe_by_dashboard": tensor},
        "rope": {"rope_by_dashboard": tensor},
    }.get(name, {})  # fmt: skip


def test_cells_exercise_check_names_the_classic_mistake_or_where_it_differs():
    """Issue 42, item 13: a failed check said only "Tensor-likes are not close!". Each classic
    mistake, written as a learner writes it, is named; any other wrong tensor gets where it
    differs most and by how much; a wrong shape gets both shapes."""
    ex = runpy.run_path(str(CELLS / "exercise.py"), run_name="__main__")
    check, X, T, C, H, d = ex["check"], ex["X"], ex["T"], ex["C"], ex["H"], ex["d_head"]
    W_q, scores, scaled, heads = ex["W_q"], ex["scores"], ex["scaled"], ex["heads"]
    allowed, mask_value = ex["allowed"], ex["mask_value"]
    assert not allowed.all() and H > 1  # the example has a mask and several heads to mix up
    planted = {
        "q": [((X @ W_q.weight.T).view(H, T, d), "without the transpose"),
              ((X @ W_q.weight).view(T, H, d).transpose(0, 1), "W.weight without .T"),
              (X @ W_q.weight.T, "not split into heads")],
        "scaled": [(scores, "not scaled"), (scores / d, "divided by d_k"),
                   (scores / math.sqrt(C), "divided by √d_model")],
        "masked": [(scaled, "no mask"),
                   (scaled.masked_fill(allowed, mask_value), "the wrong way round")],
        "weights": [(torch.softmax(scaled.masked_fill(~allowed, -math.inf), -2).nan_to_num(0.0),
                     "the wrong axis"),
                    (torch.softmax(scores.masked_fill(~allowed, -math.inf), -1),
                     "the unscaled scores"),
                    (torch.softmax(scaled, -1), "without the mask")],
        "concat": [(heads.reshape(T, C), "joined without .transpose(0, 1)")],
    }  # fmt: skip
    for name, mistakes in planted.items():
        for mine, said in mistakes:
            with pytest.raises(AssertionError, match=rf"^{name}: .*{re.escape(said)}"):
                check(name, mine)
    wrong = scores.clone()
    wrong[1, 2, 0] += 0.5
    with pytest.raises(
        AssertionError,
        match=r"^scores: at head 1, query 2, key 0 yours is "
        r"-?\d\.\d{4}, .*\(the only cell that differs\)",
    ):
        check("scores", wrong)
    wrong[0, 0, 0] += 0.5
    with pytest.raises(AssertionError, match=r"\(of the 2 cells that differ\)"):
        check("scores", wrong)
    with pytest.raises(AssertionError, match=r"your shape is \(3,\), the page's is \("):
        check("heads", torch.zeros(3))
