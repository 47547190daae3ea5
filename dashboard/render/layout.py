"""Layout helpers: rows that wrap instead of squeezing, widths, sliders whose range follows
other controls.
"""

from __future__ import annotations

import streamlit as st

from dashboard.render.matrices import StageView


def natural_width(config: dict, n_columns: int) -> int | str:
    """The table's width when every column has one (its columns then never hide behind a
    scroll bar while the page has room), else the page's width."""
    widths = [c.get("width") for c in config.values()]
    if len(widths) < n_columns or not all(isinstance(w, int) for w in widths):
        return "stretch"
    return sum(widths) + 2  # the grid's two border pixels


def fixed_size(view: StageView) -> bool:
    return isinstance(view.spec.get("width"), dict)  # a step per cell: its own size


def wrapping_row(gap: str = "medium"):
    """A row whose items stand side by side while they fit and wrap, one under another, on a
    narrow screen: never squeezed (st.columns squeezes a heatmap of fixed size until it spills
    over its neighbour)."""
    return st.container(horizontal=True, gap=gap, vertical_alignment="top")


def bounded_slider(
    container,
    label: str,
    high: int,
    key: str,
    help: str = "",
    *,
    low: int = 0,
    default: int = 0,
    single: str = "nothing else to choose",
) -> int:
    """A low..high integer slider whose range follows other controls: a remembered value above
    the new maximum is clamped, and a range of one value is shown as text, not as a slider.

    The value is kept under a key of our own as well, so it survives a visit to another lesson
    (Streamlit drops an undrawn widget's state); Streamlit's persist_state cannot be used here,
    since it restores a remembered value after the clamp and the slider then raises."""
    kept = f"_kept_{key}"
    if high <= low:
        st.session_state.pop(key, None)
        container.caption(f"{label}: {low} ({single}).")
        return low
    remembered = st.session_state.get(key, st.session_state.get(kept, default))
    st.session_state[key] = min(max(int(remembered), low), high)
    value = container.slider(label, low, high, key=key, help=help)
    st.session_state[kept] = value
    return value
