"""Three files make a lesson (issue 43; docs/architecture.md, "Adding a lesson").

A scratch lesson, one after the last, is written into a copy of the tree as exactly three files:
its maths in `attention/`, its lesson module in `dashboard/views/`, its page in `pages/`. No
other file is touched. The suite's own tests then run in that copy, and every test that reads
lessons from the registry must pick the scratch lesson up: the navigation and the home page, the
course plan's validation, presenter mode, the link parameters, class mode (a teacher asks its
question, the tally counts it), the glossary, its reading time, the layout's scan, and the house's
import rules. A part the recipe forgets, a list kept by hand somewhere, fails here. Then the
scratch lesson breaks the rules (issue 54): a newcomer reads the spec's message, saying how to
meet each, when the app stops at import and in each red test that draws the page.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.frame import LESSONS

ROOT = Path(__file__).resolve().parents[1]
NUMBER = len(LESSONS) + 1

MATHS = '''"""A scratch lesson's maths: one score, q · k, for a seeded query and key."""

from __future__ import annotations

import torch

from attention import questions
from attention.drills import Drill, Given


def query_and_key(seed: int, d_k: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k: (d_k,) each, drawn from N(0, 1) with the seed."""
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(d_k, generator=generator)  # (d_k,)
    k = torch.randn(d_k, generator=generator)  # (d_k,)
    return q, k


def score(q: torch.Tensor, k: torch.Tensor) -> float:
    """The raw score q · k."""
    return float(q @ k)


def scratch_questions(seed: int) -> tuple[Drill, ...]:
    """Check yourself: the score of the page's q and k."""
    q, k = query_and_key(seed)
    given = Given(tuple(f"{i}" for i in range(len(q))), (("q", tuple(map(float, q))),
                  ("k", tuple(map(float, k)))))
    truth = score(q, k)
    working = (" + ".join(f"{a:.4f}·{b:.4f}" for a, b in zip(q.tolist(), k.tolist())),)
    return (
        questions.number("What is q · k?", given, truth, truth, working, "q · k"),
        questions.whole("How many products does q · k add up?", given, len(q),
                        (f"one per column of q: d_k = {len(q)}",)),
    )
'''

LESSON_MODULE = f'''"""Lesson {NUMBER} (scratch): one score, drawn and asked."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from attention import scratch
from attention.drills import Drill
from dashboard import controls
from dashboard.controls import Settings
from dashboard.render import charts
from dashboard.render.elements import show_chart
from dashboard.render.presenter import Section
from dashboard.spec import LessonSpec


def show_vectors(seed: int) -> None:
    q, k = scratch.query_and_key(seed)
    frame = pd.DataFrame({{"column": range(len(q)), "q": q.tolist(), "k": k.tolist()}})
    st.dataframe(frame, hide_index=True)
    frame["q·k product"] = frame.q * frame.k
    show_chart(("scratch", seed), lambda: charts.bars(frame, x="column", y="q·k product",
                                                      title="q·k, column by column"))


def sections() -> list[Section]:
    seed = controls.current_settings().seed
    return [
        Section("q and k", partial(show_vectors, seed), "Ask: what is their dot product?",
                key="vectors"),
        Section("The score", partial(st.write, scratch.score(*scratch.query_and_key(seed))),
                "Ask: how large can it get?", key="score"),
        Section("Its size", partial(st.write, "d_k products, added"), "Ask: how many?",
                key="size"),
    ]


def lesson_questions(seed: int) -> tuple[Drill, ...]:
    return scratch.scratch_questions(seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    return lesson_questions(s.seed)


LESSON = LessonSpec(
    number={NUMBER},
    path="pages/scratch.py",
    title="{NUMBER} · Scratch",
    icon=":material/science:",
    summary="One score, drawn and asked: a lesson made of three files.",
    uses=("seed",),
    objectives=("compute a score q · k", "say what a score measures"),
    recap="a score is a dot product of a query and a key.",
    params=("scratch_d",),
    minutes=6,
    sections=sections,
    class_questions=class_questions,
)
'''

PAGE = f'''"""Lesson {NUMBER} (scratch): one score."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import controls, lesson_frame
from dashboard.render import layout, presenter
from dashboard.views import scratch as view

WORDS = " ".join(
    ["A score is the dot product of a query and a key: multiply them column by column, then add "
     "the products. A large score says the key matches what the query looks for."] * 8
)
presenter.present(view.sections)
lesson_frame.title(__file__)
seed = controls.current_settings().seed
st.markdown(WORDS)
lesson_frame.objectives(__file__)
st.header("q and k")
d_k = st.slider("d_k", 2, 8, layout.remember_default("scratch_d", 4), key="scratch_d",
                bind="query-params")
lesson_frame.reset_button(__file__)
view.show_vectors(seed)
lesson_frame.finish(__file__, lambda: view.lesson_questions(seed))
'''

FILES = {
    "attention/scratch.py": MATHS,
    "dashboard/views/scratch.py": LESSON_MODULE,
    "pages/scratch.py": PAGE,
}

# The tests that read lessons from the registry, each with what it must run for the scratch
# lesson (a -k expression over its parametrized ids) or "" for the whole file
PICKED_UP = {
    "tests/dashboard/test_spec.py": "",
    "tests/dashboard/test_app.py": "scratch",
    "tests/dashboard/test_presenter.py": "scratch",
    "tests/dashboard/test_lesson_urls.py": "scratch",
    "tests/dashboard/test_course.py": "scratch or home_page_links",
    "tests/dashboard/test_glossary.py": "scratch",
    "tests/dashboard/test_reading_times.py": "scratch or home",
    "tests/classroom/test_asking.py": "scratch",
    "tests/test_house.py": "circle or arrow or lesson or string",
}


def copy_tree(into: Path) -> None:
    """The repository's tracked files (what a clone holds), copied."""
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


@pytest.fixture(scope="module")
def scratch_tree(tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("tree")
    copy_tree(tree)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the tree"], cwd=tree, check=True)
    for name, text in FILES.items():
        (tree / name).write_text(text, encoding="utf-8")
    return tree


def test_the_scratch_lesson_is_three_new_files_and_nothing_else(scratch_tree):
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=scratch_tree,
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert sorted(status) == sorted(f"?? {name}" for name in FILES)


def run_in(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'tests'}"}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=900
    )


def test_the_registry_of_the_copy_holds_the_scratch_lesson(scratch_tree):
    shown = run_in(
        scratch_tree,
        "-c",
        "from dashboard.frame import LESSONS;"
        "print([lesson.path for lesson in LESSONS]); print(LESSONS[-1].minutes)",
    )
    assert shown.returncode == 0, shown.stderr
    paths, minutes = shown.stdout.splitlines()
    assert paths.endswith("'pages/scratch.py']")
    assert minutes == "6"


def test_every_test_that_reads_the_registry_picks_the_scratch_lesson_up(scratch_tree):
    """One pytest run in the copy (one start-up, not one a file): each file's selection is a
    -k clause on its module's name."""
    clauses = [
        f"({Path(path).stem} and ({selection}))" if selection else Path(path).stem
        for path, selection in PICKED_UP.items()
    ]
    args = ["-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rA", *PICKED_UP]
    done = run_in(scratch_tree, *args, "-k", " or ".join(clauses))
    assert done.returncode == 0, f"{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    passed = [line for line in done.stdout.splitlines() if line.startswith("PASSED ")]
    for path, selection in PICKED_UP.items():  # each file ran tests, for the scratch lesson
        own = [line for line in passed if line.startswith(f"PASSED {path}::")]
        assert own, path
        if "scratch" in selection:
            assert any("scratch" in line for line in own), path


# The scratch lesson broken against the rules (dashboard/spec.py), and what a newcomer then
# reads: at import, the declaration's (LessonSpec.missing); in the red tests that draw the page,
# the page's (LessonSpec.unmet_on_page), each saying how to meet the rule
BAD_DECLARATION = LESSON_MODULE.replace(f'title="{NUMBER} · Scratch",', 'title="Scratch",').replace(
    'objectives=("compute a score q · k", "say what a score measures"),',
    'objectives=("compute a score q · k",),',
)
BAD_PAGE = {
    "dashboard/views/scratch.py": LESSON_MODULE.replace("minutes=6,", "minutes=2,").replace(
        """        Section("Its size", partial(st.write, "d_k products, added"), "Ask: how many?",
                key="size"),
""",
        "",
    ),
    "pages/scratch.py": PAGE.replace(
        "view.show_vectors(seed)\n",
        "view.show_vectors(seed)\n"
        "from attention import scratch\n"
        'st.write(f"q · k = {scratch.score(*scratch.query_and_key(seed)):.4f}")\n',
    ),
}
TOLD = {  # the red test: what it says
    "tests/dashboard/test_reading_times.py": "minutes: 2 declared, its words read in ",
    "tests/dashboard/test_presenter.py": "sections: 2 presenter sections, a lesson has 3 to 11",
    "tests/dashboard/test_course.py": "answers: question 1's answer, ",
}


def written(tree: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tree / name).write_text(text, encoding="utf-8")


def test_a_scratch_declaration_breaking_a_rule_stops_the_app_saying_how(scratch_tree):
    try:
        written(scratch_tree, {"dashboard/views/scratch.py": BAD_DECLARATION})
        done = run_in(scratch_tree, "-c", "import dashboard.frame")
    finally:
        written(scratch_tree, FILES)
    assert done.returncode != 0
    assert "views/scratch.py: its LESSON breaks the rules of a declaration" in done.stderr
    assert f'must start with its number and a middle dot: title="{NUMBER} · Scratch"' in done.stderr
    assert "objectives: 1 declared, a lesson needs 2 to 4" in done.stderr


def test_a_scratch_page_breaking_a_rule_is_told_how_by_the_red_test(scratch_tree):
    """Its minutes off its words, two presenter sections, an answer printed on the page: each
    test that draws it fails with the spec's message, whole."""
    selection = "scratch and (reading_time or every_lesson_has_sections or (no_answer and params0))"
    try:
        written(scratch_tree, BAD_PAGE)
        done = run_in(
            scratch_tree, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rA",
            *TOLD, "-k", selection,
        )  # fmt: skip
    finally:
        written(scratch_tree, FILES)
    assert done.returncode == 1, f"{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED ")]
    for path, says in TOLD.items():
        assert any(line.startswith(f"FAILED {path}::") for line in failed), (path, failed)
        assert says in done.stdout, (path, says)
    assert "set minutes=" in done.stdout and "ask about a number the page does not print" in (
        done.stdout
    )
