"""A drill on the screen, for every lesson's Check yourself and lesson 8's drills: the numbers
it gives (a small table beside their heatmap), the verdict on an answer (a hint first, the
answer and the working after a second try) and the working. Below the lessons: lesson_frame and
views/drills.py both draw with it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import streamlit as st
import torch

from attention.drills import Drill, Given, Grade, hint
from dashboard import state
from dashboard.render import blocks
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import Recorded, record, replay
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import arrow_table, matrix_view
from dashboard.render.tables import corner_title
from dashboard.text import plain

KIND_OF_ROW = {"argmax": "score", "score": "projection", "weight": "score", "output": "projection"}


def number_row(values: tuple) -> bool:
    """A row of numbers (None = blocked), not of yes/no (bool) or positions (int)."""
    return all(v is None or (isinstance(v, float)) for v in values)


def label_table(rows: list, columns: tuple[str, ...]) -> pa.Table:
    """Rows of yes/no or positions as printed: True / False and whole numbers, never 1.0000."""
    corner = corner_title("row", "column", list(columns))
    arrays = [pa.array([name for name, _ in rows], pa.string())]
    arrays += [
        pa.array([str(values[c]) for _, values in rows], pa.string()) for c in range(len(columns))
    ]
    return pa.Table.from_arrays(arrays, names=[corner, *columns])


def show_given(drill: Drill, screen: tuple[int, int] | None = None) -> None:
    """What a drill needs: its numbers in a small table beside their heatmap (blocked cells
    masked), and rows of yes/no or positions in a table of their own, printed as they are. On
    a projector's `screen`, the numbers' heatmap alone (its cells print them), else the rows
    as an HTML table, scaled with the section (presenter.FIT)."""
    if drill.given is None:
        return
    numbers, labels, view = given_elements(drill.given, drill.kind)
    if screen is not None:
        rows = [row for row in drill.given.rows if not number_row(row[1])]
        if view is not None:
            blocks.show_fitted(view, "The drill's numbers", *screen)
        elif rows:
            st.table(label_table(rows, drill.given.columns), hide_index=True, width="content")
        return
    with wrapping_row():
        with st.container(width="content"):
            for table in (numbers, labels):
                if table is not None:
                    replay(table)
        if view is not None:
            show_heatmap(view, "The drill's numbers")


@state.cached  # one drill's tables, marshalled once for every session (render/elements.py)
def given_elements(given: Given, kind: str) -> tuple[Recorded | None, Recorded | None, object]:
    """The elements of a drill's given numbers: the number rows' table, the yes/no or
    positions table, and the number rows' heatmap view (None where there are none)."""
    rows = [(name, values) for name, values in given.rows if number_row(values)]
    labels = [(name, values) for name, values in given.rows if not number_row(values)]
    numbers = heatmap = None
    if rows:
        names = [name for name, _ in rows]
        values = np.array([[np.nan if v is None else v for v in row] for _, row in rows])
        table, config = arrow_table(
            values, names, list(given.columns), "row", "column", np.isnan(values)
        )
        width = natural_width(config, table.num_columns)
        # a blocked cell is empty, as the questions say ("blocked keys empty"), not "None"
        numbers = record(lambda dg: dg.dataframe(
            table, column_config=config, hide_index=True, width=width, placeholder=""
        ))  # fmt: skip
        if kind in KIND_OF_ROW:
            heatmap = numbers_view(given, rows, kind)
    shown = None
    if labels:
        label_rows = label_table(labels, given.columns)
        shown = record(lambda dg: dg.dataframe(label_rows, hide_index=True, width="content"))
    return numbers, shown, heatmap


def numbers_view(given: Given, rows: list, drill_kind: str):
    """The heatmap of a drill's number rows (blocked cells masked)."""
    values = np.array([[0.0 if v is None else v for v in row] for _, row in rows])
    blocked = np.array([[v is None for v in row] for _, row in rows])
    return matrix_view(
        tuple(name for name, _ in rows),
        tuple(given.columns),
        _matrix=torch.from_numpy(values),
        _blocked=torch.from_numpy(blocked),
        kind=KIND_OF_ROW[drill_kind],
        row_title="row",
        col_title="key" if drill_kind != "score" else "feature",
    )


def show_verdict(verdict: Grade, drill: Drill, box: str = "") -> None:
    """Right or wrong with the full working; a message for an answer that cannot be read. A
    first wrong answer in a `box` gets a hint and a second try: the answer and the working
    come after a second wrong answer, or on request."""
    message = plain(verdict.message)
    if verdict.status == "invalid":
        st.warning(message, icon=":material/help:")
        return
    if verdict.status == "right":
        st.success(message, icon=":material/check_circle:")
    elif box and first_wrong(box, message):
        st.error(
            plain(f"Not quite. Hint: {hint(drill, verdict)} Try again."), icon=":material/cancel:"
        )
        with st.expander("Show the answer and the working"):
            st.error(message, icon=":material/cancel:")
            show_working(verdict, drill, expanded=None)
        return
    else:
        st.error(message, icon=":material/cancel:")
    show_working(verdict, drill, expanded=verdict.status == "wrong")


def first_wrong(box: str, message: str) -> bool:
    """Whether this wrong answer is the first one typed in the box (a box remembers its wrong
    answers for the session: retyping the same one is still the first)."""
    tried = st.session_state.setdefault(f"{box}_wrong", [])
    if message not in tried:
        tried.append(message)
    return tried.index(message) == 0


def show_working(verdict: Grade, drill: Drill, expanded: bool | None) -> None:
    """The bug hunt's page for the classic mistake the number matches, and the working: in an
    expander (open when `expanded`), or as it is (None: already inside one)."""
    if verdict.mistake is not None:  # a classic mistake gives that number: see it break
        for name, title in zip(verdict.mistake.bugs, verdict.mistake.titles, strict=True):
            st.page_link(
                "pages/bug_hunt.py",
                label=f"See it in the bug hunt: {title}",
                icon=":material/bug_report:",
                query_params={"mode": "explore", "bug": name},
            )
    if expanded is None:
        st.code("\n".join(drill.working), language=None, wrap_lines=True)
        return
    with st.expander("The working", expanded=expanded):
        st.code("\n".join(drill.working), language=None, wrap_lines=True)
