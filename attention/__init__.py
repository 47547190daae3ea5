"""Self-attention from scratch, keeping every intermediate; equal to PyTorch's own attention.

Pure PyTorch: nothing here imports Streamlit, Altair or pandas (the dashboard lives in
`dashboard/`). The public API, re-exported from the modules that define it.
"""

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
from attention.masks import as_additive, as_blocked, build_mask, causal_mask, padding_mask
from attention.ops import PLAIN, Steps, naive_softmax, scaled_dot_product_attention
from attention.trace import STAGE_NAMES, STAGES, AttentionTrace, Stage

__all__ = [
    "PLAIN",
    "STAGES",
    "STAGE_NAMES",
    "AttentionTrace",
    "Embedded",
    "MultiHeadSelfAttention",
    "Stage",
    "Steps",
    "WorkedExample",
    "as_additive",
    "as_blocked",
    "build_mask",
    "causal_mask",
    "head_columns",
    "merge_heads",
    "naive_softmax",
    "padding_mask",
    "parse_matrix",
    "random_embeddings",
    "scaled_dot_product_attention",
    "seeded_layer",
    "sentence_embeddings",
    "sinusoidal_positions",
    "split_heads",
    "tokenize",
    "worked_example",
]
