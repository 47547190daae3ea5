"""An app that draws one table and one chart directly, then the same two replayed
(tests/dashboard/test_elements.py)."""

import pyarrow as pa
import streamlit as st

from dashboard.render.elements import record, replay

table = pa.table({"token": ["a", "b"], "d0": [0.5, -1.25]})
spec = {"mark": "rect", "encoding": {"x": {"field": "token", "type": "nominal"}}}
st.dataframe(table, hide_index=True, width=120)
st.vega_lite_chart(table, spec, width="content")
with st.container():
    replay(record(lambda dg: dg.dataframe(table, hide_index=True, width=120)))
    replay(record(lambda dg: dg.vega_lite_chart(table, spec, width="content")))
