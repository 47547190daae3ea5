"""Lesson 2's blocks: one heatmap per head on a shared scale, and every shape at a glance."""

from __future__ import annotations

import inspect

import pandas as pd
import streamlit as st

from attention import STAGES
from attention.explain import fused_difference, largest_magnitude, merged
from attention.layer import MultiHeadSelfAttention, head_columns
from dashboard.lessons import Lesson
from dashboard.render.blocks import is_picture, picture_note, show_heatmap, show_matrix
from dashboard.render.matrices import STAGE_BY_NAME, matrix_view, stage_view
from dashboard.render.tables import feature_labels


def show_split(lesson: Lesson) -> None:
    """Which columns of Q belong to which head, and Q itself with every head side by side."""
    trace = lesson.trace
    T, H, d_head = len(lesson.labels), trace.n_heads, trace.d_head
    C = H * d_head
    rows = []
    for h in range(H):
        columns = head_columns(C, H, h)
        rows.append({
            "head": h,
            "columns of Q, K, V": f"d{columns.start} … d{columns.stop - 1}",
            "q, k, v shape": f"(T, d_head) = ({T}, {d_head})",
        })  # fmt: skip
    st.dataframe(rows, hide_index=True)
    q_full = matrix_view(
        tuple(lesson.labels),
        tuple(feature_labels(C)),
        _matrix=merged(trace, "q"),
        kind="projection",
        row_title="token",
        col_title="feature",
    )
    show_matrix(
        q_full,
        "q_full",
        "Q = X W_q, all heads side by side",
        f"Shape (T, C) = ({T}, {C}): columns d0 … d{d_head - 1} are head 0's, and so on.",
    )


def show_heads(lesson: Lesson, name: str) -> None:
    """One heatmap per head on one shared colour scale, side by side in a row that wraps: as
    many a line as the page has room for, each keeping its square cells."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    row = st.container(horizontal=True, gap="medium")
    views = [stage_view(lesson, name, head, domain) for head in range(trace.n_heads)]
    for head, view in enumerate(views):
        with row.container(width="content"):
            st.markdown(f"**head {head}**")
            show_heatmap(view, f"{view.name}, head {head}", note=False)
    picture_note(is_picture(views[0]))


def show_shape_summary(lesson: Lesson) -> None:
    """Every stage's named and actual shape, as one table."""
    trace = lesson.trace
    rows = [
        {
            "stage": s.title,
            "dimensions": f"({', '.join(s.dims)})",
            "shape": str(tuple(trace.stage(s.name).shape)),
        }
        for s in STAGES
    ]
    # tall enough for every row: no inner scroll for the last one
    st.dataframe(pd.DataFrame(rows), hide_index=True, height=36 * (len(rows) + 1) + 3)


def show_fused_projection(lesson: Lesson) -> None:
    """One C -> 3C projection gives the same Q, K, V as three C -> C ones."""
    C = lesson.trace.n_heads * lesson.trace.d_head
    difference = fused_difference(lesson.layer, lesson.embedded.x)
    st.markdown(
        f"Implementations such as nanoGPT compute Q, K and V with **one** linear layer from C to "
        f"3C = {3 * C} columns and split the result in three. Stacking W_q, W_k and W_v gives "
        f"that (3C, C) = ({3 * C}, {C}) weight. On this input the largest difference between the "
        f"fused and the separate projections is **{difference:.1e}**: the same numbers, one "
        "matrix multiply."
    )
    st.code(inspect.getsource(MultiHeadSelfAttention.project_qkv_fused), language="python")
