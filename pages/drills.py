"""Lesson 8: exercises made from the live numbers, graded with the full working."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from attention.drills import rule
from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, presenter
from dashboard.views import drills

presenter.present(drills.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Practise attention by hand on the numbers of the sidebar's settings: predict which key a "
    "query attends to most, compute a scaled score, a weight and an output entry, give a shape "
    "after a reshape, and say which queries a mask keeps from a key. Each answer shows the full "
    "working. A new exercise set asks new questions (and starts a new score); the sidebar's "
    "seed and settings change the numbers."
)
lesson_frame.objectives(__file__)
st.caption(rule())
lesson = lessons.computed(controls.current_settings())
blocks.require_lesson(lesson)
number = drills.exercise_set()
drills.show_drills(lesson, number)
with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "From computing one number by hand to writing every step: a notebook with this page's "
            "layer, where you write each step in PyTorch and a check compares it with the numbers "
            "here."
        )
        exports.show_exercises(partial(exports.exercise_notebook, lesson))
lesson_frame.finish(__file__, lambda: drills.lesson_questions(lesson, number))
