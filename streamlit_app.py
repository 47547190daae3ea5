"""The frame: page config, the shared sidebar, and navigation over the lessons in pages/."""

import streamlit as st

from attention.display import controls, frame

present = frame.presenter_mode()  # ?present=1: sidebar closed, large charts, stage by stage
st.set_page_config(
    page_title="Self-attention, step by step",
    page_icon=":material/grid_on:",
    layout="wide",
    initial_sidebar_state="collapsed" if present else "expanded",
)
page = frame.navigation()
controls.sidebar()
frame.keep_presenter_link(present)
page.run()
frame.warm_up()
