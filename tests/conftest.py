"""Shared test helpers: tiny deterministic tensors."""

import os
import re
import tempfile
from pathlib import Path

import pytest
import torch
from nbclient import NotebookClient
from streamlit.testing.v1 import AppTest
from traitlets.config import Config

from attention import random_embeddings, seeded_layer
from attention.drill_set import SEED_STRIDE, make_drills
from attention.drills import f4
from benchmarks.reading_times import elements  # every element under a node, in page order
from dashboard import lesson_frame
from dashboard.course import COURSE
from dashboard.frame import LESSONS
from dashboard.render import layout
from dashboard.server import DRAW_AT_START

pytest_plugins = ["classroom.class_databases"]  # the class store's real SQLite and PostgreSQL

# The suite's servers (and the benchmarks' it runs) start without drawing every lesson first
# (dashboard/server.py, `draws_at_start`): several test a page's first visit on a server just
# started, and the suite starts dozens (5 s of one core each here). tests/deploy/
# test_warm_start.py starts servers that draw them, as a deployment does.
os.environ.setdefault(DRAW_AT_START, "0")


def run_notebook(book, timeout: int = 120):
    """Execute a notebook in place in a real python3 kernel, as a student's Jupyter would.

    CI once waited 60 s (nbclient's default) for a kernel that never answered its first request
    (2026-11-26), cause not found: a kernel slow to start while the other test worker starts its
    servers, or one whose ports another process took between jupyter_client's pick and the
    kernel's bind. So the kernel gets 120 s to start, and talks over Unix sockets in a directory
    of its own instead of TCP ports found the way Streamlit's, PostgreSQL's and HAProxy's are."""
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        transport = Config({"KernelManager": {"transport": "ipc", "ip": f"{sockets}/k"}})
        client = NotebookClient(
            book, kernel_name="python3", timeout=timeout, startup_timeout=120, config=transport
        )
        client.execute()
    return book


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


@pytest.fixture(autouse=True)
def grad_mode_as_it_was():
    """A notebook's cell file run in this process (test_notebook_cells.py) turns autograd off for
    the process, as the notebook does for its kernel; the next test in the worker (training the
    language model) then had no gradients. Each test gets the mode it started with back."""
    enabled = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(enabled)


ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")
LESSON_PAGES = [lesson.path for lesson in LESSONS]  # the navigation's own list


def open_page(page: str | None = None, *, closed: bool = False, **params: str) -> AppTest:
    """Run the app from its entry file with link parameters, then switch to a page (as a deep
    link does); with Take it home and Check yourself opened, as a learner who reads the page to
    its end opens them (`closed=True`: as the page first draws, both closed)."""
    at = AppTest.from_file(APP, default_timeout=120)
    if not closed:
        open_sections(at)
    for key, value in params.items():
        at.query_params[key] = str(value)
    if page is not None:
        at.switch_page(page)
    return at.run()


def further_titles() -> list[str]:
    """Every Going further section's title, read from the code that draws it."""
    sources = [*ROOT.glob("pages/*.py"), *ROOT.glob("dashboard/**/*.py")]
    sources.remove(ROOT / "dashboard/render/layout.py")  # where it is defined
    calls = [m for p in sources for m in re.finditer(r"going_further\(", p.read_text())]
    titles = [t for p in sources for t in re.findall(r'going_further\(\s*"([^"]+)"', p.read_text())]
    assert len(titles) == len(calls), "a going_further title that is not a plain string"
    return titles


OPENED = (
    *lesson_frame.SECTIONS,
    *(layout.further_key(title) for title in further_titles()),
    *(lesson_frame.lecture_key(lecture.title) for lecture in COURSE),
)


def open_sections(at: AppTest) -> AppTest:
    """Take it home, Check yourself, every Going further and the course plan's lectures open
    in this session, as clicking their labels does."""
    for key in OPENED:
        at.session_state[key] = True
    return at


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def as_read(markdown: str) -> str:
    """A markdown element's text as a student reads it: backslash escapes and the word joiners
    that keep an address from becoming a link (they draw nothing) removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def texts(at) -> list[str]:
    """Every sentence a page shows in markdown, captions and alerts, as a student reads it."""
    shown = (*at.markdown, *at.caption, *at.info, *at.warning, *at.error)
    return [as_read(m.value) for m in shown]


def said(at, *fragments: str) -> bool:
    """Whether one of the page's sentences holds every fragment."""
    return any(all(f in text for f in fragments) for text in texts(at))


# A minus sign straight after an operator: "−0.2 − −0.2", "× −0.1", "+ -3" must be "(−0.2)"
NAKED_NEGATIVE = re.compile(r"(?:[-−+×/]|\\times|\\cdot)\s*[-−]\s*\d")


def naked_negatives(latex: str) -> list[str]:
    """Negative numbers written straight after an operator, without parentheses."""
    return NAKED_NEGATIVE.findall(latex)


def table(element):
    """A shown table as a DataFrame indexed by its row labels (its first, pinned column)."""
    frame = element.value
    return frame.set_index(frame.columns[0])


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright (skipped, or failed under CI=true, when
    Chromium is missing)."""
    from chromium import CHROMIUM_FLAGS, chromium_path
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def default_drills(exercise_set=0):
    """The drills lesson 8 shows at the default settings (seed 0, T = 6, d_model 8, 2 heads)."""
    x = random_embeddings(6, 8, 0).x
    with torch.no_grad():
        trace = seeded_layer(0, 8, 2)(x, "causal")
    labels = [f"t{i}" for i in range(6)]
    drills = make_drills(trace, labels, causal=True, seed=0 * SEED_STRIDE + exercise_set)
    return {d.kind: d for d in drills}


def by_hand(at: AppTest, number: int):
    """Lesson 5's By hand answer box `number` (keyed by its question's numbers too)."""
    prefix = f"check_worked_example_hand_{number}_"
    return next(box for box in at.text_input if str(box.key).startswith(prefix))


def printed(element) -> list[str]:
    """What an element shows as text: a table's cells as a student reads them (4 decimals)."""
    if element.type in ("dataframe", "arrow_data_frame"):
        frame = element.value
        cells = [frame[c].tolist() for c in frame.columns] + [list(frame.columns)]
        return [f4(v) if isinstance(v, float) and v == v else str(v) for col in cells for v in col]
    value = getattr(element, "value", None)
    return [str(value)] if isinstance(value, str | int | float) else []


def before_check(at):
    """The elements the page shows above its Check yourself section (opened)."""
    check = [e for e in at.expander if e.label == "Check yourself"]
    assert check, "no Check yourself section"
    inside = {id(element) for element in elements(check[0])}
    assert inside, "Check yourself is closed: open_page opens it"
    shown = []
    for element in elements(at.main):
        if id(element) in inside:
            return shown
        shown.append(element)
    raise AssertionError("no Check yourself section")
