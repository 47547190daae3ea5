"""The code is ruff-clean: formatted, and lint-free under pyproject.toml's rules."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_lint_ruff_is_clean(command):
    result = subprocess.run([sys.executable, "-m", "ruff", *command, "."], cwd=ROOT,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
