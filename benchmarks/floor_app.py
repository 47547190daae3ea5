"""The floor under a lesson's repaint: a bare Streamlit page with step by step's 11 heatmaps.

    streamlit run benchmarks/floor_app.py            # 11 heatmaps, nothing else
    (open it with ?tables=1 for a table beside each, as the lesson has)

No torch, no formulas, no caching, no words: random numbers in the shapes step by step draws at
the defaults (X, Q, K, V, the four T x T score stages, Z, concat, output), each a plain Altair
heatmap, under the same sidebar slider "Sequence length T". `benchmarks/browser_timing.py
--floor` moves that slider like the lesson's and reports how long the browser takes to repaint
this page: what Streamlit and Vega cost for 11 charts (and 11 tables) on this machine, before
a lesson adds anything.
"""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

T = st.sidebar.slider("Sequence length T", 1, 64, 6)  # as the lesson: 1 .. 64, from 6
C, D_K = 8, 4  # d_model and d_k at the lesson's defaults (2 heads)
with_tables = st.query_params.get("tables") == "1"
st.title("Floor: 11 heatmaps" + (" and 11 tables" if with_tables else ""))

rng = np.random.default_rng(T)
widths = {"X": C, "Q": D_K, "K": D_K, "V": D_K, "S": T, "S scaled": T, "S masked": T}
widths |= {"A": T, "Z": D_K, "concat": C, "output": C}
for name, width in widths.items():
    values = pd.DataFrame(
        rng.standard_normal((T, width)),
        index=[f"t{i}" for i in range(T)],
        columns=[f"c{j}" for j in range(width)],
    )
    st.markdown(f"### {name}")
    if with_tables:
        st.dataframe(values)
    cells = values.reset_index(names="row").melt("row", var_name="column", value_name="value")
    heatmap = alt.Chart(cells).mark_rect().encode(x="column:O", y="row:O", color="value:Q")
    st.altair_chart(heatmap, width="content")
