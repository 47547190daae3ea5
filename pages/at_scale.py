"""Lesson 11: why long context is expensive, and how FlashAttention tiles it."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, presenter
from dashboard.views import at_scale

presenter.present(at_scale.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Every query meets every key: T² scores, held as a T × T matrix by a from-scratch "
    "implementation. Double the context, quadruple the work and the memory."
)
lesson_frame.objectives(__file__)

st.header("The cost of T², measured on this server")
at_scale.show_cost()

st.header("FlashAttention: the same numbers, tile by tile")
st.markdown(
    "FlashAttention (Dao et al., 2022) never builds the T × T matrix. It walks tiles of "
    "queries × keys and keeps, per query row, a running max m, a running normaliser ℓ and an "
    "output accumulator O, rescaled whenever m grows (the *online softmax*). O is the paper's "
    "name for one head's output A V, lesson 1's Z (lesson 1's O is the layer's output after "
    "W_o). The sidebar's sequence sets T; head 0 of the lesson's layer is tiled."
)
lesson = lessons.computed(controls.current_settings())
blocks.require_lesson(lesson)
block_q, block_k = at_scale.show_tiling(lesson)
lesson_frame.reset_button(__file__)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "The notebook rebuilds this layer in plain PyTorch, then walks head 0 in your tiles "
            "and checks the result against the full pass and this page."
        )
        exports.show_downloads(
            lesson, section=partial(at_scale.notebook_section, lesson, block_q, block_k)
        )
lesson_frame.finish(__file__, lambda: at_scale.lesson_questions(lesson, block_q, block_k))
