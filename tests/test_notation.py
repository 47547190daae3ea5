"""One symbol per thing on every page (issue 17 item 19): the head size is d_k (the code's
`d_head` never reaches the screen), M is only the additive mask, the masked scores are S̃."""

import ast
import re
from pathlib import Path

from attention import STAGES

ROOT = Path(__file__).resolve().parents[1]
SHOWN = [*sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "dashboard").rglob("*.py"))]
OTHER_HEAD_SIZES = re.compile(r"\bd_head\b|\bd_h\b|d_\\text\{head\}|√d_h|\(B, H, T, d\)|T²·d(?!_)")


def shown_strings(path: Path) -> list[str]:
    """The string literals of a module that can reach a page: not docstrings, not comments."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


def test_the_head_size_is_d_k_on_every_page():
    found = {
        f"{path.relative_to(ROOT)}: {text!r}"
        for path in SHOWN
        for text in shown_strings(path)
        if OTHER_HEAD_SIZES.search(text) and not text.isidentifier()  # a field name is code
    }
    assert not found, sorted(found)


def test_stages_name_the_head_size_and_the_masked_scores_once():
    dims = {d for stage in STAGES for d in stage.dims}
    assert "d_k" in dims and "d_head" not in dims
    formulas = " ".join(stage.formula for stage in STAGES)
    assert r"\sqrt{d_k}" in formulas and "d_\\text{head}" not in formulas
    assert not re.search(r"\bM\b|M_\{", formulas), "M is the additive mask, not a stage"
    assert r"\tilde S" in formulas


def test_the_checker_sees_a_head_size_in_a_page_string(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('"""d_head in a docstring is fine."""\nst.caption(f"d_head = {d}")\n')
    assert [t for t in shown_strings(page) if OTHER_HEAD_SIZES.search(t)] == ["d_head = "]
