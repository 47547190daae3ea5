"""The README's and docs' screenshots: each one on disk and made by `python docs/screenshots.py`,
and every lesson's page shown (issue 28, item 9: the README showed pages from before round 3)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from dashboard.frame import GLOSSARY, LESSONS

ROOT = Path(__file__).resolve().parents[1]
SHOWN = re.compile(r"(?:docs/)?screenshots/([A-Za-z0-9_]+)\.png")


def command():
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "docs" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shown() -> dict[str, set[str]]:
    """Each screenshot the docs show, with the files that show it."""
    found: dict[str, set[str]] = {}
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in SHOWN.findall(doc.read_text()):
            found.setdefault(name, set()).add(doc.name)
    return found


def test_docs_every_screenshot_shown_is_on_disk_and_made_by_the_command():
    made = set(command().SHOTS)
    for name, docs in shown().items():
        assert (ROOT / "docs" / "screenshots" / f"{name}.png").is_file(), (name, docs)
        assert name in made, f"{name} (shown in {docs}) is not made by docs/screenshots.py"


def test_docs_readme_shows_every_lessons_page():
    readme = {name for name, docs in shown().items() if "README.md" in docs}
    for lesson in (*LESSONS, GLOSSARY):
        assert lesson.url_path in readme, lesson.title
    assert set(command().LESSON_SHOTS) == {lesson.url_path for lesson in LESSONS}
