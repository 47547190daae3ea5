from attention.display.frame import require_frame

require_frame()

import streamlit as st  # noqa: E402

st.title("masking")
