"""What a student takes home: tables as numbers, the JSON trace, the CSVs, and the notebook."""

import io
import json
import math
import zipfile

import nbformat
import pandas as pd
import pytest
import torch
from conftest import no_exception, open_page, run_notebook
from torch.testing import assert_close

from attention import STAGES
from dashboard.controls import Settings
from dashboard.exports import lesson_notebook, notebook, tables_zip, trace_json
from dashboard.lessons import Variant, computed
from dashboard.views import at_scale, kv_cache, position, why_sqrt_dk


def strict_json(text: str):
    """json.loads that refuses NaN and ±Infinity, as a browser's JSON.parse does."""

    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_exports_trace_json_is_strict_json_with_a_string_for_minus_infinity():
    data = strict_json(trace_json(computed(Settings(causal=True))))
    assert data["stages"]["masked"][0][0][1] == "-Infinity"  # query t0 may not see key t1
    assert data["mask_value"] == "-Infinity" and '"-Infinity"' in data["schema"]["infinity"]
    assert float(data["stages"]["masked"][0][0][1]) == -math.inf


def test_exports_trace_json_lets_a_notebook_recompute_q_from_x():
    data = strict_json(trace_json(computed(Settings(seq_len=5, d_model=12, n_heads=3))))
    X = torch.tensor(data["stages"]["x"])  # (T, C)
    W_q, W_o = torch.tensor(data["weights"]["W_q"]), torch.tensor(data["weights"]["W_o"])
    Q = X @ W_q.T  # (T, C)
    q = Q.view(5, 3, 4).transpose(0, 1)  # (H, T, d_head)
    assert_close(q, torch.tensor(data["stages"]["q"]))
    concat = torch.tensor(data["stages"]["concat"])
    assert_close(concat @ W_o.T, torch.tensor(data["stages"]["output"]))


def test_exports_worked_example_json_has_no_w_o_and_keeps_the_minus_1e9_fill():
    data = strict_json(trace_json(computed(Settings(source="worked"))))
    assert data["weights"]["W_o"] is None and data["mask_value"] == -1e9
    assert data["stages"]["masked"][0][0][2] == -1e9


def test_exports_tables_zip_has_a_named_csv_per_stage_and_head_read_as_numbers():
    trace_lesson = computed(Settings(seq_len=4, d_model=4, n_heads=2))
    archive = zipfile.ZipFile(io.BytesIO(tables_zip(trace_lesson)))
    names = set(archive.namelist())
    assert {"x.csv", "q_head0.csv", "q_head1.csv", "weights_head1.csv", "output.csv"} <= names
    assert "allowed.csv" in names
    raw = archive.read("masked_head0.csv")
    assert not raw.startswith(b"\xef\xbb\xbf")  # no byte-order mark
    masked = pd.read_csv(io.BytesIO(raw), index_col=0)
    assert masked.dtypes.map(pd.api.types.is_float_dtype).all()
    assert masked.iloc[0, 1] == -math.inf
    q1 = pd.read_csv(io.BytesIO(archive.read("q_head1.csv")), index_col=0)
    assert list(q1.columns) == ["d2", "d3"]
    assert q1.iloc[3, 1] == float(trace_lesson.trace.q[1, 3, 1])  # every digit


TRACE_PAGES = [  # the lessons that show the sidebar's trace
    "pages/step_by_step.py", "pages/multi_head.py", "pages/masking.py", "pages/worked_example.py",
    "pages/position.py", "pages/kv_cache.py", "pages/at_scale.py",
]  # fmt: skip


@pytest.mark.parametrize("page", TRACE_PAGES)
def test_exports_every_lesson_with_a_trace_offers_the_downloads(page):
    at = open_page(page)
    no_exception(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["The whole trace (JSON)", "Every table (CSV, zip)",
                      "Take it home as a notebook", "Exercises: write each step",
                      "The exercises, solved"]  # fmt: skip


def test_exports_lesson_4_tables_carry_numbers():
    at = open_page("pages/why_sqrt_dk.py")
    no_exception(at)
    variances, summary = at.dataframe[0].value, at.dataframe[1].value
    assert pd.api.types.is_float_dtype(variances["Var(q·k)"])
    assert pd.api.types.is_float_dtype(summary["max weight"])


def test_exports_additive_mask_table_carries_numbers():
    at = open_page("pages/masking.py")
    no_exception(at)
    additive = at.dataframe[2].value  # True = may attend, True = blocked, additive
    # the true -inf, as every export writes it (issue 17 item 5: a null here was NaN in its CSV)
    assert additive.iloc[0, 0] == 0.0 and additive.iloc[0, 1] == -math.inf
    assert not at.dataframe[2].proto.placeholder


NOTEBOOK_CASES = {
    "random_causal": (Settings(seq_len=5, d_model=8, n_heads=2, seed=3), Variant()),
    "random_open_padding": (
        Settings(seq_len=6, d_model=6, n_heads=3, causal=False, seed=1),
        Variant(n_padding=2, empty_last_row=True, mask_value=-1e9),
    ),
    "sentence": (Settings(source="sentence", text="the cat saw the dog", seq_len=8), Variant()),
    "worked": (Settings(source="worked"), Variant(encodings=((1.0, 2.0), (0.5, -1.0), (3.0, 0.0)))),
    "trained": (Settings(source="trained", task="induction", layer=1), Variant()),
    # lesson 12's model: its weights are copied in, not drawn from a seed (the notebook drew
    # them from the seed and failed its first check until 2026-11-26)
    "shakespeare": (Settings(source="shakespeare", text="To be, or not", layer=1), Variant()),
}


@pytest.fixture(scope="module")
def executed():
    """Every case's notebook, executed once by a real python3 kernel (nbclient)."""
    books = {}
    for name, (settings, variant) in NOTEBOOK_CASES.items():
        book = notebook(computed(settings, variant))
        nbformat.validate(book)
        run_notebook(book)
        books[name] = book
    return books


@pytest.mark.parametrize("case", NOTEBOOK_CASES)
def test_exports_notebook_rebuilds_every_stage_and_asserts_it(executed, case):
    book = executed[case]
    source = "\n".join(c.source for c in book.cells if c.cell_type == "code")
    assert "import attention" not in source and "from attention" not in source
    assert "import dashboard" not in source and "from dashboard" not in source
    checks = [c.source for c in book.cells if c.source.startswith("check(")]
    assert checks == [f'check("{s.name}")' for s in STAGES]  # one cell per stage, in order
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert "Every stage equals the dashboard" in outputs[-1]["text"]


def test_exports_notebook_fails_when_the_embedded_numbers_differ():
    book = notebook(computed(Settings(seq_len=3, d_model=4, n_heads=1)))
    data_cell = next(c for c in book.cells if "dashboard = json.loads" in c.source)
    book.cells.insert(
        book.cells.index(data_cell) + 1,
        nbformat.v4.new_code_cell("dashboard['stages']['weights'][0][2][0] += 0.01"),
    )
    with pytest.raises(Exception, match=r"Tensor-likes are not close"):
        run_notebook(book)


# Lessons 9, 10 and 11 add their own section, built by the page's own function.
SECTION_CASES = {
    "decode_random": (Settings(seq_len=6, d_model=8, n_heads=2, seed=4), "decode"),
    "decode_trained": (Settings(source="trained", task="induction", layer=1), "decode"),
    # reverse is trained without a causal mask: the decoding is still checked causally
    "decode_trained_reverse": (Settings(source="trained", task="reverse", layer=0), "decode"),
    "decode_worked": (Settings(source="worked"), "decode"),
    "tiles_causal_3x2": (Settings(seq_len=7, d_model=8, n_heads=2, seed=2), (3, 2)),
    "tiles_open_4x3": (Settings(seq_len=7, d_model=6, n_heads=3, causal=False, seed=5), (4, 3)),
    "position_random": (Settings(seq_len=6, d_model=8, n_heads=2, seed=7), "position"),
    "position_sentence": (
        Settings(source="sentence", text="the cat saw the dog", seq_len=8, positions=True),
        "position",
    ),
    "position_odd_d_head": (Settings(seq_len=5, d_model=6, n_heads=2, seed=1), "position"),
}
SECTION_ENDS = {
    "decode": "equals the full causal pass, row for row",
    "position": "Shuffling, the sinusoidal table and RoPE all equal the page.",
}


def section_notebook(settings: Settings, kind):
    shown = computed(settings)
    if kind == "decode":
        section = kv_cache.notebook_section(shown)
    elif kind == "position":
        section = position.notebook_section(shown, settings.seed)
    else:
        section = at_scale.notebook_section(shown, *kind)
    return notebook(shown, section)


@pytest.mark.parametrize("case", SECTION_CASES)
def test_exports_notebook_section_rebuilds_its_lesson_and_asserts_it(case):
    settings, kind = SECTION_CASES[case]
    book = section_notebook(settings, kind)
    nbformat.validate(book)
    run_notebook(book)
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    T = len(computed(settings).labels)
    if kind == "decode":
        assert SECTION_ENDS[kind] in text and text.count("one query row") == T
    elif kind == "position" and case == "position_odd_d_head":
        assert "RoPE needs an even head size d_k" in book.cells[-1].source
        assert "without a mask" in text and "RoPE all equal" not in text
    elif kind == "position":
        assert SECTION_ENDS[kind] in text and "without a mask" in text
    else:
        assert "The tiled walk equals head 0 of the full pass." in text
        assert f"never {T} x {T}" in text


@pytest.mark.parametrize(
    ("field", "kind"),
    [("decoded_by_dashboard", "decode"), ("tiled_by_dashboard", (2, 2)),
     ("shuffled_by_dashboard", "position"), ("pe_by_dashboard", "position"),
     ("rope_by_dashboard", "position")],
)  # fmt: skip
def test_exports_notebook_section_fails_when_the_page_numbers_differ(field, kind):
    book = section_notebook(Settings(seq_len=4, d_model=4, n_heads=1, seed=1), kind)
    cell = next(c for c in book.cells if f"{field} = torch.tensor([[" in c.source)
    cell.source = cell.source.replace(
        f"{field} = torch.tensor([[", f"{field} = torch.tensor([[0.5 + "
    )
    with pytest.raises(Exception, match=r"Tensor-likes are not close"):
        run_notebook(book)


def test_exports_lesson_notebook_builds_the_section_only_when_asked():
    shown = computed(Settings(seq_len=3, d_model=4, n_heads=1))
    calls = []

    def section():
        calls.append(1)
        return kv_cache.notebook_section(shown)

    assert "KV cache" not in nbformat.writes(lesson_notebook(shown))
    assert not calls
    assert "## Generation with a KV cache" in nbformat.writes(lesson_notebook(shown, section))
    assert calls == [1]


@pytest.mark.parametrize(("d_k", "temperature"), [(64, 1.0), (1024, 0.01), (1, 10.0)])
def test_exports_lesson_4_notebook_redraws_the_variances_and_softmax_and_asserts_them(
    d_k, temperature
):
    book = why_sqrt_dk.notebook((4, 16, 64, 256), 4000, 8, d_k, temperature, seed=3)
    nbformat.validate(book)
    run_notebook(book)
    text = "".join(
        o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "import attention" not in "".join(c.source for c in book.cells)
    assert text.count("Var(q·k / √d_k)") == 4 and text.count("gradient size") == 3
    assert "Every variance and every softmax equals the page." in text


def test_exports_lesson_4_notebook_fails_when_the_page_numbers_differ():
    book = why_sqrt_dk.notebook((4, 16), 100, 8, 64, 1.0, seed=1)
    cell = next(c for c in book.cells if "variances_by_dashboard = [" in c.source)
    cell.source = cell.source.replace(
        "variances_by_dashboard = [(4, ", "variances_by_dashboard = [(4, 0.1 + "
    )
    with pytest.raises(Exception, match="AssertionError"):
        run_notebook(book)


def test_exports_lesson_4_offers_its_notebook_and_exercises():
    at = open_page("pages/why_sqrt_dk.py")
    no_exception(at)
    assert [b.proto.label for b in at.get("download_button")] == [
        "Take it home as a notebook", "Exercises: write each step", "The exercises, solved",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "page", ["pages/what_heads_learn.py", "pages/bug_hunt.py", "pages/drills.py",
             "pages/real_model.py"],
)  # fmt: skip
def test_exports_lessons_without_a_trace_download_offer_the_exercises(page):
    """Issue 30, item 10: every lesson has exercises to write (lessons 6 and 12 on their
    trained model's layer, 7 and 8 on the sidebar's layer)."""
    at = open_page(page)
    no_exception(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[-2:] == ["Exercises: write each step", "The exercises, solved"]


def test_exports_lesson_4_exercises_blank_fail_their_checks_and_solved_pass():
    """Issue 30, item 10, lesson 4: the learner writes the dot products, the scaling, the
    softmax, its entropy and Jacobian; checked against the page's numbers both ways."""
    from nbclient.exceptions import CellExecutionError

    blank = why_sqrt_dk.exercises((4, 16, 64), 2000, 8, 64, 1.0, seed=3)
    solved = why_sqrt_dk.exercises((4, 16, 64), 2000, 8, 64, 1.0, seed=3, solved=True)
    yours = [c.source for c in blank.cells if c.source.startswith("# Your code")]
    assert len(yours) == 2 and "raw = None" in yours[0] and "J = None" in yours[1]
    with pytest.raises(CellExecutionError, match="at d_k = 64: write it in the cell above"):
        run_notebook(blank)
    run_notebook(solved)
    text = "".join(o.get("text", "") for c in solved.cells if c.cell_type == "code"
                   for o in c.outputs)  # fmt: skip
    assert text.count(": right") == 5 and "Every step right" in text
    page = why_sqrt_dk.notebook_data((4, 16, 64), 2000, 8, 64, 1.0, seed=3)
    assert f"{page['saturation_by_dashboard'][1][1]:.4f}: right" in text  # the page's max weight


def test_exports_layer_exercises_are_the_trained_models_layer():
    """Lessons 6 and 12's exercises carry the trained layer's weights, not a seed's."""
    from dashboard.exports.notebooks import layer_exercises

    book = layer_exercises(Settings(source="trained", task="induction", layer=0), solved=True)
    page = next(c.source for c in book.cells if c.source.startswith("source ="))
    assert "'trained'" in page or '"trained"' in page
    run_notebook(book)


@pytest.mark.parametrize("case", ["random_causal", "random_open_padding", "trained", "shakespeare"])
def test_exports_exercise_notebook_blank_fails_its_checks_and_solved_passes(case):
    """Issue 30, item 10: a notebook where the learner writes each step, checked against the
    page's numbers. Left blank, the first check fails and names what to write; solved, every
    check passes. Executed by a real kernel both ways; no learner code runs on the server."""
    from nbclient.exceptions import CellExecutionError

    from dashboard.exports.notebooks import exercise_notebook

    shown = computed(*NOTEBOOK_CASES[case])
    blank, solved = exercise_notebook(shown), exercise_notebook(shown, solved=True)
    for book in (blank, solved):
        nbformat.validate(book)
    yours = [c.source for c in blank.cells if c.source.startswith("# Your code")]
    assert len(yours) == 5 and all("= None" in cell for cell in yours)
    assert "# Your code" not in "\n".join(c.source for c in solved.cells)
    with pytest.raises(CellExecutionError, match="q: write it in the cell above"):
        run_notebook(blank)
    run_notebook(solved)
    outputs = [o for c in solved.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert "Every step right" in outputs[-1]["text"]


def test_exports_numbers_are_float32_exact_in_the_fewest_digits():
    """Issue 42, item 13: lesson 12's notebook was 2.0 MB at its default text (3.5 MB with a
    long one), 17 digits a number. Each float32 is now written with the fewest digits that
    read back as itself: the same tensor, bit for bit, in about half the text."""
    from dashboard.exports import json_numbers
    from dashboard.exports.notebooks import layer_exercises

    values = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
    values[0, :3] = -math.inf
    text = json.dumps(json_numbers(values, shortest=True))
    back = torch.tensor(json.loads(text.replace('"-Infinity"', "-Infinity")))
    assert torch.equal(back, values) and back.dtype == torch.float32
    assert len(text) < 12 * values.numel()  # 17 digits a number took about 21 characters
    assert len(json.dumps(json_numbers(values))) > 19 * values.numel()  # the JSON download's
    book = layer_exercises(Settings(source="shakespeare", layer=0))
    assert len(nbformat.writes(book)) < 1_400_000  # was 2,010,519 characters
    run_notebook(layer_exercises(Settings(source="shakespeare", layer=1), solved=True))
