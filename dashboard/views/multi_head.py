"""Lesson 2's blocks: one heatmap per head on a shared scale, and every shape at a glance; the
page's sentences, which read right for one head as well as for several."""

from __future__ import annotations

import inspect
from functools import partial

import pandas as pd
import streamlit as st

from attention import STAGES
from attention.check_yourself.multi_head import multi_head_questions
from attention.drills import Drill
from attention.explain import fused_difference, largest_magnitude, merged
from attention.layer import MultiHeadSelfAttention, head_columns
from attention.ops import split_heads
from attention.tiny import TASKS
from dashboard import lessons
from dashboard.controls import Settings
from dashboard.lessons import Computed
from dashboard.render import blocks
from dashboard.render.blocks import (
    SCREEN,
    picture_note,
    show_fitted,
    show_heatmap,
    show_matrix,
)
from dashboard.render.elements import show_frame
from dashboard.render.matrices import STAGE_BY_NAME, cached_stage_view, matrix_view
from dashboard.render.presenter import Section, presenter_theme
from dashboard.render.tables import feature_labels
from dashboard.spec import LessonSpec


def where_heads_are(lesson: Computed) -> str:
    """For a one-head layer: where to see a split (another layer of the trained model with more
    heads, else the sidebar's Heads H)."""
    s = lesson.settings
    if s.source == "trained":
        heads = TASKS[s.task].size.heads  # heads per layer of the trained model
        others = [(layer, h) for layer, h in enumerate(heads) if h > 1 and layer != s.layer]
        if others:
            layer, h = others[0]
            return (
                f"Layer {layer} of this model has {h} heads: choose it (Layer) in the sidebar "
                "to see Q cut into heads."
            )
        return "Every layer of this trained model has one head."
    if s.source == "worked":
        return "The worked example has one head; choose another input X to set the heads."
    if s.source == "shakespeare":
        return "Every layer of the Shakespeare model has 4 heads."
    return "Set Heads H in the sidebar above 1 to see Q cut into heads."


def split_words(lesson: Computed) -> str:
    """The split of Q into heads, in words, for this layer's H."""
    trace = lesson.trace
    T, H, d_head = len(lesson.labels), trace.n_heads, trace.d_head
    C = H * d_head
    shape = f"Q = X W_q has shape (T, C) = ({T}, {C})."
    if H == 1:
        return (
            f"{shape} This layer has **one head**, so the split is the whole of Q: "
            f"d_k = C = {d_head}, and head 0 works with every column of Q, K and V. "
            + where_heads_are(lesson)
        )
    return (
        f"{shape} Multi-head attention does not compute new projections per head: it **cuts "
        f"Q's columns into {H} consecutive groups** of d_k = C / H = {d_head}. Head h works "
        "only with its own columns of Q, K and V."
    )


def heads_words(lesson: Computed) -> str:
    """What the per-head heatmaps show, for this layer's H."""
    if lesson.trace.n_heads == 1:
        return (
            "With one head there is one T × T attention pattern, computed from all of Q's and "
            "K's columns."
        )
    return (
        "Every head computes its own T × T attention pattern from its own columns. All heads "
        "share one colour scale, so their patterns can be compared directly."
    )


def merge_words(lesson: Computed) -> str:
    """Concat and W_o, in words, for this layer's H (and whether it has a W_o at all)."""
    H = lesson.trace.n_heads
    has_w_o = lesson.layer is None or lesson.layer.W_o is not None
    if H == 1:
        return (
            "The one head's output Z_0 = A_0 V_0 already has shape (T, C): the concat is Z_0 "
            "itself"
            + (
                ", and the output projection W_o mixes its columns."
                if has_w_o
                else ", and this layer has no output projection W_o."
            )
        )
    return (
        "Each head's output Z_h = A_h V_h has shape (T, d_k). Putting the heads side by side "
        "gives (T, C) again"
        + (
            ", and the output projection W_o mixes information across heads."
            if has_w_o
            else "; this layer has no output projection W_o to mix them."
        )
    )


def show_split(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    """Which columns of Q belong to which head, and Q itself with every head side by side;
    fitted to a projector's `screen`, the columns in one line above the heatmap."""
    trace = lesson.trace
    T, H, d_head = len(lesson.labels), trace.n_heads, trace.d_head
    C = H * d_head
    rows = []
    for h in range(H):
        columns = head_columns(C, H, h)
        rows.append({
            "head": h,
            "columns of Q, K, V": f"d{columns.start} … d{columns.stop - 1}",
            "q, k, v shape": f"(T, d_k) = ({T}, {d_head})",
        })  # fmt: skip
    if screen is None:
        show_frame(("head_columns", T, H, d_head), lambda: rows, hide_index=True)
    else:
        parts = [f"head {row['head']}: {row['columns of Q, K, V']}" for row in rows]
        st.markdown(f"C = {C} columns, d_k = {d_head} per head. " + "; ".join(parts) + ".")
    q_full = matrix_view(
        tuple(lesson.labels),
        tuple(feature_labels(C)),
        _matrix=merged(trace, "q"),
        kind="projection",
        row_title="token",
        col_title="feature",
    )
    caption = (
        f"Shape (T, C) = ({T}, {C}): every column, d0 … d{C - 1}, is head 0's."
        if H == 1
        else f"Shape (T, C) = ({T}, {C}): columns d0 … d{d_head - 1} are head 0's, and so on."
    )
    fitted = None if screen is None else (screen[0], screen[1] - 48)
    show_matrix(q_full, "q_full", "Q = X W_q, all heads side by side", caption, screen=fitted)


def show_split_code(lesson: Computed) -> None:
    """The split in PyTorch, with a batch of B sequences: view, then transpose, at this
    layer's sizes (the code the layer runs)."""
    trace = lesson.trace
    T, H, d_k = len(lesson.labels), trace.n_heads, trace.d_head
    C = H * d_k
    st.markdown(
        "In code the sequences come in a **batch** of B at once (here B = 1), so Q is "
        f"q_all of shape (B, T, C) = (1, {T}, {C}). Two steps cut it into heads: "
        f"`q_all.view(B, T, H, C // H)` reads each row's C = {C} numbers as H = {H} groups of "
        f"d_k = {d_k}, shape (1, {T}, {H}, {d_k}), moving no number; `.transpose(1, 2)` then "
        f"swaps T and H, shape (1, {H}, {T}, {d_k}), so each head is one (T, d_k) matrix and "
        "every head is computed at once, like more sequences of the batch. The layer's own "
        "code:"
    )
    st.code(inspect.getsource(split_heads), language="python")


def show_heads(lesson: Computed, name: str, screen: tuple[int, int] | None = None) -> None:
    """One heatmap per head on one shared colour scale, side by side in a row that wraps: as
    many a line as the page has room for, each keeping its square cells; fitted to a
    projector's `screen`, four a line at most, all on it."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    H = trace.n_heads
    present = presenter_theme()
    views = [cached_stage_view(lesson, name, head, domain, False, present) for head in range(H)]
    per_row = min(H, 4)
    lines = -(-H // per_row)
    row = st.container(horizontal=True, gap="medium" if screen is None else "small")
    for head, view in enumerate(views):
        with row.container(width="content", gap=None if screen else "small"):
            st.markdown(f"**head {head}**")
            if screen is None:
                show_heatmap(view, f"{view.name}, head {head}", note=False)
            else:
                width, height = screen[0] // per_row - 16, screen[1] // lines - 24
                show_fitted(view, f"{view.name}, head {head}", width, height)
    if screen is None:
        picture_note(views[0].picture)


def show_shape_summary(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    """Every stage's named and actual shape, as one table (on a projector's `screen`, an HTML
    table: scaled with the section, presenter.FIT)."""
    trace = lesson.trace
    rows = [
        {
            "stage": s.title,
            "dimensions": f"({', '.join(s.dims)})",
            "shape": str(tuple(trace.stage(s.name).shape)),
        }
        for s in STAGES
    ]
    if screen is not None:
        st.table(pd.DataFrame(rows), hide_index=True)
        return
    # tall enough for every row: no inner scroll for the last one
    shapes = tuple(row["shape"] for row in rows)
    show_frame(("stage_shapes", shapes), lambda: pd.DataFrame(rows), hide_index=True,
               height=36 * (len(rows) + 1) + 3)  # fmt: skip


def show_fused_projection(lesson: Computed) -> None:
    """One C -> 3C projection gives the same Q, K, V as three C -> C ones."""
    C = lesson.trace.d_model
    difference = fused_difference(lesson.layer, lesson.embedded.x)
    st.markdown(
        f"Implementations such as nanoGPT compute Q, K and V with **one** linear layer from C to "
        f"3C = {3 * C} columns and split the result in three. Stacking W_q, W_k and W_v gives "
        f"that (3C, C) = ({3 * C}, {C}) weight. On this input the largest difference between the "
        f"fused and the separate projections is **{difference:.1e}**: the same numbers, one "
        "matrix multiply."
    )
    st.code(inspect.getsource(MultiHeadSelfAttention.project_qkv_fused), language="python")


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 2: the split, every head's scores and weights, the merge, every shape."""
    lesson = blocks.current_lesson()
    screen = SCREEN
    return [
        Section("Splitting C columns into H heads", partial(show_split, lesson, screen),
                "Point at the column ranges. Ask: how many columns does each head get?",
                key="split"),
        Section("Scaled scores per head", partial(show_heads, lesson, "scaled", screen),
                "One colour scale for all heads. Ask: do two heads look at the same keys?",
                key="scaled_per_head"),
        Section("Attention weights per head", partial(show_heads, lesson, "weights", screen),
                "Ask: which head is most focused, and which spreads its weight?",
                key="weights_per_head"),
        blocks.stage_section(lesson, "concat"),
        blocks.stage_section(lesson, "output"),
        Section("Every shape at a glance", partial(show_shape_summary, lesson, screen),
                "Cover the shape column. Ask: what is the shape of the scores?", key="shapes"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(lesson: Computed) -> tuple[Drill, ...]:
    """The check-yourself questions: the split for a head count the page is not using."""
    return multi_head_questions(lesson.trace, lesson.settings.seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(lessons.computed_at(s))


LESSON = LessonSpec(
    number=2,
    path="pages/multi_head.py",
    title="2 · Multi-head",
    heading="2 · Multi-head attention",
    minutes=10,
    icon=":material/view_column:",
    summary="How C columns split into H heads, the concat, W_o, and the fused projection.",
    objectives=(
        "say the head size d_k = C / H for any head count that divides C",
        "say which head owns a given column of Q",
        "give q's shape after view(B, T, H, C // H).transpose(1, 2)",
    ),
    recap=(
        "H heads split C columns into H blocks of d_k = C / H, attend separately, then concat "
        "and W_o mix them."
    ),
    sections=sections,
    class_questions=class_questions,
)
