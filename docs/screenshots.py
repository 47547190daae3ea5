"""Every screenshot the README and docs/ show, taken again from the running app.

    python docs/screenshots.py            # all of them (about two minutes)
    python docs/screenshots.py masking    # the names given (a file's stem)

It starts `streamlit run streamlit_app.py` on a free port (class mode on a throwaway SQLite
file), opens Debian's Chromium through Playwright (tests/chromium.py finds it) and writes
docs/screenshots/<name>.png: every lesson page and the home page at 1280 px wide, presenter mode
for three lessons at 1280 × 720 and 1024 × 768 (150 %, a projector's usual zoom), and a class:
the projector's join card, its tally after the reveal, and a student's laptop. Each is saved
with 256 colours (Pillow), a third of Chromium's size or less.

Beside them it writes docs/screenshots/manifest.json: for each screenshot, a hash of the code of
the files its screen is drawn from that are its own (`sources`: its page, its lesson module,
presenter mode's, class mode's screens), comments, docstrings and formatting left out.
tests/test_docs.py fails when a screenshot the docs show is missing or is not made here, and
when one is older than its page's code: the hash it was taken with is not the code's now.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
MANIFEST = OUT / "manifest.json"
COLOURS = 256  # a palette PNG: the pages are flat colours, text and small heatmaps
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from chromium import (  # noqa: E402
    CHROMIUM_FLAGS,
    FINISHED,
    chromium_path,
    streamlit_server,
    wait_until_drawn,
)

from dashboard.frame import GLOSSARY, LESSONS  # noqa: E402

WIDTH = 1280
PAGE_HEIGHT = 1700  # a lesson's first screens: title, objectives, the first stages
HOME_HEIGHT = 1180
PRESENTED = ("step_by_step", "what_heads_learn", "at_scale")
PROJECTOR_SCREENS = ((1280, 720), (1024, 768))
ZOOM = 1.5
WAIT = 60_000
SECTION_DRAWN = (ROOT / "benchmarks" / "js" / "section_drawn.js").read_text()


def stem(path: str) -> str:
    return Path(path).stem


LESSON_SHOTS = tuple(stem(lesson.path) for lesson in LESSONS)
PRESENTER_SHOTS = tuple(
    f"presenter_{name}_{w}x{h}" for name in PRESENTED for w, h in PROJECTOR_SCREENS
)
CLASS_SHOTS = ("class_projector_join", "class_projector_tally", "class_student")
PAGE_SHOTS = ("home", *LESSON_SHOTS, stem(GLOSSARY.path))  # the pages drawn as they open
SHOTS = (*PAGE_SHOTS, *PRESENTER_SHOTS, *CLASS_SHOTS)  # every file this makes


def sources(shot: str) -> tuple[str, ...]:
    """The files (from the project's root) whose code draws what the screenshot shows and is its
    own. The blocks every page shares (render/, the frame) are left out on purpose: a change
    there would make every screenshot stale at once, and their own tests check them."""
    if shot == "home":
        return ("pages/home.py",)
    if shot == stem(GLOSSARY.path):
        return (GLOSSARY.path, "dashboard/glossary.py")
    if shot in CLASS_SHOTS:
        screen = "student" if shot == "class_student" else "teacher"
        return ("pages/class.py", f"dashboard/classroom/{screen}.py")
    name = shot.removeprefix("presenter_").rsplit("_", 1)[0] if shot in PRESENTER_SHOTS else shot
    lesson = (f"pages/{name}.py", f"dashboard/views/{name}.py")
    return (*lesson, "dashboard/render/presenter.py") if shot in PRESENTER_SHOTS else lesson


def code_of(source: str) -> str:
    """A module's code without its comments, docstrings and formatting: what runs."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def fingerprint(shot: str) -> str:
    """The hash of the code of the screenshot's `sources`, as the manifest keeps it."""
    digest = hashlib.sha256()
    for path in sources(shot):
        digest.update(f"{path}\n{code_of((ROOT / path).read_text())}\n".encode())
    return digest.hexdigest()[:16]


def manifest() -> dict[str, str]:
    """{screenshot: the fingerprint of its sources when it was taken}; {} before the first."""
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}


def write_manifest(taken: set[str]) -> None:
    """Record the fingerprints of the screenshots just taken, keeping the others'."""
    kept = {name: value for name, value in manifest().items() if name in SHOTS}
    kept |= {name: fingerprint(name) for name in taken}
    MANIFEST.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")


def compact(path: Path) -> None:
    """The screenshot with COLOURS colours, no dithering (flat text and cells stay flat)."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(
            COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
        )
    small.save(path, optimize=True)


def lesson_pages(browser, url: str, wanted: set[str]) -> None:
    page = browser.new_page(viewport={"width": WIDTH, "height": PAGE_HEIGHT})
    for name in PAGE_SHOTS:
        if name not in wanted:
            continue
        height = HOME_HEIGHT if name == "home" else PAGE_HEIGHT
        page.set_viewport_size({"width": WIDTH, "height": height})
        page.goto(url if name == "home" else f"{url}/{name}")
        wait_until_drawn(page, timeout_ms=WAIT)
        page.wait_for_timeout(1_000)
        page.screenshot(path=str(OUT / f"{name}.png"))
    page.close()


def presenter(browser, url: str, wanted: set[str]) -> None:
    for name in PRESENTED:
        for width, height in PROJECTOR_SCREENS:
            shot = f"presenter_{name}_{width}x{height}"
            if shot not in wanted:
                continue
            context = browser.new_context(
                viewport={"width": round(width / ZOOM), "height": round(height / ZOOM)},
                device_scale_factor=ZOOM,
            )
            page = context.new_page()
            page.goto(f"{url}/{name}?present=1&section=1")
            page.wait_for_function(SECTION_DRAWN, arg=[FINISHED, 1], timeout=WAIT, polling=100)
            page.wait_for_timeout(1_000)
            page.screenshot(path=str(OUT / f"{shot}.png"))
            context.close()


def top(page) -> None:
    """Scroll the page back to its top (a click scrolls the button into view)."""
    page.locator('[data-testid="stMain"]').evaluate("main => main.scrollTo(0, 0)")
    page.wait_for_timeout(300)


def a_class(browser, url: str, wanted: set[str]) -> None:
    """A teacher and three students: a diagnostic question asked, answered and revealed."""
    if not wanted & set(CLASS_SHOTS):
        return
    screen = {"width": 1280, "height": 720}
    teacher = browser.new_context(viewport=screen).new_page()
    teacher.goto(f"{url}/class")
    teacher.get_by_role("button", name="Start a class").click()
    teacher.get_by_text("Class code").wait_for(timeout=WAIT)
    teacher.wait_for_timeout(1_000)
    if "class_projector_join" in wanted:
        teacher.screenshot(path=str(OUT / "class_projector_join.png"))
    code = teacher.locator('[data-testid="stMetricValue"]').first.inner_text().strip()
    students = []
    for nickname in ("Ada", "Grace", "Alan"):
        student = browser.new_context(viewport=screen).new_page()
        student.goto(f"{url}/class?join={code}")
        student.get_by_role("textbox", name="Nickname (optional)").fill(nickname)
        student.get_by_role("button", name="Join").click()
        student.get_by_text("You joined as").wait_for(timeout=WAIT)
        students.append(student)
    # lesson 1's first diagnostic question: its wrong choices are classic mistakes
    teacher.get_by_role("combobox", name="Question").click()
    teacher.keyboard.type("diagnostic")
    teacher.keyboard.press("Enter")
    teacher.get_by_text("Choices:").wait_for(timeout=WAIT)
    teacher.get_by_role("button", name="Ask the class").click()
    for number, student in enumerate(students):
        choices = student.locator('[data-testid="stMain"] [role="radiogroup"] label')
        choices.first.wait_for(timeout=WAIT)
        choices.nth(min(number, choices.count() - 1)).click()
        student.get_by_role("button", name="Send my answer").click()
        student.get_by_text("Your answer:").wait_for(timeout=WAIT)
    teacher.get_by_text("3 of 3 joined").wait_for(timeout=WAIT)
    teacher.get_by_role("button", name="Reveal").click()
    teacher.get_by_text("The answer:").wait_for(timeout=WAIT)
    teacher.wait_for_timeout(1_500)
    top(teacher)
    if "class_projector_tally" in wanted:
        teacher.screenshot(path=str(OUT / "class_projector_tally.png"))
    students[1].get_by_text("The answer:").wait_for(timeout=WAIT)
    students[1].wait_for_timeout(1_000)
    top(students[1])
    if "class_student" in wanted:
        students[1].screenshot(path=str(OUT / "class_student.png"))


def main(names: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    unknown = sorted(set(names) - set(SHOTS))
    if unknown:
        raise SystemExit(f"No screenshot named {', '.join(unknown)}; these are: {' '.join(SHOTS)}")
    wanted = set(names or SHOTS)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["ATTENTION_CLASS_DB"] = f"sqlite:///{Path(scratch) / 'classroom.db'}"
        with streamlit_server() as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_FLAGS
            )
            lesson_pages(browser, url, wanted)
            presenter(browser, url, wanted)
            a_class(browser, url, wanted)
            browser.close()
    for name in sorted(wanted):
        compact(OUT / f"{name}.png")
        print(OUT / f"{name}.png", (OUT / f"{name}.png").stat().st_size, "bytes")
    write_manifest(wanted)


if __name__ == "__main__":
    main(sys.argv[1:])
