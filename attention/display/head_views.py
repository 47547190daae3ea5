"""Lesson 2's blocks: one heatmap per head on a shared scale, and every shape at a glance."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention import STAGES
from attention.display.lessons import Lesson
from attention.display.views import (
    STAGE_BY_NAME,
    show_heatmap,
    stage_view,
)
from attention.explain import (
    largest_magnitude,
)


def show_heads(lesson: Lesson, name: str, per_row: int = 4) -> None:
    """One heatmap per head on one shared colour scale."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    per_row = min(per_row, trace.n_heads)
    for start in range(0, trace.n_heads, per_row):
        columns = st.columns(per_row)
        for offset, column in enumerate(columns):
            head = start + offset
            if head >= trace.n_heads:
                break
            view = stage_view(lesson, name, head, domain)
            with column:
                st.markdown(f"**head {head}**")
                show_heatmap(view)


def show_shape_summary(lesson: Lesson) -> None:
    """Every stage's named and actual shape, as one table."""
    trace = lesson.trace
    rows = [
        {
            "stage": s.title,
            "formula": s.formula,
            "dimensions": f"({', '.join(s.dims)})",
            "shape": str(tuple(trace.stage(s.name).shape)),
        }
        for s in STAGES
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        column_config={"formula": st.column_config.TextColumn("formula (LaTeX)")},
    )
