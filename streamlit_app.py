"""The frame: page config, the shared sidebar, and navigation over the lessons in pages/."""

import streamlit as st

from attention.display import controls, frame

st.set_page_config(
    page_title="Self-attention, step by step",
    page_icon=":material/grid_on:",
    layout="wide",
    initial_sidebar_state="expanded",
)
page = frame.navigation()
controls.sidebar()
page.run()
frame.warm_up()
