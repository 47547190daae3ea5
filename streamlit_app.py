"""Placeholder frame: the lessons arrive with the dashboard issue."""

import streamlit as st

ATTENTION = r"\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"

st.set_page_config(page_title="Self-attention, step by step", layout="wide")
st.title("Self-attention, step by step")
st.latex(r"\operatorname{Attention}(Q, K, V) = " + ATTENTION)
