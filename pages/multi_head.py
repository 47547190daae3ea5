"""Lesson 2: how (T, C) splits into H heads, one heatmap per head, the concat and W_o."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, presenter
from dashboard.views import multi_head

presenter.present(multi_head.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
lesson_frame.objectives(__file__)
lesson = lessons.computed(controls.current_settings())
blocks.require_lesson(lesson)
blocks.show_sizes(lesson)

st.header("Splitting C columns into H heads")
st.markdown(multi_head.split_words(lesson))
multi_head.show_split(lesson)
multi_head.show_split_code(lesson)

st.header("Each head attends on its own")
st.markdown(multi_head.heads_words(lesson))
st.subheader("Scaled scores per head")
multi_head.show_heads(lesson, "scaled")
st.subheader("Attention weights per head")
multi_head.show_heads(lesson, "weights")

st.header("Back together: concat, then W_o")
st.markdown(multi_head.merge_words(lesson))
blocks.show_stage(lesson, "concat")
blocks.show_stage(lesson, "output")

st.header("Every shape at a glance")
multi_head.show_shape_summary(lesson)

st.header("One fused projection equals three")
multi_head.show_fused_projection(lesson)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        exports.show_downloads(lesson)
lesson_frame.finish(__file__, lambda: multi_head.lesson_questions(lesson))
