"""A download made on click, on a server that keeps made files (tests/deploy/test_made_downloads.py)
unless $MADE_KEEP is "0"."""

import os

import streamlit as st

from dashboard import server

if os.environ.get("MADE_KEEP") != "0":
    server.keep_made_downloads()
st.download_button("Save", lambda: b'{"made": true}', "made.json", on_click="ignore")
