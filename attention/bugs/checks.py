"""The live checks a page shows beside a bug, and the numbers behind its side-by-side stages.

`run_checks` recomputes the invariants (rows sum to 1, blocked weights 0, equality with PyTorch,
shapes, no look-ahead, same output twice), each of which catches some bugs and misses others;
`differing_stages` and `stage_difference` say where and by how much a bug changed the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.bugs.catalogue import student_layer
from attention.explain import allowed_matrix
from attention.layer import MultiHeadSelfAttention, merge_heads, split_heads
from attention.masks import MaskSpec, resolve_mask
from attention.ops import project_out
from attention.trace import STAGES, AttentionTrace

# The seven live checks, by key: what a page shows and what each Bug says catches it.
CHECKS: dict[str, str] = {
    "rows": "Every row of the weights sums to 1",
    "blocked": "Blocked weights are exactly 0",
    "pytorch": "The output equals PyTorch's scaled_dot_product_attention",
    "shapes": "Every stage has its expected shape",
    "causal": "Changing the last token changes no earlier output",
    "repeat": "The same input gives the same output twice",
    "raises": "The forward runs without an exception",
}
PER_HEAD = {stage.name: stage.per_head for stage in STAGES}


def pytorch_output(layer: MultiHeadSelfAttention, x: Tensor, allowed: Tensor) -> Tensor:
    """The layer's output computed with PyTorch's own F.scaled_dot_product_attention."""
    x3 = x if x.ndim == 3 else x.unsqueeze(0)  # (B, T, C)
    q, k, v = (split_heads(t, layer.n_heads) for t in layer.project_qkv(x3))  # (B, H, T, d)
    has_key = allowed.any(dim=-1, keepdim=True)  # SDPA gives NaN for a row with no key
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~has_key)
    heads = heads.masked_fill(~has_key, 0.0)  # (B, H, T, d_head)
    concat = merge_heads(heads)  # (B, T, C)
    output = project_out(concat, layer.W_o)  # (B, T, C)
    return output if x.ndim == 3 else output[0]


@dataclass(frozen=True)
class CheckResult:
    """One live check on one forward: passed or not, and the figure behind it."""

    key: str  # a key of CHECKS
    passed: bool | None  # None: does not apply here (the look-ahead check without a causal mask)
    detail: str


def run_checks(
    name: str | None,
    layer: MultiHeadSelfAttention,
    x: Tensor,
    mask: MaskSpec = None,
    *,
    seed: int = 0,
) -> tuple[CheckResult, ...]:
    """The live checks on the layer with the mistake `name` (None: the correct layer), x (T, C)."""
    model = layer.eval() if name is None else student_layer(name, layer)

    def forward(inputs: Tensor, generator_seed: int) -> AttentionTrace:
        return model(inputs, mask, generator=torch.Generator().manual_seed(generator_seed))

    try:
        trace = forward(x, seed)
    except RuntimeError as error:
        message = str(error).splitlines()[0]
        return tuple(
            CheckResult(key, False, f"RuntimeError: {message}")
            if key == "raises"
            else CheckResult(key, None, "no output")
            for key in CHECKS
        )
    T, C = x.shape
    H, d_head = layer.n_heads, layer.d_head
    intended = resolve_mask(mask, (H, T, T)).expand(H, T, T)
    has_key = intended.any(dim=-1)  # (H, T)
    sums = trace.weights.sum(dim=-1)  # (H, T)
    row_error = float((sums[has_key] - 1).abs().max()) if bool(has_key.any()) else 0.0
    blocked_nonzero = int((trace.weights[~intended] != 0).sum())
    expected = pytorch_output(layer, x, intended)
    pytorch_error = float((trace.output - expected).abs().max())
    shapes = {
        "q": (H, T, d_head), "k": (H, T, d_head), "v": (H, T, d_head), "scores": (H, T, T),
        "weights": (H, T, T), "heads": (H, T, d_head), "concat": (T, C), "output": (T, C),
    }  # fmt: skip
    wrong_shapes = [s for s, shape in shapes.items() if tuple(trace.stage(s).shape) != shape]
    results = [
        CheckResult("rows", row_error < 1e-5, f"largest error {row_error:.1e}"),
        CheckResult("blocked", blocked_nonzero == 0, f"{blocked_nonzero} are not 0"),
        CheckResult("pytorch", pytorch_error < 1e-5, f"largest difference {pytorch_error:.1e}"),
        CheckResult(
            "shapes",
            not wrong_shapes,
            "all as expected" if not wrong_shapes else "wrong: " + ", ".join(wrong_shapes),
        ),
    ]
    if isinstance(mask, str) and mask == "causal" and T > 1:
        changed = x.clone()
        changed[-1] = changed[-1] + 1.0
        leak = float((forward(changed, seed).output[:-1] - trace.output[:-1]).abs().max())
        results.append(CheckResult("causal", leak < 1e-6, f"earlier outputs moved by {leak:.1e}"))
    else:
        results.append(CheckResult("causal", None, "needs the causal mask"))
    again = float((forward(x, seed + 1).output - trace.output).abs().max())
    results.append(CheckResult("repeat", again == 0.0, f"second run differs by {again:.1e}"))
    results.append(CheckResult("raises", True, "ran"))
    return tuple(results)


def differing_stages(buggy: AttentionTrace, correct: AttentionTrace) -> tuple[str, ...]:
    """The stages (q .. output) whose numbers the bug changed (equal infinities and NaNs count
    as the same)."""
    names = ("q", "k", "v", "scores", "scaled", "masked", "weights", "heads", "concat", "output")
    return tuple(
        stage
        for stage in names
        if buggy.stage(stage).shape != correct.stage(stage).shape
        or not torch.allclose(buggy.stage(stage), correct.stage(stage), atol=1e-6, equal_nan=True)
    )


def stage_difference(
    buggy: AttentionTrace, correct: AttentionTrace, stage: str, head: int
) -> tuple[Tensor, Tensor]:
    """buggy − correct for one stage of one head (unbatched traces), in float64, and the cells
    where it means nothing (set to 0 there): either side not a number (a masked −∞), or, for the
    weights, a key the intended mask blocks that the buggy weights leave at 0 as well."""
    a, b = (t.stage(stage)[head] if PER_HEAD[stage] else t.stage(stage) for t in (buggy, correct))
    a, b = a.double(), b.double()
    unusable = ~(torch.isfinite(a) & torch.isfinite(b))
    if stage == "weights":  # blocked for either: the weight is 0 there, not worth a colour
        unusable = unusable | (~allowed_matrix(correct, head) & (a == 0))
    return torch.where(unusable, torch.zeros_like(a), a - b), unusable
