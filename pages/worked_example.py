"""Lesson 5: the classic 3-token, 2-dimension masked self-attention example, every number."""

from dashboard.frame import require_frame

require_frame()

import inspect

import streamlit as st

from attention.inputs import WORKED_ENCODINGS, WORKED_SEED, tutorial_attention
from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, presenter
from dashboard.views import worked_example

presenter.present(worked_example.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "The classic hand-worked example of masked self-attention (as in StatQuest's *Coding "
    "Masked Self-Attention in PyTorch*): three tokens with 2-dimensional encodings, one head, "
    f"no output projection, `torch.manual_seed({WORKED_SEED})` right before the layer is built, "
    "and a causal mask filled with −1e9. Every number below can be checked by hand, and it "
    "matches the tutorial's printout to the last digit."
)
lesson_frame.objectives(__file__)
with st.expander("Show the code"):
    st.code(inspect.getsource(tutorial_attention), language="python")

st.caption("This lesson always uses the classic preset; only the sidebar's causal switch applies.")
st.header("The encodings: edit them")
encodings = worked_example.edit_encodings(WORKED_ENCODINGS)
settings = worked_example.settings(controls.current_settings().causal)
lesson = lessons.computed(settings, lessons.Variant(encodings=encodings))
blocks.require_lesson(lesson)

st.header("The weights (fixed by the seed)")
blocks.show_weights(lesson)
st.header("The mask, True = blocked")
st.caption("The tutorial's convention: True marks the pairs that are masked (the future).")
if settings.causal:
    blocks.show_mask_blocked(lesson)
else:
    st.info("The causal mask is off (sidebar): nothing is blocked.")

names = worked_example.STAGES_SHOWN
for number, name in enumerate(names[:5], start=1):
    blocks.show_stage(lesson, name, 0, number, numbers=True)

st.header("By hand, before the tables that hold the answers")
st.markdown(
    "Work these out with pencil and paper from the numbers each question gives (taken from the "
    "tables above; positions count from 0), then type them in. The layer's remaining stages "
    "below hold the answers: check yours against them after."
)
lesson_frame.ask(
    "worked_example_hand",
    worked_example.by_hand_questions(lesson),
    label="Your answer by hand",
)

st.header("The rest of the layer")
for number, name in enumerate(names[5:], start=6):
    blocks.show_stage(lesson, name, 0, number, numbers=True)
blocks.show_checks(lesson)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        exports.show_downloads(lesson)
lesson_frame.finish(__file__, lambda: worked_example.lesson_questions(lesson))
