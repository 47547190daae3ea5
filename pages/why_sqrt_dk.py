"""Lesson 4: why the scores are divided by sqrt(d_k)."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import controls, exports, lesson_frame
from dashboard.render import layout, presenter
from dashboard.views import why_sqrt_dk

D_KS, PAIRS, KEYS = why_sqrt_dk.D_KS, why_sqrt_dk.PAIRS, why_sqrt_dk.KEYS
D_K_OPTIONS, D_K_DEFAULT = why_sqrt_dk.D_K_OPTIONS, why_sqrt_dk.D_K_DEFAULT
TAU_OPTIONS, TAU_DEFAULT = why_sqrt_dk.TAU_OPTIONS, why_sqrt_dk.TAU_DEFAULT

presenter.present(why_sqrt_dk.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
seed = controls.current_settings().seed
st.markdown(
    "A score is a dot product q·k = q₁k₁ + … + q_dk·k_dk. If the entries of q and k are "
    "independent with mean 0 and variance 1, each product has variance 1, so the **sum has "
    "variance d_k**: the wider the heads, the larger the scores."
)
why_sqrt_dk.show_variance_formula()
lesson_frame.objectives(__file__)

st.header("Dot products grow with d_k")
st.caption(f"{PAIRS:,} random pairs q, k ~ N(0, I) per d_k, drawn live (seed {seed}).")
why_sqrt_dk.show_variance(D_KS, PAIRS, seed)

st.header("Large scores saturate the softmax")
st.markdown(
    "Feed large scores to a softmax and it becomes nearly **one-hot**: one weight near 1, the "
    "rest near 0. The query then copies a single token, and, worse for learning, the softmax's "
    "**gradient vanishes**: nudging a score then barely moves any weight, so training cannot "
    "tell which way to go."
)
with layout.going_further("the gradient, as a matrix") as further:
    if further.open:
        st.markdown(
            "The softmax's gradient is its Jacobian, ∂p/∂s = diag(p) − p pᵀ (row i: how each "
            "weight moves when score i moves). As p becomes one-hot, diag(p) and p pᵀ become the "
            "same matrix and their difference tends to 0: the table below gives its size ‖J‖."
        )
left, right = st.columns(2)
linked = {key: controls.linked(key) for key in ("dk", "tau")}
with left:
    d_k = st.select_slider(
        "d_k (head size)",
        D_K_OPTIONS,
        layout.remember_default("dk", D_K_DEFAULT),
        key="dk",
        bind="query-params",
        persist_state="session",
    )
    controls.link_note("dk", linked["dk"], d_k, "one of " + ", ".join(map(str, D_K_OPTIONS)))
with right:
    temperature = st.select_slider(
        "Temperature τ (scale = 1/(τ√d_k))",
        TAU_OPTIONS,
        layout.remember_default("tau", TAU_DEFAULT),
        key="tau",
        bind="query-params",
        persist_state="session",
        help="τ < 1 sharpens the softmax, τ > 1 flattens it.",
    )
    controls.link_note(
        "tau", linked["tau"], temperature, "one of " + ", ".join(map(str, TAU_OPTIONS))
    )
lesson_frame.reset_button(__file__)
st.caption(f"One query against {KEYS} random keys, q, k ~ N(0, I_dk).")
why_sqrt_dk.show_saturation(KEYS, d_k, temperature, seed)
st.markdown(
    "Without scaling the scores spread as √d_k, so the wider the heads, the more often the "
    "softmax collapses onto one key and its gradient vanishes; with 1/√d_k the scores keep "
    "variance 1 whatever d_k is, and the softmax stays trainable."
)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "The notebook draws the same q and k in plain PyTorch, measures the variances and the "
            "softmax at your d_k and τ, checks the Jacobian against autograd's, and every number "
            "against this page."
        )
        row = st.container(horizontal=True, gap="small")
        exports.show_notebook_download(
            partial(why_sqrt_dk.notebook, D_KS, PAIRS, KEYS, d_k, temperature, seed),
            exports.download_name("rebuilt.ipynb"),
            where=row,
        )
        exports.show_exercises(
            partial(why_sqrt_dk.exercises, D_KS, PAIRS, KEYS, d_k, temperature, seed),
            "A notebook with this page's numbers where you write the dot products, the "
            "scaling, the softmax at 1/√d_k, its entropy and its Jacobian; a check under each "
            "compares yours with this page. Runs on your computer, never here.",
            where=row,
        )
lesson_frame.finish(__file__, lambda: why_sqrt_dk.lesson_questions(seed, d_k))
