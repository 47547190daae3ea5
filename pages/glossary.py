"""Glossary: every term a lesson uses before the lesson that teaches it, and that lesson."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import glossary
from dashboard.frame import LESSONS

st.title("Glossary")
st.markdown(
    "The terms a lesson uses before the lesson that teaches them, and those a lesson defines in "
    "passing. A lesson links each one here where it first appears; each entry links the lesson "
    "that teaches it."
)
by_number = {lesson.number: lesson for lesson in LESSONS}
for term in glossary.in_order():
    st.subheader(term.name, anchor=term.anchor)
    st.markdown(term.definition)
    taught = by_number[term.lesson]
    st.page_link(taught.path, label=f"Taught in {taught.title}", icon=taught.icon)
