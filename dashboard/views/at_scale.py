"""Lesson 11's blocks: the cost of T², measured, and FlashAttention's tiles, replayed."""

from __future__ import annotations

import nbformat
import pandas as pd
import streamlit as st
import torch

from attention.cost import log_slope, measure_costs
from attention.explain import allowed_matrix
from attention.flash import (
    CURRENT,
    DONE,
    TO_COME,
    TiledResult,
    sdpa_difference,
    tile_progress,
    tiled_attention,
)
from dashboard import exports, state
from dashboard.lessons import Lesson
from dashboard.render import charts
from dashboard.render.blocks import show_heatmap
from dashboard.render.layout import bounded_slider, wrapping_row
from dashboard.render.matrices import matrix_view
from dashboard.render.tables import format_number

LENGTHS = (64, 128, 256, 512, 1024, 2048)  # bounded: the largest takes ~0.1 s per run
STATE_WIDTH = 340  # px: the tile's m and ℓ table (297) and its formulas; beside the map if room
TILE_SHADES = {TO_COME: 0.0, DONE: 0.45, CURRENT: 1.0}  # a tile's state on the weights' 0..1


@state.cached(keep=True)
def costs() -> pd.DataFrame:
    """Measured once per server and shared by the class: sixty students do not time it sixty
    times (the cache computes one key once; the others wait for it)."""
    rows = []
    for cost in measure_costs(LENGTHS):
        rows.append({"T": cost.T, "seconds": cost.naive_s, "method": "naive (T × T held)"})
        rows.append({"T": cost.T, "seconds": cost.fused_s, "method": "fused SDPA"})
    return pd.DataFrame(rows)


def show_cost() -> None:
    with st.spinner("Timing attention on this server (once for everyone)…"):
        frame = costs()
    slopes = {
        method: log_slope(list(group["T"][-3:]), list(group["seconds"][-3:]))
        for method, group in frame.groupby("method", sort=False)
    }
    chart = charts.lines(frame, x="T", y="seconds", group="method",
                         title="Time of one head (d = 64), log-log", log_x=True)  # fmt: skip
    spec = chart.to_dict()
    for layer in spec.get("layer", []):
        y = layer.get("encoding", {}).get("y")
        if isinstance(y, dict) and y.get("field") == "seconds":
            y["scale"] = {"type": "log"}
    st.vega_lite_chart(spec, width="stretch")
    memory = pd.DataFrame({"T": list(LENGTHS),
                           "MiB held by naive attention (scores + weights, float32)":
                           [2 * T * T * 4 / 2**20 for T in LENGTHS]})  # fmt: skip
    st.dataframe(memory, hide_index=True)
    largest = frame[frame["T"] == LENGTHS[-1]].set_index("method")["seconds"]
    ratio = float(largest.iloc[0] / largest.iloc[1])  # naive / fused at the largest T
    st.markdown(
        " · ".join(f"**{method}**: time ∝ T^{slope:.1f}" for method, slope in slopes.items())
        + " (slope of the last three points): both do the same T² arithmetic, so both grow "
        f"like T². At T = {LENGTHS[-1]} naive takes {ratio:.1f}× the fused kernel's time here. "
        "What the fused kernel saves for sure is **memory**: it never holds the T × T matrix "
        "(the table), so its memory grows like T. On a GPU, where reading and writing that "
        "matrix dominates, that saving is also most of the speed-up."
    )
    st.caption("Measured on this server, single-threaded, median of 3 runs per point.")


@state.cached
def tiles(
    key: tuple, block_q: int, block_k: int, causal: bool, *, _lesson: Lesson
) -> tuple[TiledResult, float]:
    """Head 0 of the lesson walked in tiles; and how far it is from PyTorch's own attention."""
    trace = _lesson.trace
    q, k, v = trace.q[0], trace.k[0], trace.v[0]  # (T, d_head): head 0
    result = tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    return result, sdpa_difference(q, k, v, result.output, causal=causal)


def tile_shades(result: TiledResult, index: int) -> torch.Tensor:
    """(T, T) float64 for the heatmap: each score's tile state at step `index`, as a shade."""
    shades = torch.tensor(
        [TILE_SHADES[state] for state in sorted(TILE_SHADES)], dtype=torch.float64
    )
    return shades[tile_progress(result, index).long()]  # look each state's shade up


def show_tiling(lesson: Lesson) -> tuple[int, int]:
    """Block-size sliders, a tile-step slider, the tiles over the weights and m / ℓ: the block
    sizes it used, (B_r, B_c)."""
    T = len(lesson.labels)
    causal = lesson.settings.causal
    if T == 1:
        st.caption("One token: one tile of 1 × 1 (lengthen the sequence in the sidebar).")
        block_q = block_k = 1
    else:
        left, right = st.columns(2)
        block_q = bounded_slider(left, "Query block B_r", T, "block_q", low=1, default=2)
        block_k = bounded_slider(right, "Key block B_c", T, "block_k", low=1, default=2)
    block_q, block_k = min(block_q, T), min(block_k, T)
    result, gap = tiles(lesson.key, block_q, block_k, causal, _lesson=lesson)
    index = (
        st.slider("Tile step", 0, len(result.steps) - 1, 0, key="tile_step")
        if len(result.steps) > 1
        else 0
    )
    step = result.steps[index]
    blocked = ~allowed_matrix(lesson.trace, 0)  # (T, T): greyed where masked
    view = matrix_view(tuple(lesson.labels),
                       tuple(lesson.labels), _matrix=tile_shades(result, index), _blocked=blocked,
                       kind="weight", row_title="query", col_title="key")  # fmt: skip
    row = wrapping_row()
    with row.container(width="content"):
        show_heatmap(view, "FlashAttention's tiles over the weights")
        st.caption("Dark: the tile being computed; mid: tiles done; grey ×: masked.")
    with row.container(width=STATE_WIDTH):
        st.markdown(
            f"Tile {index + 1} of {len(result.steps)}: queries {step.rows.start}–"
            f"{step.rows.stop - 1}, keys {step.cols.start}–{step.cols.stop - 1}"
            + (" — wholly in the future: skipped." if step.skipped else ".")
        )
        st.latex(
            r"\begin{gathered} m' = \max(m, \operatorname{rowmax} S) \\ "
            r"\ell' = e^{m - m'}\,\ell + \operatorname{rowsum} e^{S - m'} \\ "
            r"O' = e^{m - m'}\,O + e^{S - m'}\,V_j \end{gathered}"
        )
        rows = []
        for offset, row in enumerate(step.rows):
            rows.append({
                "query": lesson.labels[row],
                "m before": format_number(float(step.m_before[offset])),
                "m after": format_number(float(step.m_after[offset])),
                "ℓ before": format_number(float(step.l_before[offset])),
                "ℓ after": format_number(float(step.l_after[offset])),
            })  # fmt: skip
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.markdown(
        f"After the last tile each row is O / ℓ. Against `F.scaled_dot_product_attention`: "
        f"largest difference **{format_number(gap)}**. Memory: one tile's scores and weights "
        f"take {result.tile_bytes:,} bytes; the full T × T scores and weights "
        f"{result.full_bytes:,}."
    )
    return block_q, block_k


def notebook_section(lesson: Lesson, block_q: int, block_k: int) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's tiling section, checked against this page's tiles."""
    result, _ = tiles(lesson.key, block_q, block_k, lesson.settings.causal, _lesson=lesson)
    return exports.tiling_cells(result.output, block_q, block_k)
