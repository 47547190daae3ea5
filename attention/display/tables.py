"""Tensor -> labelled pandas DataFrame: rows are query tokens, columns are keys or features."""

from __future__ import annotations

import math
from collections import Counter

import pandas as pd
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


def matrix_frame(matrix: Tensor, rows: list[str], columns: list[str]) -> pd.DataFrame:
    """A 2-D tensor as a DataFrame with named axes (numeric, for CSV and for charts)."""
    if matrix.ndim != 2 or matrix.shape != (len(rows), len(columns)):
        raise ValueError(f"matrix {tuple(matrix.shape)} does not fit {len(rows)}x{len(columns)}")
    frame = pd.DataFrame(matrix.detach().double().numpy(), index=rows, columns=columns)
    return frame


def format_number(value: float, digits: int = DIGITS) -> str:
    """A number as the tables print it: fixed decimals, -inf as '−∞', -0.0000 as 0.0000."""
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if math.isnan(value):
        return "NaN"
    if abs(value) >= 1e6:
        return f"{value:.{digits - 1}e}"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def formatted(
    frame: pd.DataFrame,
    blocked: Tensor | None = None,
    masked_text: str = "masked",
    digits: int = DIGITS,
) -> pd.DataFrame:
    """The frame as printed text; cells where `blocked` is True read `masked_text`."""
    text = frame.map(lambda v: format_number(v, digits))
    if blocked is not None:
        text = text.mask(blocked.detach().numpy(), masked_text)
    return text


def long_form(
    frame: pd.DataFrame, blocked: Tensor | None = None, digits: int = DIGITS
) -> pd.DataFrame:
    """Long-form rows (row, col, value, label, masked) for a heatmap; masked values are None."""
    long = frame.rename_axis(index="row", columns="col").stack().rename("value").reset_index()
    long["label"] = long["value"].map(lambda v: format_number(v, digits))
    if blocked is None:
        long["masked"] = False
    else:
        long["masked"] = blocked.detach().numpy().reshape(-1)
        # the value stays numeric (Vega drops null cells); the colour condition greys them out
        long.loc[long["masked"], "label"] = "masked: " + long.loc[long["masked"], "label"]
        long.loc[long["masked"], "value"] = 0.0  # -inf and -1e9 must not stretch the scale
    return long
