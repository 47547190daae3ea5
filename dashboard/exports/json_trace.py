"""The whole trace as one strict JSON document: settings, tokens, the mask, the layer's weights
and every stage, with null for -Infinity."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

from torch import Tensor

from attention import STAGES
from attention.explain import allowed_matrix
from dashboard.lessons import Lesson, Variant

SCHEMA_VERSION = 2
NULL_MEANS = (
    "null stands for -Infinity: a blocked score in 'masked' when the fill is -inf, and "
    "'mask_value' itself then. JSON has no infinities; nothing else is ever null."
)
WEIGHT_CONVENTION = (
    "nn.Linear weights, shape (out, in) = (C, C): Q = X @ W_q.T, K = X @ W_k.T, V = X @ W_v.T, "
    "output = concat @ W_o.T (W_o is null when the layer has none). No biases."
)


def finite_list(values: Tensor | float) -> list | float | None:
    """A tensor as nested lists with every non-finite number (only -inf occurs) as None."""
    if isinstance(values, float):
        return values if math.isfinite(values) else None
    if bool(values.isfinite().all()):
        return values.tolist()
    return _nones(values.tolist())


def _nones(values):
    if isinstance(values, list):
        return [_nones(v) for v in values]
    return values if math.isfinite(values) else None


def variant_of(lesson: Lesson) -> Variant:
    """The lesson's variant (padding, fill value, edited encodings), from its cache key."""
    return Variant(*lesson.key[1]) if len(lesson.key) == 2 else Variant()


def trace_payload(lesson: Lesson) -> dict:
    """Settings, tokens, the mask, the layer's weights and every stage, as JSON-ready values."""
    trace, layer = lesson.trace, lesson.layer
    weights = {
        name: None if linear is None else linear.weight.detach().tolist()
        for name, linear in (
            ("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v), ("W_o", layer.W_o),
        )
    }  # fmt: skip
    return {
        "schema": {
            "version": SCHEMA_VERSION,
            "null": NULL_MEANS,
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
        "mask_value": finite_list(float(trace.mask_value)),
        "allowed": allowed_matrix(trace, 0).tolist(),
        "weights": weights,
        "shapes": {s.name: list(trace.stage(s.name).shape) for s in STAGES},
        "stages": {s.name: finite_list(trace.stage(s.name)) for s in STAGES},
    }


def trace_json(lesson: Lesson) -> str:
    """The whole trace as one strict JSON document (no NaN or Infinity tokens)."""
    return json.dumps(trace_payload(lesson), allow_nan=False)
