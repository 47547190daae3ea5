"""Lesson 2: how (T, C) splits into H heads, one heatmap per head, the concat and W_o."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import controls, exports, lessons
from dashboard.render import blocks
from dashboard.views import multi_head

st.title("2 · Multi-head attention")
lesson = lessons.lesson(controls.current_settings())
trace = blocks.require_lesson(lesson)
blocks.show_sizes(lesson)
T, H, d_head = len(lesson.labels), trace.n_heads, trace.d_head
C = H * d_head

st.header("Splitting C columns into H heads")
st.markdown(
    f"Q = X W_q has shape (T, C) = ({T}, {C}). Multi-head attention does not compute new "
    f"projections per head: it **cuts Q's columns into {H} consecutive groups** of "
    f"d_head = C / H = {d_head}. Head h works only with its own columns of Q, K and V."
)
multi_head.show_split(lesson)

st.header("Each head attends on its own")
st.markdown(
    "Every head computes its own T × T attention pattern from its own columns. All heads "
    "share one colour scale, so their patterns can be compared directly."
)
st.subheader("Scaled scores per head")
multi_head.show_heads(lesson, "scaled")
st.subheader("Attention weights per head")
multi_head.show_heads(lesson, "weights")

st.header("Back together: concat, then W_o")
st.markdown(
    "Each head's output Z_h = A_h V_h has shape (T, d_head). Putting the heads side by side "
    "gives (T, C) again, and the output projection W_o mixes information across heads."
)
blocks.show_stage(lesson, "concat")
blocks.show_stage(lesson, "output")

st.header("Every shape at a glance")
multi_head.show_shape_summary(lesson)

st.header("One fused projection equals three")
multi_head.show_fused_projection(lesson)

st.header("Take it home")
exports.show_downloads(lesson)
