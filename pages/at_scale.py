"""Lesson 11: why long context is expensive, and how FlashAttention tiles it."""

from attention.display.frame import require_frame

require_frame()

from functools import partial  # noqa: E402

import streamlit as st  # noqa: E402

from attention.display import controls, exports, lessons, scale_views, views  # noqa: E402

st.title("11 · Attention at scale")
st.markdown(
    "Every query meets every key: T² scores, held as a T × T matrix by a from-scratch "
    "implementation. Double the context, quadruple the work and the memory."
)

st.header("The cost of T², measured on this server")
scale_views.show_cost()

st.header("FlashAttention: the same numbers, tile by tile")
st.markdown(
    "FlashAttention (Dao et al., 2022) never builds the T × T matrix. It walks tiles of "
    "queries × keys and keeps, per query row, a running max m, a running normaliser ℓ and an "
    "output accumulator O, rescaled whenever m grows (the *online softmax*). The sidebar's "
    "sequence sets T; head 0 of the lesson's layer is tiled."
)
lesson = lessons.lesson(controls.current_settings())
views.require_lesson(lesson)
block_q, block_k = scale_views.show_tiling(lesson)

st.header("Take it home")
st.markdown(
    "The notebook rebuilds this layer in plain PyTorch, then walks head 0 in your tiles and "
    "checks the result against the full pass and this page."
)
exports.show_downloads(
    lesson, section=partial(scale_views.notebook_section, lesson, block_q, block_k)
)
