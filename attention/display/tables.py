"""Numbers as the tables print them, and as Arrow: table text and heatmap cells."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pyarrow as pa
from torch import Tensor

DIGITS = 4  # as torch prints: the worked example reproduces to this digit


def unique_labels(tokens: tuple[str, ...] | list[str]) -> list[str]:
    """Token labels safe to use as table axes: a repeated token gets its occurrence, 'the#2'."""
    counts = Counter(tokens)
    seen: Counter[str] = Counter()
    labels = []
    for token in tokens:
        seen[token] += 1
        labels.append(token if counts[token] == 1 else f"{token}#{seen[token]}")
    return labels


def feature_labels(n: int, prefix: str = "d", start: int = 0) -> list[str]:
    """Column names for features: d0, d1, ... (start shifts them, for one head's columns)."""
    return [f"{prefix}{start + i}" for i in range(n)]


def format_number(value: float, digits: int = DIGITS) -> str:
    """A number as the tables print it: fixed decimals, -inf as '−∞', -0.0000 as 0.0000."""
    return str(format_array(np.array([value], dtype=np.float64), digits)[0])


def format_array(values: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """format_number over an array (object array of the same shape). A 64 x 256 table is
    16,384 cells on every new setting, so this is the hot loop: f-strings, then fix-ups for
    the few special values."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.reshape(-1)
    plain = f"{{:.{digits}f}}".format
    text = np.empty(flat.size, dtype=object)
    text[:] = [plain(v) for v in flat.tolist()]
    tiny = 0.5 * 10.0**-digits
    special = ~np.isfinite(flat) | (np.abs(flat) >= 1e6) | (np.signbit(flat) & (flat > -tiny))
    for index in np.flatnonzero(special):
        text[index] = special_number(float(flat[index]), digits)
    return text.reshape(values.shape)


def special_number(value: float, digits: int) -> str:
    """The printed form of infinities, NaN, huge values and negative zero."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if abs(value) >= 1e6:
        return f"{value:.{digits - 1}e}"
    return f"{0.0:.{digits}f}"  # -0.00001 prints as 0.0000, not -0.0000


def printed(
    values: np.ndarray,
    blocked: Tensor | None = None,
    masked_text: str = "masked",
    digits: int = DIGITS,
    text: np.ndarray | None = None,
) -> np.ndarray:
    """A 2-D array of numbers as printed text (object array); blocked cells read masked_text."""
    text = (format_array(values, digits) if text is None else text).reshape(values.shape).copy()
    if blocked is not None:
        text[blocked.detach().numpy()] = masked_text
    return text


def text_table(text: np.ndarray, rows: list[str], columns: list[str], corner: str) -> pa.Table:
    """Printed text as an Arrow table: the row labels first (under `corner`), then one column
    per label. One string array for all cells, sliced per column (zero-copy): no pandas round
    trip, which for a 64 x 256 table cost more than all the maths."""
    n_rows = len(rows)
    cells = pa.array(text.T.reshape(-1).tolist(), pa.string())  # column after column
    arrays = [pa.array(rows, pa.string())]
    arrays += [cells.slice(c * n_rows, n_rows) for c in range(len(columns))]
    return pa.Table.from_arrays(arrays, names=[corner, *columns])


def long_form(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    blocked: Tensor | None = None,
    digits: int = DIGITS,
    dark=None,
    text: np.ndarray | None = None,
    anchors: tuple[float, float] | None = None,
) -> pa.Table:
    """One row per cell (r, c, value, label, masked[, dark], anchor) for a heatmap, as Arrow: r
    and c are the axis keys "007 token" (position, then label). With `anchors` = (low, high),
    two more rows (anchor = True) carry the ends of the colour scale.
    Masked cells keep a finite value (Vega drops non-finite cells) and read 'masked: <value>'."""
    values = np.asarray(values, dtype=np.float64)
    n_rows, n_cols = values.shape
    flat = values.reshape(-1)
    labels = (format_array(flat, digits) if text is None else text.reshape(-1)).copy()
    masked = np.zeros(flat.shape, dtype=bool) if blocked is None else blocked.numpy().reshape(-1)
    if masked.any():
        labels[masked] = "masked: " + labels[masked]
        flat = np.where(masked, 0.0, flat)  # -inf and -1e9 must not stretch the colour scale
    i = np.repeat(np.arange(n_rows, dtype=np.int32), n_cols)
    j = np.tile(np.arange(n_cols, dtype=np.int32), n_rows)
    # Axis keys as dictionaries: each label is sent once, each cell carries two small integers
    # (a 64 x 256 heatmap's data halves, from 0.9 to 0.44 MB). The chart derives the plain
    # labels for its tooltip from the keys.
    row_keys = pa.array([f"{p:03d} {label}" for p, label in enumerate(rows)], pa.string())
    col_keys = pa.array([f"{p:03d} {label}" for p, label in enumerate(columns)], pa.string())
    table = {
        "r": pa.DictionaryArray.from_arrays(pa.array(i, pa.int32()), row_keys),
        "c": pa.DictionaryArray.from_arrays(pa.array(j, pa.int32()), col_keys),
        "value": pa.array(flat),
        "label": pa.array(labels.tolist(), pa.string()),
        "masked": pa.array(masked),
    }
    if dark is not None:
        table["dark"] = pa.array(dark(flat))  # which cells need white numbers
    table = pa.table(table)
    table = table.append_column("anchor", pa.array(np.zeros(flat.size, dtype=bool)))
    if anchors is None:
        return table
    ends = {  # two cells no layer draws, holding the colour scale's two ends
        "r": pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), row_keys),
        "c": pa.DictionaryArray.from_arrays(pa.array([0, 0], pa.int32()), col_keys),
        "value": pa.array([float(anchors[0]), float(anchors[1])]),
        "label": pa.array(["", ""], pa.string()),
        "masked": pa.array([False, False]),
    }
    if dark is not None:
        ends["dark"] = pa.array([False, False])
    ends["anchor"] = pa.array([True, True])
    return pa.concat_tables([pa.table(ends).cast(table.schema), table])  # first: drawn under
