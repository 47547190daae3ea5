"""What the class learned, as pictures (issue 52, item 2): the class's share right per concept
before and after, side by side, and each student's score before and after, by seat. Pure: each
returns an Altair chart and calls no st.* (the page's SVG and PNG buttons save them)."""

from __future__ import annotations

import altair as alt
import pandas as pd

WHEN_COLOURS = alt.Scale(domain=["before", "after"], range=["#9e9e9e", "#1f77b4"])
PERCENT_AXIS = alt.Axis(values=[0, 25, 50, 75, 100], title="% right")
WHEN = alt.Color("when:N", scale=WHEN_COLOURS, title=None, legend=alt.Legend(orient="top"))
PERCENT_TIP = alt.Tooltip("percent:Q", title="% right", format=".0f")


def per_concept_chart(per_concept: pd.DataFrame) -> alt.Chart:
    """One row per concept, a grey bar for before and a blue one for after (% right, 0-100)."""
    long = per_concept.melt(
        id_vars="concept", value_vars=["right before", "right after"], var_name="when",
        value_name="share",
    )  # fmt: skip
    long = long.assign(
        when=long["when"].str.removeprefix("right "),
        percent=(100 * long["share"]).round(0),
    )
    return (
        alt.Chart(long, title="Right per concept, before and after the course")
        .mark_bar()
        .encode(
            y=alt.Y(
                "concept:N",
                sort=list(per_concept["concept"]),
                title=None,
                axis=alt.Axis(labelLimit=320),
            ),
            yOffset=alt.YOffset("when:N", sort=["before", "after"]),
            x=alt.X("percent:Q", scale=alt.Scale(domain=[0, 100]), axis=PERCENT_AXIS),
            color=WHEN,
            tooltip=[
                alt.Tooltip("concept:N"),
                alt.Tooltip("when:N"),
                PERCENT_TIP,
            ],
        )
    )


def students_chart(students: pd.DataFrame) -> alt.LayerChart:
    """One row per seat: a line from the score before (grey dot) to the score after (blue)."""
    long = students.melt(
        id_vars="seat", value_vars=["before %", "after %"], var_name="when", value_name="percent"
    )
    long = long.assign(when=long["when"].str.removesuffix(" %"))
    seat = alt.Y("seat:O", title="seat", sort="ascending")
    x = alt.X("percent:Q", scale=alt.Scale(domain=[0, 100]), axis=PERCENT_AXIS)
    line = alt.Chart(long).mark_line(color="#bdbdbd").encode(x=x, y=seat, detail="seat:O")
    dots = (
        alt.Chart(long)
        .mark_circle(size=90, opacity=1)
        .encode(
            x=x,
            y=seat,
            color=WHEN,
            tooltip=[
                alt.Tooltip("seat:O"),
                alt.Tooltip("when:N"),
                PERCENT_TIP,
            ],
        )
    )
    return alt.layer(line, dots, title="Each student, before → after (by seat)")
