"""The class's answers as a table and an Altair bar chart (pure: returns data, calls no st.*)."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import pandas as pd

from dashboard.text import visible

# read from the back of the room: the value on one line, the mistake that gives it on the next,
# never cut ("0.1415 · softmax over the target axis or taking Q from the sou…", issue 52, item 7)
LARGE_LABELS = alt.Axis(labelLimit=0, labelFontSize=16, labelExpr="split(datum.label, ' · ')")
VERDICT_COLOURS = {"right": "#2e7d32", "wrong": "#c62828", "answer": "#1f77b4"}


def tally_frame(
    counts: dict[str, int],
    answered: int,
    right: Callable[[str], bool] | None = None,
    causes: dict[str, str] | None = None,
) -> pd.DataFrame:
    """One row per answer, in the store's order: its count, its share of the answers (%), and,
    once revealed (`right` given), whether it is right; a wrong answer a classic mistake gives
    is named after it (`causes`: answer -> the mistake in words)."""
    causes = causes or {}
    shares = percentages(list(counts.values()))
    rows = [
        {
            "answer": visible(value + (f" · {causes[value]}" if value in causes else "")),
            "students": n,
            "percent": share,
            "verdict": "answer" if right is None else ("right" if right(value) else "wrong"),
        }
        for (value, n), share in zip(counts.items(), shares, strict=True)
    ]
    return pd.DataFrame(rows, columns=["answer", "students", "percent", "verdict"])


def percentages(counts: list[int]) -> list[int]:
    """Whole percentages that add up to 100 (largest remainders get the rounding), so that a
    projector never shows 34 % + 33 % + 34 %; all 0 when nobody answered."""
    total = sum(counts)
    if total == 0:
        return [0] * len(counts)
    exact = [100 * n / total for n in counts]
    shares = [int(e) for e in exact]
    by_remainder = sorted(range(len(counts)), key=lambda k: exact[k] - shares[k], reverse=True)
    for k in by_remainder[: 100 - sum(shares)]:
        shares[k] += 1
    return shares


def tally_chart(frame: pd.DataFrame, title: str) -> alt.LayerChart:
    """Horizontal bars, one per answer, labelled with the count and the percentage; green and
    red once the answer is revealed."""
    frame = frame.assign(
        label=[f"{n} ({p}%)" for n, p in zip(frame.students, frame.percent, strict=True)]
    )
    order = list(frame["answer"])
    present = [v for v in VERDICT_COLOURS if v in set(frame["verdict"])] or ["answer"]
    base = alt.Chart(frame, title=title).encode(
        y=alt.Y("answer:N", sort=order, title=None, axis=LARGE_LABELS),
        x=alt.X("students:Q", title="students", axis=alt.Axis(tickMinStep=1, labelFontSize=14)),
        tooltip=[
            alt.Tooltip("answer:N", title="answer"),
            alt.Tooltip("students:Q", title="students"),
            alt.Tooltip("percent:Q", title="% of answers"),
        ],
    )
    bars = base.mark_bar().encode(
        color=alt.Color(
            "verdict:N",
            scale=alt.Scale(domain=present, range=[VERDICT_COLOURS[v] for v in present]),
            legend=None if present == ["answer"] else alt.Legend(title=None, orient="bottom"),
        )
    )
    text = base.mark_text(align="left", dx=4, fontSize=16).encode(text="label:N")
    return (bars + text).properties(
        # Streamlit fits the whole chart (title, axis, legend) into the height: 48 px a bar
        height=120 + 48 * len(frame),
        description=f"{title}: how many students gave each answer",
    )


def show_given(given) -> None:
    """`st.table(given_frame(given))`, marshalled once for every screen that shows these numbers
    (a class of sixty brought to the question draws the same table sixty times)."""
    from dashboard.render.elements import show_once

    show_once(("given_table", given), lambda dg: dg.table(given_frame(given)))


def given_frame(given) -> pd.DataFrame:
    """A question's numbers (store.Given) as a table: a row per named row, a column per named
    column, each cell as the lesson prints it."""
    return pd.DataFrame(
        [list(cells) for _, cells in given.rows],
        index=[name for name, _ in given.rows],
        columns=list(given.columns),
    )
