"""Lesson 2: how (T, C) splits into H heads, one heatmap per head, the concat and W_o."""

from attention.display.frame import require_frame

require_frame()

import streamlit as st  # noqa: E402

from attention.display import controls, head_views, lessons, views  # noqa: E402
from attention.display.tables import feature_labels  # noqa: E402
from attention.explain import fused_difference, merged  # noqa: E402
from attention.layer import head_columns  # noqa: E402

st.title("2 · Multi-head attention")
lesson = lessons.lesson(controls.current_settings())
trace = views.require_lesson(lesson)
views.show_sizes(lesson)
T, H, d_head = len(lesson.labels), trace.n_heads, trace.d_head
C = H * d_head

st.header("Splitting C columns into H heads")
st.markdown(
    f"Q = X W_q has shape (T, C) = ({T}, {C}). Multi-head attention does not compute new "
    f"projections per head: it **cuts Q's columns into {H} consecutive groups** of "
    f"d_head = C / H = {d_head}. Head h works only with its own columns of Q, K and V."
)
st.dataframe(
    [
        {
            "head": h,
            "columns of Q, K, V": f"d{head_columns(C, H, h).start} … "
            f"d{head_columns(C, H, h).stop - 1}",
            "q, k, v shape": f"(T, d_head) = ({T}, {d_head})",
        }
        for h in range(H)
    ],
    hide_index=True,
)
q_full = views.matrix_view(
    ("q_full", lesson.key),
    tuple(lesson.labels),
    tuple(feature_labels(C)),
    _matrix=merged(trace, "q"),
    kind="projection",
    row_title="token",
    col_title="feature",
)
views.show_matrix(
    q_full,
    "q_full",
    "Q = X W_q, all heads side by side",
    f"Shape (T, C) = ({T}, {C}): columns d0 … d{d_head - 1} are head 0's, and so on.",
)

st.header("Each head attends on its own")
st.markdown(
    "Every head computes its own T × T attention pattern from its own columns. All heads "
    "share one colour scale, so their patterns can be compared directly."
)
st.subheader("Scaled scores per head")
head_views.show_heads(lesson, "scaled")
st.subheader("Attention weights per head")
head_views.show_heads(lesson, "weights")

st.header("Back together: concat, then W_o")
st.markdown(
    "Each head's output Z_h = A_h V_h has shape (T, d_head). Putting the heads side by side "
    "gives (T, C) again, and the output projection W_o mixes information across heads."
)
views.show_stage(lesson, "concat")
views.show_stage(lesson, "output")

st.header("Every shape at a glance")
head_views.show_shape_summary(lesson)

st.header("One fused projection equals three")
difference = fused_difference(lesson.layer, lesson.embedded.x)
st.markdown(
    f"Implementations such as nanoGPT compute Q, K and V with **one** linear layer from C to "
    f"3C = {3 * C} columns and split the result in three. Stacking W_q, W_k and W_v gives that "
    f"(3C, C) = ({3 * C}, {C}) weight. On this input the largest difference between the fused and "
    f"the separate projections is **{difference:.1e}**: the same numbers, one matrix multiply."
)
st.code(
    "W_qkv = torch.cat([W_q.weight, W_k.weight, W_v.weight])   # (3C, C)\n"
    "q, k, v = (x @ W_qkv.T).split(C, dim=-1)                  # 3 x (T, C)",
    language="python",
)
