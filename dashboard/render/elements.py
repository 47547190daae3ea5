"""Elements built once and sent again: a table or chart marshalled by Streamlit's own code the
first time its data is shown, and its finished message replayed on every later rerun, in every
session.

Why: on one process a rerun is the class's bottleneck, and most of a lesson's rerun was
Streamlit turning the same tables and specs into the same messages again (docs/performance.md,
2026-11-25: a cache-hit rerun of lesson 1 spent 32 % in st.dataframe, half of it marshalling the
pandas Styler that greys masked cells, and 10 % in st.vega_lite_chart). The message an element
sends depends only on its arguments (no selection, no key: nothing of the session), so the
arguments' identity can key it.

How: `record` runs the real `st.dataframe` / `st.vega_lite_chart` on a DeltaGenerator that keeps
the element's proto instead of sending it; `replay` sends a kept proto where `st.<element>` would
have (the current `with` container, fragments included) through the same `_enqueue` that
Streamlit's elements call. Both lean on DeltaGenerator's private `_enqueue`, which is why
requirements.txt pins Streamlit to one minor version; tests/dashboard/test_elements.py checks
that a replayed element equals the one Streamlit draws directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
from google.protobuf.message import Message
from streamlit import dataframe_util
from streamlit.delta_generator import DeltaGenerator

from dashboard import state


@dataclass(frozen=True, eq=False)
class Recorded:
    """One element's finished proto and its layout, as `_enqueue` received them."""

    delta_type: str  # "dataframe", "vega_lite_chart", ...
    proto: Message
    layout_config: Any = None


class _Recorder(DeltaGenerator):
    """A DeltaGenerator that keeps what it would send (one element) instead of sending it."""

    recorded: Recorded | None = None

    def _enqueue(  # type: ignore[override]
        self, delta_type: str, element_proto: Message, layout_config=None, **_: Any
    ) -> DeltaGenerator:
        self.recorded = Recorded(delta_type, element_proto, layout_config)
        return self

    def _get_delta_path_str(self) -> str:
        return "recorded"  # a Styler's default uuid is made from it; ours set their own


def record(draw: Callable[[DeltaGenerator], Any]) -> Recorded:
    """What `draw(dg)` would send, e.g. `record(lambda dg: dg.dataframe(table))`: exactly one
    element, marshalled by Streamlit, not sent."""
    recorder = _Recorder()
    draw(recorder)
    if recorder.recorded is None:
        raise ValueError("record: the drawing sent no element")
    return recorder.recorded


def replay(element: Recorded, into: DeltaGenerator | None = None) -> None:
    """Send a recorded element where `st.<element>(...)` would appear now (or where
    `into.<element>(...)` would: a column, the sidebar)."""
    target = st._main if into is None else into
    target._enqueue(element.delta_type, element.proto, layout_config=element.layout_config)


def show_frame(key: tuple, build: Callable[[], Any], **options: Any) -> None:
    """`st.dataframe(build(), **options)` shown with show_once: `build()` makes the table only
    when `key` is new (a small table's pandas-to-Arrow is a millisecond of every first page)."""
    show_once(key, lambda dg: dg.dataframe(build(), **options))


def show_chart(key: tuple, build: Callable[[], Any], into=None, width: str = "stretch") -> None:
    """An Altair chart shown with show_once: `build()` makes it only when `key` is new, and its
    spec goes without Altair's schema validation (st.altair_chart validates every chart, a
    quarter of a new setting's rerun on lesson 10; tests/dashboard/test_elements.py validates
    the charts this draws)."""
    show_once(key, lambda dg: dg.vega_lite_chart(unvalidated_spec(build()), width=width), into)


def unvalidated_spec(chart: Any) -> dict:
    """The chart's Vega-Lite spec, its data inline, not validated (charts.to_spec)."""
    from dashboard.render.charts import to_spec  # altair loads with the charts, not before

    return to_spec(chart)


def show_once(key: tuple, draw: Callable[[DeltaGenerator], Any], into=None) -> None:
    """Show the element `draw(dg)` draws, marshalled once for every session under `key`:
    plain values that decide everything it shows, starting with a name of its own (a chart of
    a lesson's numbers: the chart's name and the lesson's key). Kept in the shared cache."""
    replay(state.compute(("element", *key), lambda: record(draw)), into)


def style_cells(
    element: Recorded, display: pd.DataFrame | pa.Table, marked: np.ndarray, css: str, uuid: str
) -> Recorded:
    """A recorded st.dataframe (of a pandas frame, or of an Arrow table, which `display` then
    is too), given what `st.dataframe(frame.style...)` sends for a Styler that prints `display`
    in the cells and applies `css` to the `marked` ones (rows, columns of the frame, the index
    not counted), built with array operations: a
    pandas Styler walks every cell in Python, 30-60 ms for a 64 x 64 table on each new setting.
    tests/dashboard/test_elements.py checks it against Streamlit's own marshall_styler."""
    styler = element.proto.arrow_data.styler
    styler.uuid = uuid
    rows, cols = np.nonzero(marked)  # row-major, as pandas lists a rule's selectors
    if rows.size:
        selectors = ", ".join(f"#T_{uuid}_row{r}_col{c}" for r, c in zip(rows, cols, strict=True))
        styler.styles = f"{selectors} {{ {css} }}"
    if isinstance(display, pa.Table):  # for data sent as Arrow: the same columns, no index
        styler.display_values = dataframe_util.convert_arrow_table_to_arrow_bytes(display)
    else:
        styler.display_values = dataframe_util.convert_pandas_df_to_arrow_bytes(display)
    return element


def set_columns(element: Recorded, column_config: dict) -> Recorded:
    """A recorded st.dataframe (drawn with hide_index=True and no column_config), given the
    column settings `st.dataframe(..., column_config=column_config, hide_index=True)` sends:
    the same JSON, without Streamlit's deep copy of every column's settings (a 64 x 256
    table's 257 columns cost more than its numbers). Checked against Streamlit's own in
    tests/dashboard/test_elements.py."""
    columns = {name: without_none(settings) for name, settings in column_config.items()}
    columns["_index"] = {**columns.get("_index", {}), "hidden": True}
    element.proto.columns = json.dumps(columns, allow_nan=False)
    return element


def without_none(value: Any) -> Any:
    """A column's settings without the unset (None) values, nested dictionaries included."""
    if not isinstance(value, dict):
        return value
    return {key: without_none(v) for key, v in value.items() if v is not None}
