"""AttentionTrace: every intermediate of one self-attention forward, in pipeline order.

The field names are the contract between the maths, the tables, the charts and the tests.
How they map to TransformerLens's hook names, for layer L (checked against TransformerLens's
components/abstract_attention.py, grouped_query_attention.py and transformer_block.py):

| field   | TransformerLens                    | note                                           |
|---------|------------------------------------|------------------------------------------------|
| x       | blocks.L.hook_resid_pre            | the block input; TL's attention reads ln1 of it|
| q       | blocks.L.attn.hook_q               | TL: (B, T, H, d_head); ours: (B, H, T, d_head) |
| k, v    | blocks.L.attn.hook_k, hook_v       | TL: (B, T, H_kv, d_head); ours: (B, H_kv, T, .)|
| scores  | (none)                             | q k^T before scaling                           |
| scaled  | (none)                             | scores x scale                                 |
| masked  | blocks.L.attn.hook_attn_scores     | TL scales and masks (with -inf) in one step    |
| weights | blocks.L.attn.hook_pattern         | softmax over keys; (B, H, T, T) in both        |
| heads   | blocks.L.attn.hook_z               | TL: (B, T, H, d_head)                          |
| concat  | (none)                             | hook_z flattened to (B, T, C)                  |
| output  | blocks.L.hook_attn_out             | W_o(concat) + b_o: a hook on the block, not on |
|         |                                    | attn (TL's attn.hook_result is per head)       |

Grouped-query attention (n_kv_heads = H_kv < H): k and v keep their H_kv heads, as TL's
GroupedQueryAttention keeps hook_k and hook_v (unless cfg.ungroup_gqa) and repeats them only
to compute the scores and z. Query head h reads K/V head `kv_head(h)` = h // (H / H_kv); every
helper that indexes k or v by a query head goes through it (or through `shared`).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Every intermediate of self-attention; fields in pipeline order, shapes in comments.

    Unbatched input gives the same shapes without B. The functional
    `scaled_dot_product_attention` has no x, no concat and no W_o: there x and concat are None
    and output is heads.
    """

    x: Tensor | None  # (B, T, C)             input embeddings
    q: Tensor  # (B, H, T, d_head)            queries  Q = X W_q, split into heads
    k: Tensor  # (B, H_kv, T, d_head)         keys     K = X W_k (H_kv = H unless grouped)
    v: Tensor  # (B, H_kv, T, d_head)         values   V = X W_v
    scores: Tensor  # (B, H, T, T)            raw scores q k^T (rows: queries, columns: keys)
    scaled: Tensor  # (B, H, T, T)            scores x scale
    masked: Tensor  # (B, H, T, T)            scaled, blocked positions set to mask_value
    weights: Tensor  # (B, H, T, T)           softmax over keys; blocked keys exactly 0
    heads: Tensor  # (B, H, T, d_head)        weights v (per-head output)
    concat: Tensor | None  # (B, T, C)        heads merged back
    output: Tensor  # (B, T, C)               W_o(concat), or concat without out_proj
    allowed: Tensor  # bool, broadcasts to (B, H, T, T): True = query may attend to key
    scale: float  # the factor applied to scores (default 1/sqrt(d_head))
    mask_value: float  # what blocked positions hold in `masked`
    dropped: Tensor | None = None  # (B, H, T, T) weights after dropout, when dropout ran

    def stage(self, name: str) -> Tensor:
        """The tensor of one stage, by its name in STAGES."""
        if name not in STAGE_NAMES:
            raise ValueError(f"unknown stage {name!r}; stages are {', '.join(STAGE_NAMES)}")
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"this trace has no {name!r} stage")
        return value

    @property
    def n_heads(self) -> int:
        return self.q.shape[-3]

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads: n_heads, or fewer when query heads share them (grouped-query)."""
        return self.k.shape[-3]

    @property
    def d_head(self) -> int:
        return self.q.shape[-1]

    @property
    def d_model(self) -> int:
        """C = H * d_k: the width the query heads together make (the scale's mistakes use it;
        not x's width, which a later layer's residual input need not share)."""
        return self.n_heads * self.d_head

    def kv_head(self, head: int) -> int:
        """The K/V head query head `head` reads: head // (H / H_kv), the layer's grouping
        (`repeat_interleave` over the head axis)."""
        H = self.n_heads
        try:
            index = None if isinstance(head, bool) else operator.index(head)  # int, numpy int
        except TypeError:
            index = None
        if index is None or not 0 <= index < H:
            raise ValueError(f"a query head is a whole number in 0..{H - 1}, got {head!r}")
        return index // (H // self.n_kv_heads)

    def shared(self, name: str) -> Tensor:
        """k or v with one head per query head, head h being K/V head kv_head(h): (…, H, T, d_head).
        Without grouping (or without a head axis, as `scaled_dot_product_attention` allows) the
        tensor itself."""
        if name not in ("k", "v"):
            raise ValueError(f"only k and v are shared between query heads, not {name!r}")
        tensor = self.stage(name)  # (…, H_kv, T, d_head)
        if tensor.ndim < 3 or self.q.ndim < 3 or tensor.shape[-3] == self.n_heads:
            return tensor
        return tensor.repeat_interleave(self.n_heads // self.n_kv_heads, dim=-3)


@dataclass(frozen=True)
class Stage:
    """Metadata of one pipeline stage, for pages that loop over them."""

    name: str  # the AttentionTrace field
    title: str  # a human heading
    formula: str  # LaTeX
    dims: tuple[str, ...]  # named dimensions, unbatched; H_kv (k, v) = H unless grouped-query;
    # d_k is the head size (the code's d_head; the paper's d_k = d_v)
    per_head: bool  # True when the tensor has a head axis
    kind: str  # "embedding" | "projection" | "score" | "weight": one colour scheme per kind
    explain: str  # one sentence a student reads under the heading


STAGES: tuple[Stage, ...] = (
    Stage("x", "Input X", r"X", ("T", "C"), False, "embedding",
          "One row per token: the vector this layer receives."),
    Stage("q", "Queries Q", r"Q = X W_q", ("H", "T", "d_k"), True, "projection",
          "What each token is looking for."),
    Stage("k", "Keys K", r"K = X W_k", ("H_kv", "T", "d_k"), True, "projection",
          "What each token offers to be found by. H_kv, the key/value heads, is H unless query "
          "heads share them (grouped-query attention, lesson 10)."),
    Stage("v", "Values V", r"V = X W_v", ("H_kv", "T", "d_k"), True, "projection",
          "What each token hands over when attended to."),
    Stage("scores", "Raw scores", r"S = Q K^\top", ("H", "T", "T"), True, "score",
          "Row i, column j: how well query i matches key j (a dot product)."),
    Stage("scaled", "Scaled scores", r"S' = \frac{Q K^\top}{\sqrt{d_k}}",
          ("H", "T", "T"), True, "score",
          "Divided by the square root of the head size so the softmax does not saturate."),
    Stage("masked", "Masked scores", r"\tilde S_{ij} = \begin{cases} S'_{ij} & \text{allowed} \\ "
          r"-\infty & \text{blocked} \end{cases}", ("H", "T", "T"), True, "score",
          "Blocked pairs (future tokens under the causal mask, padding) are set to −∞, or to the "
          "fill value the lesson names."),
    Stage("weights", "Attention weights", r"A = \operatorname{softmax}_\text{keys}(\tilde S)",
          ("H", "T", "T"), True, "weight",
          "Each row is a probability distribution over the keys: it sums to 1."),
    Stage("heads", "Per-head output", r"Z = A V", ("H", "T", "d_k"), True, "projection",
          "Each token's new vector: the weighted average of the value rows."),
    Stage("concat", "Concatenated heads", r"\operatorname{Concat}(Z_0, \dots, Z_{H-1})",
          ("T", "C"), False, "projection",
          "The heads side by side again: back to one row of width C per token."),
    Stage("output", "Output", r"O = \operatorname{Concat}(Z_0, \dots, Z_{H-1})\, W_o", ("T", "C"),
          False, "projection", "The output projection mixes the heads together."),
)  # fmt: skip

STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)
