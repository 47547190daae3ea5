"""Lesson 10: generation one token at a time, and the KV cache."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import controls, exports, lesson_frame, shakespeare
from dashboard.render import blocks, presenter
from dashboard.views import kv_cache

presenter.present(kv_cache.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "A language model writes one token at a time. Under a causal mask, token t's output "
    "depends only on tokens 0 … t, and their keys and values never change once computed: keep "
    "them in a **cache**, and each new token needs just its own query row."
)
lesson_frame.objectives(__file__)
lesson = kv_cache.decoding_lesson()
blocks.require_lesson(lesson)

st.header("Decode step by step")
t = kv_cache.step_picker(len(lesson.labels))
lesson_frame.reset_button(__file__)
kv_cache.show_cache(lesson, t)

st.header("Work and memory per step")
kv_cache.show_work(lesson)

st.header("Grouped-query and multi-query attention: a smaller cache")
st.markdown(
    "The cache holds K and V for every head. Grouped-query attention lets groups of query "
    "heads share one K/V head; multi-query attention shares one among all. Below, this layer "
    "with fewer K/V heads, decoded to the step picked above, then a published model."
)
kv_cache.show_grouped(lesson, t)

st.header("Sliding-window attention: a rolling cache")
st.markdown(
    "With a window of w, a query sees only the last w keys; the cache can drop everything "
    "older, so it never grows past w rows. The outputs equal the full pass under the window mask. "
    "The cache below is the one after the step picked above."
)
kv_cache.show_window(lesson, t)

st.header("The cache in a real model")
st.markdown(
    "Lesson 12's model, a small GPT trained on Shakespeare, writes text one character at a "
    "time with a cache in each of its two layers."
)
shakespeare.show_generation_timing()

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "The notebook rebuilds this layer in plain PyTorch, then decodes it one token at a "
            "time with a cache and checks every row against the full causal pass and this page."
        )
        exports.show_downloads(lesson, section=partial(kv_cache.notebook_section, lesson))
lesson_frame.finish(__file__, lambda: kv_cache.lesson_questions(controls.current_settings()))
