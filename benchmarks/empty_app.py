"""The empty app: one slider under the project's own config, nothing computed. The floor every
page's server CPU is read against (`python -m benchmarks.load --app benchmarks/empty_app.py
--page ""`): what Streamlit itself costs a first page and a rerun on this machine."""

import streamlit as st

st.slider("A number", 0, 10, key="n")
