"""The house's rules, checked: the maths imports no display library, the display's frame no
torch, and no module has an import-time side effect on torch."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISPLAY = ("streamlit", "altair", "pandas")


def modules_of(package: str) -> list[str]:
    path = ROOT / package
    return [package] + [
        f"{package}.{info.name}"
        for info in pkgutil.walk_packages([str(path)])
        if not info.name.startswith("_")
    ]


def imported_after(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter has imported after `statement`."""
    listed = "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    code = f"{statement}\nimport sys\n{listed}"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


@pytest.mark.parametrize("module", modules_of("attention"))
def test_attention_module_imports_no_display_library(module):
    assert not imported_after(f"import {module}") & set(DISPLAY)


@pytest.mark.parametrize("module", ["dashboard.frame", "dashboard.controls", "dashboard.text"])
def test_dashboard_frame_imports_no_torch(module):
    """The home page draws before torch has loaded (frame.warm_up imports it in the background)."""
    assert "torch" not in imported_after(f"import {module}")


def test_importing_the_dashboard_leaves_torch_threads_alone():
    code = "\n".join(
        [
            "import torch",
            "n = torch.get_num_threads()",
            "import dashboard.lessons",
            "print(n == torch.get_num_threads())",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_every_ui_module_lives_in_dashboard():
    """Only dashboard/, pages/, the entry file, tests and benchmarks import a display library."""
    offenders = []
    for path in (ROOT / "attention").rglob("*.py"):
        text = path.read_text()
        for library in DISPLAY:
            if f"import {library}" in text or f"from {library}" in text:
                offenders.append(f"{path.relative_to(ROOT)}: {library}")
    assert not offenders
