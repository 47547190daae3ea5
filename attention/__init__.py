"""Self-attention from scratch, keeping every intermediate; equal to PyTorch's own attention.

The public API, re-exported lazily (PEP 562): `import attention.display.controls` must not pay
for importing torch, so the dashboard's home page draws before torch has loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

_SOURCES = {
    "attention.inputs": (
        "Embedded", "WorkedExample", "parse_matrix", "random_embeddings", "sentence_embeddings",
        "sinusoidal_positions", "tokenize", "worked_example",
    ),
    "attention.layer": (
        "MultiHeadSelfAttention", "head_columns", "merge_heads", "seeded_layer", "split_heads",
    ),
    "attention.masks": ("as_additive", "as_blocked", "build_mask", "causal_mask", "padding_mask"),
    "attention.ops": ("naive_softmax", "scaled_dot_product_attention"),
    "attention.trace": ("STAGE_NAMES", "STAGES", "AttentionTrace", "Stage"),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = [  # the same names as _SOURCES (tests/test_layer.py checks it)
    "STAGES", "STAGE_NAMES", "AttentionTrace", "Embedded", "MultiHeadSelfAttention", "Stage",
    "WorkedExample", "as_additive", "as_blocked", "build_mask", "causal_mask", "head_columns",
    "merge_heads", "naive_softmax", "padding_mask", "parse_matrix", "random_embeddings",
    "scaled_dot_product_attention", "seeded_layer", "sentence_embeddings",
    "sinusoidal_positions", "split_heads", "tokenize", "worked_example",
]  # fmt: skip


def __getattr__(name: str):
    """Import the defining module on first use of a public name."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'attention' has no attribute {name!r}")
    return getattr(import_module(_MODULE_OF[name]), name)


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from attention.inputs import (
        Embedded,
        WorkedExample,
        parse_matrix,
        random_embeddings,
        sentence_embeddings,
        sinusoidal_positions,
        tokenize,
        worked_example,
    )
    from attention.layer import (
        MultiHeadSelfAttention,
        head_columns,
        merge_heads,
        seeded_layer,
        split_heads,
    )
    from attention.masks import (
        as_additive,
        as_blocked,
        build_mask,
        causal_mask,
        padding_mask,
    )
    from attention.ops import naive_softmax, scaled_dot_product_attention
    from attention.trace import STAGE_NAMES, STAGES, AttentionTrace, Stage
