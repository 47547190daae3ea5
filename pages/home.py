"""Home: what the dashboard teaches, the formula, the lesson path and three lectures."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import lesson_frame, self_check
from dashboard.course import READING_RULE
from dashboard.frame import CLASS, LESSONS
from dashboard.render import layout
from dashboard.torch_build import cuda_build_note

layout.wrap_page_links()  # the lessons' summaries wrap on a 1024 px screen
st.title("Self-attention, step by step")
if note := cuda_build_note():  # Community Cloud fell back to pip: docs/community_cloud.md
    st.warning(note, icon=":material/memory:")
st.markdown(
    "Every token in a sequence looks at every other token and decides how much of each to take. "
    "That is **self-attention**, the heart of every transformer. This dashboard computes it "
    "from scratch and shows **every intermediate number**: move the sliders on the left and "
    "watch each matrix change."
)
# two lines: on one, the formula was 723 px wide and a 1024 px screen cut it after "K ="
st.latex(
    r"\operatorname{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V"
)
st.latex(r"Q = X W_q,\quad K = X W_k,\quad V = X W_v")
st.markdown(
    "- **X** has one row per token (T rows) and C = d_model columns.\n"
    "- **Q, K, V** are three linear projections of X; with H heads each head owns "
    "**d_k** = C / H columns, the head size (the paper's d_k, equal to its d_v here).\n"
    "- **Q Kᵀ** compares every query with every key: a T × T grid (rows queries, columns keys).\n"
    "- **M** is the additive mask: 0 where a query may look, −∞ where it may not (the future, "
    "padding). Lesson 1 names the scores after masking S̃.\n"
    "- **softmax** turns each row into weights that sum to 1; the output mixes V's rows."
)
lesson_frame.show_progress()  # a learner's, kept across visits (none before a right answer)
self_check.show()  # the concept check, before lesson 1 and after the last
st.subheader("The lessons")
for lesson in LESSONS:
    st.page_link(
        lesson.path, label=f"**{lesson.title}** (about {lesson.minutes} min): {lesson.summary}",
        icon=lesson.icon,
    )  # fmt: skip
# the summary itself starts "Teach a class: ", which the bold name already says
class_summary = CLASS.summary.removeprefix("Teach a class: ")
st.page_link(CLASS.path, label=f"**Teach a class**: {class_summary}", icon=CLASS.icon)
st.caption(READING_RULE)
lesson_frame.show_course()
st.caption(
    "Every number on screen is computed by the `attention` package, tested equal to PyTorch's "
    "`scaled_dot_product_attention` and `nn.MultiheadAttention`. The settings live in the URL: "
    "copy it to share exactly this view."
)
