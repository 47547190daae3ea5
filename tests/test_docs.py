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


def test_docs_no_screenshot_is_older_than_its_pages_code():
    """Issue 54: the README's screenshots were older than lesson 1's page (no lesson 13 in the
    navigation). docs/screenshots.py records, for each screenshot, a hash of its own page's code
    (its page, lesson module, presenter or class screens); a screenshot taken before that code
    last changed is stale."""
    shots = command()
    taken = shots.manifest()
    stale = sorted(name for name in shots.SHOTS if taken.get(name) != shots.fingerprint(name))
    assert not stale, (
        f"Screenshots older than their page's code: {' '.join(stale)}. Take them again: "
        f"python docs/screenshots.py {' '.join(stale)}"
    )


def test_docs_a_screenshots_fingerprint_follows_code_not_comments():
    code_of = command().code_of
    plain = 'def f():\n    """Says what."""\n    return st.write("a")\n'
    assert code_of(plain) == code_of("def f():  # why\n    return st.write( 'a' )\n")
    assert code_of(plain) != code_of('def f():\n    return st.write("b")\n')
