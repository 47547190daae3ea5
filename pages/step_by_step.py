"""Lesson 1: X -> Q, K, V -> scores -> scaled -> masked -> softmax -> output, one cell by hand."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from attention import STAGES
from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, layout, presenter
from dashboard.views import step_by_step

presenter.present(step_by_step.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Follow one forward pass of self-attention from the input X to the output. Every stage "
    "shows its formula, its shape with named dimensions, the numbers, and a heatmap "
    "(hover a cell for its query, key and value)."
)
lesson_frame.objectives(__file__)
lesson = lessons.computed(controls.current_settings())
trace = blocks.require_lesson(lesson)
blocks.show_sizes(lesson)
head = blocks.head_picker(trace)
lesson_frame.reset_button(__file__)
step_by_step.show_about_input(lesson, head)
if st.toggle(
    "Show the weights W_q, W_k, W_v" + (" and W_o" if lesson.layer.W_o is not None else ""),
    value=layout.remember_default("show_weights", False),
    key="show_weights",
    bind="query-params",  # in the link, like every lesson control (issue 42, item 15)
    help="The layer's projections: Q = X W_q, K = X W_k, V = X W_v.",
):
    blocks.show_weights(lesson)

scale_said = False
for number, stage in enumerate(STAGES, start=1):
    blocks.show_stage(lesson, stage.name, head, number)
    if stage.name in ("scaled", "masked") and not scale_said:
        st.caption(step_by_step.describe_score_scale(lesson, head))
        scale_said = True
    if stage.name == "weights":
        blocks.show_checks(lesson)

st.header("One cell by hand")
st.markdown("Pick a query and a key and follow their attention weight through every step.")
step_by_step.show_cell_by_hand(lesson, head)
with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        exports.show_downloads(lesson)
lesson_frame.finish(__file__, lambda: step_by_step.lesson_questions(lesson))
