"""The empty app with `?lines=N` lines of markdown under its slider: what Streamlit itself costs
each element of a first page, nothing computed (`python -m benchmarks.together --pages none
--lines 50 100`). A lesson's first page sends 60-140 elements (docs/performance.md). Served as
the empty app is."""

import streamlit as st

if __name__ != "__main__":  # imported to be served
    from starlette.middleware import Middleware

    from dashboard.frontend_files import FrontendFiles

    app = st.App(__file__, middleware=[Middleware(FrontendFiles)])
else:
    st.slider("A number", 0, 10, key="n")
    for number in range(int(st.query_params.get("lines", "0"))):
        st.markdown(f"Line {number}: a sentence about as long as one of a lesson's, as markdown.")
