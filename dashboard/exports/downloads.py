"""The Take it home buttons: the only Streamlit calls of the exports. Each file is built only
when its button is clicked."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from urllib.parse import urlsplit

import nbformat
import streamlit as st

from dashboard.exports.csv_tables import tables_zip
from dashboard.exports.json_trace import trace_json
from dashboard.exports.notebooks import exercise_notebook, lesson_notebook
from dashboard.lessons import Computed


def download_name(kind: str) -> str:
    """A download's name after the lesson it comes from, `step_by_step_exercises.ipynb`: the
    page's address (its last part), so files from two lessons never overwrite each other in a
    Downloads folder. "attention_…" where there is no address (a test without a browser)."""
    url = st.context.url or ""
    page = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or "attention"
    return f"{page}_{kind}"


def show_notebook_download(
    build: Callable[[], nbformat.NotebookNode],
    file_name: str,
    help: str = "Rebuilds this page's numbers in plain PyTorch and checks each one against it.",
    where=st,
) -> None:
    """The *Take it home as a notebook* button (in `where`); the notebook is built on click."""
    where.download_button(
        "Take it home as a notebook",
        data=lambda: nbformat.writes(build()).encode(),
        file_name=file_name,
        mime="application/x-ipynb+json",
        on_click="ignore",
        icon=":material/code:",
        key="notebook",
        help=help,
    )


def show_downloads(lesson: Computed, section: Callable[[], list] | None = None) -> None:
    """Take it home: the trace as JSON, every table as CSV, a notebook that rebuilds it all
    (and, given a lesson's `section`, what that lesson adds). Each file is built only when
    clicked."""
    # a row that wraps, each button as wide as its label: three equal columns cut "Take it home
    # as a notebook" at 1024 x 768
    row = st.container(horizontal=True, gap="small")
    row.download_button(
        "The whole trace (JSON)",
        data=lambda: trace_json(lesson),
        file_name=download_name("trace.json"),
        mime="application/json",
        on_click="ignore",
        icon=":material/download:",
        key="trace_json",
        help="Settings, tokens, mask, W_q, W_k, W_v, W_o and every stage at full precision "
        '(a masked score is the string "-Infinity": JSON has no infinities).',
    )
    row.download_button(
        "Every table (CSV, zip)",
        data=lambda: tables_zip(lesson),
        file_name=download_name("tables.zip"),
        mime="application/zip",
        on_click="ignore",
        icon=":material/table:",
        key="tables_zip",
        help="One file per stage and head (q_head0.csv, …), every digit: a masked weight is 0.0, "
        "a masked score -Infinity, as the tables' own CSV download writes them.",
    )
    show_notebook_download(
        partial(lesson_notebook, lesson, section),
        download_name("rebuilt.ipynb"),
        help="Rebuilds this view in plain PyTorch and checks every number against this page.",
        where=row,
    )
    show_exercises(partial(exercise_notebook, lesson), where=row)


EXERCISE_WORDS = (
    "A notebook with this page's numbers where you write each step (the split, the scores, the "
    "scaling, the mask, the softmax, weights times V, the concat); a check under each compares "
    "yours with this page. Runs on your computer, never here."
)


def show_exercises(
    build: Callable[..., nbformat.NotebookNode], words: str = EXERCISE_WORDS, where=st
) -> None:
    """The two exercise buttons: a notebook whose steps the learner writes, each checked
    against the page, and the same notebook solved; `build(solved=...)` makes it (for a layer:
    notebooks.exercise_notebook). Built only when clicked. Side by side, in a row that wraps
    (in `where`'s row, or a row of their own)."""
    if where is st:
        where = st.container(horizontal=True, gap="small")
    for solved, label, name, help_text in (
        (False, "Exercises: write each step", download_name("exercises.ipynb"), words),
        (True, "The exercises, solved", download_name("exercises_solved.ipynb"),
         "The same notebook with every step written."),
    ):  # fmt: skip
        where.download_button(
            label,
            data=partial(lambda solved: nbformat.writes(build(solved=solved)).encode(), solved),
            file_name=name,
            mime="application/x-ipynb+json",
            on_click="ignore",
            icon=":material/edit_note:" if not solved else ":material/task_alt:",
            key=f"exercises_{int(solved)}",
            help=help_text,
        )
