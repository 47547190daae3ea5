"""The whole trace as one strict JSON document: settings, tokens, the mask, the layer's weights
and every stage, their true values: a masked weight is 0.0 and a masked score -Infinity, which
strict JSON cannot hold, so it is the string "-Infinity" (INFINITY_MEANS: what every export of
the dashboard writes, in the CSVs too)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import numpy as np
from torch import Tensor

from attention import STAGES
from attention.explain import allowed_matrix
from dashboard.lessons import Computed, Variant

SCHEMA_VERSION = 3
INFINITY = "-Infinity"  # as JavaScript's String(-Infinity) and the grid's CSV export write it
INFINITY_MEANS = (
    "The string \"-Infinity\" is the number -Infinity: a blocked score in 'masked' when the "
    "fill is -inf, and 'mask_value' itself then (strict JSON has no infinities; masked weights "
    'are plain 0.0). In a browser: JSON.parse(text, (k, v) => v === "-Infinity" ? -Infinity '
    ": v). In Python, float() reads it: numpy.array(data['stages']['masked'], dtype=float), "
    "pandas.DataFrame(rows).astype(float). null only stands for a weight matrix the layer "
    "does not have (W_o)."
)
WEIGHT_CONVENTION = (
    "nn.Linear weights, shape (out, in) = (C, C): Q = X @ W_q.T, K = X @ W_k.T, V = X @ W_v.T, "
    "output = concat @ W_o.T (W_o is null when the layer has none). No biases."
)


def json_numbers(values: Tensor | float, shortest: bool = False) -> list | float | str:
    """A tensor (or a float) as nested lists of numbers, -inf as INFINITY (only -inf occurs
    among the non-finite numbers; NaN or +inf would be refused).

    `shortest`: a float32 number is written with the fewest digits that read back as the same
    float32 (0.1, not 0.10000000149011612), for a reader that makes float32 tensors of them
    (the notebooks: `torch.tensor(...)` gives the dashboard's tensor bit for bit, in about half
    the text; lesson 12's, with its trained layer's 65,536 weights, was 2.0 MB with 17 digits a
    number). Without it, each number is its float32 value exactly, as float64 reads it too."""
    if isinstance(values, float):
        return _number(values)
    numbers = values.detach().cpu().numpy()
    if shortest and numbers.dtype == np.float32:  # numpy prints its shortest unique digits
        numbers = numbers.astype(str).astype(np.float64)
    if np.isfinite(numbers).all():
        return numbers.tolist()
    return _numbers(numbers.tolist())


def _numbers(values):
    return [_numbers(v) for v in values] if isinstance(values, list) else _number(values)


def _number(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if value == -math.inf:
        return INFINITY
    raise ValueError(f"a trace holds no {value}: only -inf is not a finite number")


def variant_of(lesson: Computed) -> Variant:
    """The lesson's variant (padding, fill value, edited encodings), from its cache key."""
    return Variant(*lesson.key[1]) if len(lesson.key) == 2 else Variant()


def trace_payload(lesson: Computed, shortest: bool = False) -> dict:
    """Settings, tokens, the mask, the layer's weights and every stage, as JSON-ready values
    (`shortest`: for a float32 reader, json_numbers)."""
    trace, layer = lesson.trace, lesson.layer
    weights = {
        name: None if linear is None else json_numbers(linear.weight, shortest)
        for name, linear in (
            ("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v), ("W_o", layer.W_o),
        )
    }  # fmt: skip
    return {
        "schema": {
            "version": SCHEMA_VERSION,
            "infinity": INFINITY_MEANS,
            "weights": WEIGHT_CONVENTION,
            "stages": {s.name: f"({', '.join(s.dims)}): {s.title}" for s in STAGES},
            "allowed": "(T, T) bool: True = query (row) may attend to key (column)",
            "how_to_load": (
                "data = json.load(f); W_q = torch.tensor(data['weights']['W_q']); "
                "X = torch.tensor(data['stages']['x']); Q = X @ W_q.T"
            ),
        },
        "settings": asdict(lesson.settings),
        "variant": {k: v for k, v in asdict(variant_of(lesson)).items() if k != "mask_value"},
        "tokens": list(lesson.embedded.tokens),
        "labels": list(lesson.labels),
        "n_heads": trace.n_heads,
        "d_head": trace.d_head,
        "scale": trace.scale,
        "mask_value": json_numbers(float(trace.mask_value)),
        "allowed": allowed_matrix(trace, 0).tolist(),
        "weights": weights,
        "shapes": {s.name: list(trace.stage(s.name).shape) for s in STAGES},
        "stages": {s.name: json_numbers(trace.stage(s.name), shortest) for s in STAGES},
    }


def trace_json(lesson: Computed, shortest: bool = False) -> str:
    """The whole trace as one strict JSON document (no NaN or Infinity tokens: -inf is the
    string "-Infinity"; `shortest`: for a float32 reader, json_numbers)."""
    return json.dumps(trace_payload(lesson, shortest), allow_nan=False)
