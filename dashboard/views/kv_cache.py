"""Lesson 10's blocks: generation one token at a time with a KV cache, grouped-query and
multi-query attention's smaller cache, and the sliding window's rolling cache."""

from __future__ import annotations

import nbformat
import pandas as pd
import streamlit as st
import torch

from attention.kv_cache import Generation, full_pass_difference, generate_with_cache
from attention.layer import MultiHeadSelfAttention
from attention.masks import sliding_window_mask
from dashboard import exports, state
from dashboard.lessons import Lesson
from dashboard.render import charts
from dashboard.render.blocks import show_heatmap, show_matrix
from dashboard.render.layout import bounded_slider
from dashboard.render.matrices import matrix_view
from dashboard.render.tables import feature_labels, format_number


@state.cached  # every step's K/V caches: megabytes at the maxima, bounded by bytes
def generation(key: tuple, window: int | None, *, _lesson: Lesson) -> tuple[Generation, float]:
    """Decode the lesson's X with the cache; and how far it is from the full pass."""
    x, layer = _lesson.embedded.x, _lesson.layer
    with torch.inference_mode():
        result = generate_with_cache(layer, x, window=window)
    return result, full_pass_difference(layer, x, result.outputs, window=window)


def notebook_section(lesson: Lesson) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's decoding section, checked against this page's decoding."""
    result, _ = generation(lesson.key, None, _lesson=lesson)
    return exports.decode_cells(result.outputs)


def step_picker(T: int) -> int:
    help_text = "The token being generated; the cache holds keys 0 .. t."
    return bounded_slider(st, "Decoding step t", T - 1, "decode_step", help=help_text)


def show_cache(lesson: Lesson, t: int, window: int | None = None) -> None:
    """The cache after step t (head 0), and the one query row this step computes."""
    result, gap = generation(lesson.key, window, _lesson=lesson)
    step = result.steps[t]
    d_head = step.k_cache.shape[-1]
    first = t + 1 - step.k_cache.shape[1]  # the oldest cached position (rolling cache)
    rows = tuple(lesson.labels[first : t + 1])
    # one under the other: each is a table beside its heatmap, too wide for half a page
    for name, cache in (("K", step.k_cache), ("V", step.v_cache)):
        show_matrix(
            matrix_view(rows, tuple(feature_labels(d_head)),
                        _matrix=cache[0], kind="projection", row_title="cached token",
                        col_title="feature"),
            f"{name}-cache", f"{name} cache, head 0: {len(rows)} row{'s' * (len(rows) != 1)}",
            name=f"{name} cache, head 0",
        )  # fmt: skip
    weights = pd.DataFrame({"key": list(rows), "weight": step.weights[0].tolist()})
    st.altair_chart(
        charts.bars(weights, x="key", y="weight", title=f"Query row {t} over the cache (head 0)",
                    y_domain=[0, 1]),
        width="stretch",
    )  # fmt: skip
    st.markdown(
        f"Step {t} computed **one** query row and appended one key and one value. "
        f"Outputs of all steps against the full {'causal' if window is None else 'sliding-window'}"
        f" pass: largest difference **{format_number(gap)}**."
    )


def work_frame(result: Generation) -> pd.DataFrame:
    rows = []
    for step in result.steps:
        rows.append({"step": step.t, "value": step.macs_cached, "curve": "with the cache"})
        rows.append({"step": step.t, "value": step.macs_uncached, "curve": "recomputing all"})
    return pd.DataFrame(rows)


def show_work(lesson: Lesson) -> None:
    result, _ = generation(lesson.key, None, _lesson=lesson)
    left, right = st.columns(2)
    left.altair_chart(
        charts.lines(work_frame(result), x="step", y="value", group="curve",
                     title="Multiply-adds per step"),
        width="stretch",
    )  # fmt: skip
    memory = pd.DataFrame(
        {"step": [s.t for s in result.steps], "value": [s.cache_bytes for s in result.steps],
         "curve": ["K and V cache bytes"] * len(result.steps)}
    )  # fmt: skip
    right.altair_chart(
        charts.lines(memory, x="step", y="value", group="curve", title="Cache size (bytes)"),
        width="stretch",
    )
    st.caption(
        "With the cache a step costs the new token's projections plus one row of attention "
        "(grows linearly); without it every step re-runs the layer on all tokens so far "
        "(grows quadratically). The cache trades that work for memory: 2 · T · C numbers."
    )


def show_grouped(lesson: Lesson) -> None:
    """Which query heads share which K/V head, and the cache per token for MHA, GQA, MQA."""
    layer: MultiHeadSelfAttention = lesson.layer
    H, d_head = layer.n_heads, layer.d_head
    options = [g for g in range(1, H + 1) if H % g == 0]
    if "kv_heads" in st.session_state and st.session_state["kv_heads"] not in options:
        st.session_state["kv_heads"] = options[-1]  # remembered from another head count
    kv = st.select_slider(
        "K/V heads", options, value=options[-1], key="kv_heads", persist_state="session",
        help="H = multi-head; fewer = grouped-query; 1 = multi-query.",
    )  # fmt: skip
    group = H // kv
    st.dataframe(
        pd.DataFrame({"query head": range(H), "uses K/V head": [h // group for h in range(H)]}),
        hide_index=True,
    )
    rows = []
    for name, n_kv in (("multi-head (MHA)", H), ("grouped-query (GQA)", kv), ("multi-query", 1)):
        rows.append({
            "attention": name, "K/V heads": n_kv,
            "bytes per token per layer = 2 · n_kv · d_head · 4": 2 * n_kv * d_head * 4,
        })  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        f"d_head = {d_head}, float32 (4 bytes). Llama 2 70B's 64 query heads share 8 K/V heads "
        "(d_head 128): its cache is 8x smaller per token than multi-head attention's. The query "
        "heads of a group all read the same keys and values "
        "(`F.scaled_dot_product_attention(..., enable_gqa=True)`)."
    )


def show_window(lesson: Lesson) -> None:
    T = len(lesson.labels)
    window = bounded_slider(st, "Window", T, "window", low=1, default=3)
    mask = sliding_window_mask(T, window)
    view = matrix_view(tuple(lesson.labels), tuple(lesson.labels),
                       _matrix=mask.double(), kind="weight", row_title="query",
                       col_title="key")  # fmt: skip
    with st.container(width="content"):  # the caption as wide as the map
        show_heatmap(view, "Sliding-window mask")
        st.caption(f"query i sees keys i − {window - 1} … i (dark = may attend)")
    show_cache(lesson, T - 1, window)
