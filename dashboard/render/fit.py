"""Blocks sized for one projector screen, shared by the lessons' presenter sections."""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention.explain import largest_magnitude
from dashboard import controls, lessons
from dashboard.lessons import Lesson
from dashboard.render import blocks, charts, layout
from dashboard.render.elements import show_once
from dashboard.render.matrices import STAGE_BY_NAME, StageView, cached_stage_view, stage_view
from dashboard.render.presenter import Section, presenter_theme

STAGE_NOTES = {
    "x": "Point at one row: one token's vector. Ask: what changes for a longer sentence?",
    "q": "Each row is what a token is looking for. Ask: why does every head get its own W_q?",
    "k": "Each row is what a token offers to be found by. Ask: could K equal Q here?",
    "v": "Each row is what a token hands over once chosen. Ask: why a third projection, V?",
    "scores": "Point at row i, column j: q_i · k_j. Ask: which key does the first query like most?",
    "scaled": "Same pattern, smaller numbers. Ask: what would the softmax do with the raw ones?",
    "masked": "The crossed cells are the future. Ask: why must token 2 not see token 3?",
    "weights": "Every row sums to 1. Ask: which token does the last query attend to, and why?",
    "heads": "A weighted average of V's rows. Ask: which row of V dominates the first output?",
    "concat": "The heads side by side again. Ask: what shape comes back, and why that one?",
    "output": "W_o mixes what the heads found. Ask: what is lost if we drop W_o?",
}


def current_lesson(settings: controls.Settings | None = None) -> Lesson:
    """The lesson of the sidebar's settings (stops the page with the reason if there is none)."""
    lesson = lessons.lesson(settings or controls.current_settings())
    blocks.require_lesson(lesson)
    return lesson


def stage_section(lesson: Lesson, name: str, head: int = 0, numbers: bool = False) -> Section:
    stage = STAGE_BY_NAME[name]
    draw = partial(show_stage_compact, lesson, name, head, numbers=numbers)
    return Section(stage.title, draw, STAGE_NOTES[name])


def show_stage_compact(
    lesson: Lesson, name: str, head: int = 0, numbers: bool = False, spare: int = 0
) -> None:
    """A stage on one screen: its formula and shape on one line, the heatmap (the numbers in
    its cells when the matrix is small: matrices.stage_view), one sentence. No table beside
    it: both do not fit a projector's 853 x 480."""
    view = stage_view(lesson, name, head, numbers=numbers)
    head_note = f" (head {head})" if view.stage.per_head and lesson.trace.n_heads > 1 else ""
    st.markdown(f"${view.stage.formula}$ &emsp; Shape **{view.shape}**{head_note}.")
    # the rows' height: what the formula (a two-line case split) and sentence leave
    budget = charts.MAX_HEIGHT_PRESENT - spare - 40 * ("\\" in view.stage.formula)
    budget -= 24 * (len(view.stage.explain) > 70)
    rows = view.values.shape[0]
    step = charts.snap(min(view.spec["height"]["step"], budget // rows)) or charts.STEPS[-1]
    spec = view.spec | {"height": {"step": step}, "description": f"{view.name}: {view.grid}"}
    fixed = layout.fixed_size(view)
    st.vega_lite_chart(view.cells, spec, width="content" if fixed else "stretch")
    if blocks.is_picture(view):
        st.caption(blocks.PICTURE_NOTE)
    st.markdown(view.stage.explain)


SCREEN = (630, 300)  # CSS px a section's charts may fill on 683 x 512 and 853 x 480


AXES = (150, 70)  # px of a small heatmap's axes and legend beside and above its cells


def show_fitted(view: StageView, name: str, width: int, height: int) -> None:
    """A heatmap whose square cells are sized to fit width x height px (axes included)."""
    rows, cols = view.values.shape
    # presenter-styled maps have their legend beside; the others' legend and turned labels
    # take more height
    present = (
        view.spec.get("config", {}).get("axis", {}).get("labelFontSize") == charts.PRESENT_FONT
    )
    tall = AXES[1] if present else 180
    step = max(charts.STEPS[-1], min((width - AXES[0]) // cols, (height - tall) // rows, 34))
    fixed = layout.fixed_size(view)

    def draw(dg) -> None:
        spec = view.spec | {"description": f"{name}: {view.grid}"}
        if fixed:
            spec = charts.refit_labels(
                spec | {"width": {"step": step}, "height": {"step": step}}, step
            )
        dg.vega_lite_chart(view.cells, spec, width="content" if fixed else "stretch")

    # marshalled once per matrix (its token), name and size, then replayed in every session
    show_once(("fitted", view.token, name, step), draw)


def show_heads_fitted(lesson: Lesson, name: str) -> None:
    """Every head's heatmap on one shared colour scale, without numbers, all on one screen."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    H = trace.n_heads
    per_row = min(H, 4)
    lines = -(-H // per_row)
    width, height = SCREEN[0] // per_row - 16, SCREEN[1] // lines - 24
    present = presenter_theme()
    row = st.container(horizontal=True, gap="small")
    for head in range(H):
        view = cached_stage_view(lesson, name, head, domain, False, present)
        with row.container(width="content", gap=None):
            st.markdown(f"**head {head}**")
            show_fitted(view, f"{view.name}, head {head}", width, height)
