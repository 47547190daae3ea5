"""The empty app: one slider under the project's own config, nothing computed, served as the
app is (its frontend's files kept and compressed, `dashboard.frontend_files`). The floor every
page's server CPU is read against (`python -m benchmarks.load --app benchmarks/empty_app.py
--page ""`): what Streamlit itself costs a first page and a rerun on this machine."""

import streamlit as st

if __name__ != "__main__":  # imported to be served
    from starlette.middleware import Middleware

    from dashboard.frontend_files import FrontendFiles

    app = st.App(__file__, middleware=[Middleware(FrontendFiles)])
else:
    st.slider("A number", 0, 10, key="n")
