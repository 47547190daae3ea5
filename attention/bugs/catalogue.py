"""The classic from-scratch attention mistakes, each made on purpose on the layer's own weights.

`run_buggy(name, layer, x, mask)` is the layer's forward (attention/layer.py, attention/ops.py)
with exactly one line written the way students write it wrong; every intermediate is traced,
and the code is plain differentiable torch, so a model can train through it (see
attention/bug_training.py). A loud bug raises what PyTorch raises for it. `run_checks` recomputes
the invariants a page shows live (rows sum to 1, blocked weights 0, equality with PyTorch,
shapes, no look-ahead, same output twice), each of which catches some bugs and misses others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attention.layer import MultiHeadSelfAttention, merge_heads, split_heads, unbatch
from attention.masks import MaskSpec, resolve_mask
from attention.ops import NEG_INF, check_mask_value, dot_scores, softmax_rows
from attention.trace import AttentionTrace

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


@dataclass(frozen=True)
class Bug:
    """One classic mistake: the line as written, the fix, and how it shows."""

    title: str
    wrong: str  # the line as a student writes it
    right: str  # the fix
    symptom: str  # what a student sees
    caught_by: str  # which invariant or test catches it, in words
    loud: bool  # True when PyTorch raises instead of computing wrong numbers
    seen_in: tuple[str, ...]  # public reports where it happened
    checks: tuple[str, ...]  # keys of CHECKS that fail for it (on a causal multi-head layer)
    test: str  # a pytest test that would have caught it


BUGS: dict[str, Bug] = {
    "softmax_over_queries": Bug(
        title="Softmax over the wrong axis",
        wrong="weights = torch.softmax(masked, dim=-2)  # over the queries",
        right="weights = torch.softmax(masked, dim=-1)  # over the keys",
        symptom="Columns of the weights sum to 1 instead of rows: a query can get almost no "
        "attention in total or far more than 1, and an early key is shared out among the "
        "later queries, so the future leaks into the past.",
        caught_by="The rows-sum-to-1 check; the comparison with PyTorch.",
        loud=False,
        seen_in=(
            "https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/282",
            "https://github.com/PetrochukM/PyTorch-NLP/issues/2",
            "https://github.com/nerminnuraydogan/vision-transformer/issues/1",
            "https://github.com/nerdai/llms-from-scratch-rs/pull/30",
        ),
        checks=("rows", "pytorch", "causal"),
        test="def test_weights_rows_sum_to_one(layer, x):\n"
        "    weights = layer(x, 'causal').weights\n"
        "    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))",
    ),
    "scale_by_d_model": Bug(
        title="Scaling by √d_model instead of √d_head",
        wrong="scaled = scores / math.sqrt(d_model)",
        right="scaled = scores / math.sqrt(d_head)  # d_head = d_model // n_heads",
        symptom="Scores √H times too small: every row of weights is flatter than it should be, "
        "nearer uniform; a multi-head model learns slower. Identical with one head.",
        caught_by="The comparison with PyTorch's scaled_dot_product_attention (which scales "
        "by the size of q's last axis).",
        loud=False,
        seen_in=(
            "https://github.com/karpathy/ng-video-lecture/pull/6",
            "https://github.com/chelsea0x3b/dfdx/issues/171",
            "https://github.com/omihub777/ViT-CIFAR/pull/11",
            "https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/49",
            "https://github.com/rezazad68/TMUnet/issues/13",
        ),
        checks=("pytorch",),
        test="def test_layer_equals_sdpa(layer, x):\n"
        "    q, k, v = (split_heads(t, layer.n_heads) for t in layer.project_qkv(x[None]))\n"
        "    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)[0]\n"
        "    torch.testing.assert_close(layer(x, 'causal').heads, expected)",
    ),
    "no_scaling": Bug(
        title="No scaling at all",
        wrong="scaled = scores",
        right="scaled = scores / math.sqrt(d_head)",
        symptom="Scores √d_head times too large: the softmax saturates (one weight near 1, the "
        "rest near 0) and its gradient vanishes; training is slow or unstable for large d_head.",
        caught_by="The comparison with PyTorch's scaled_dot_product_attention.",
        loud=False,
        seen_in=(
            "https://github.com/PAIR-code/tiny-transformers/issues/71",
            "https://github.com/mlc-ai/mlc-llm/pull/3426",
            "https://github.com/huggingface/blog/pull/2893",
            "https://github.com/ethen8181/machine-learning/issues/13",
        ),
        checks=("pytorch",),
        test="def test_layer_equals_sdpa(layer, x):\n"
        "    q, k, v = (split_heads(t, layer.n_heads) for t in layer.project_qkv(x[None]))\n"
        "    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)[0]\n"
        "    torch.testing.assert_close(layer(x, 'causal').heads, expected)",
    ),
    "split_without_transpose": Bug(
        title="Splitting heads with view and no transpose",
        wrong="q = q.view(B, H, T, d_head)",
        right="q = q.view(B, T, H, d_head).transpose(1, 2)",
        symptom="The shapes are right, so nothing complains; but each 'head' now holds pieces of "
        "several tokens, so positions are scrambled, the causal mask guards the wrong pairs and "
        "the future leaks. Identical with one head.",
        caught_by="The comparison with PyTorch; a look-ahead test. Shape checks pass.",
        loud=False,
        seen_in=(
            "https://github.com/reczoo/FuxiCTR/issues/30",
            "https://github.com/hyunwoongko/transformer/issues/15",
            "https://github.com/649453932/Chinese-Text-Classification-Pytorch/issues/53",
            "https://github.com/bentrevett/pytorch-seq2seq/issues/148",
        ),
        checks=("pytorch", "causal"),
        test="def test_head_h_owns_its_columns(layer, x):\n"
        "    trace = layer(x, 'causal')\n"
        "    q_all = x @ layer.W_q.weight.T\n"
        "    for h in range(layer.n_heads):\n"
        "        cols = head_columns(layer.d_model, layer.n_heads, h)\n"
        "        torch.testing.assert_close(trace.q[h], q_all[:, cols.start:cols.stop])",
    ),
    "merge_without_transpose": Bug(
        title="Merging heads with reshape and no transpose",
        wrong="concat = heads.reshape(B, T, C)",
        right="concat = heads.transpose(1, 2).reshape(B, T, C)",
        symptom="Row t of the concatenation holds pieces of several tokens and heads: outputs "
        "land on the wrong positions, and later tokens' results appear on earlier rows. "
        "Identical with one head.",
        caught_by="The comparison with PyTorch; a look-ahead test. Shape checks pass.",
        loud=False,
        seen_in=(
            "https://github.com/jsbaan/transformer-from-scratch/pull/6",
            "https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/7",
            "https://github.com/649453932/Chinese-Text-Classification-Pytorch/issues/10",
            "https://github.com/ajhalthor/Transformer-Neural-Network/issues/8",
        ),
        checks=("pytorch", "causal"),
        test="def test_concat_row_t_is_token_t(layer, x):\n"
        "    trace = layer(x, 'causal')\n"
        "    for h in range(layer.n_heads):\n"
        "        cols = head_columns(layer.d_model, layer.n_heads, h)\n"
        "        torch.testing.assert_close(trace.concat[:, cols.start:cols.stop], trace.heads[h])",
    ),
    "view_without_contiguous": Bug(
        title="view after transpose, without contiguous",
        wrong="concat = heads.transpose(1, 2).view(B, T, C)",
        right="concat = heads.transpose(1, 2).contiguous().view(B, T, C)",
        symptom="RuntimeError: view size is not compatible with input tensor's size and stride "
        "(with more than one head and token).",
        caught_by="Any test that runs the forward with H > 1 and T > 1.",
        loud=True,
        seen_in=(),
        checks=("raises",),
        test="def test_forward_runs(layer, x):\n    layer(x, 'causal')",
    ),
    "mask_after_softmax": Bug(
        title="Masking after the softmax",
        wrong="weights = torch.softmax(scaled, dim=-1).masked_fill(~allowed, 0.0)",
        right="weights = torch.softmax(scaled.masked_fill(~allowed, float('-inf')), dim=-1)",
        symptom="Blocked weights are 0, but each row was normalised over every key, the future "
        "ones too: rows sum to less than 1 and how much depends on future tokens.",
        caught_by="The rows-sum-to-1 check; a look-ahead test.",
        loud=False,
        seen_in=(
            "https://github.com/huggingface/pytorch-image-models/pull/2236",
            "https://github.com/ruotianluo/self-critical.pytorch/issues/89",
        ),
        checks=("rows", "pytorch", "causal"),
        test="def test_weights_rows_sum_to_one(layer, x):\n"
        "    weights = layer(x, 'causal').weights\n"
        "    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))",
    ),
    "mask_inverted": Bug(
        title="The mask convention inverted",
        wrong="masked = scaled.masked_fill(allowed, float('-inf'))  # True = may attend",
        right="masked = scaled.masked_fill(~allowed, float('-inf'))",
        symptom="Each token attends only to the future and never to itself or the past; the "
        "last token has no key left (zeros here, NaN with a plain softmax).",
        caught_by="The blocked-weights-are-0 check; a look-ahead test.",
        loud=False,
        seen_in=(
            "https://github.com/rasbt/LLMs-from-scratch/issues/1061",
            "https://github.com/InseeFrLab/torchTextClassifiers/pull/92",
            "https://github.com/pytorch/pytorch/pull/170415",
        ),
        checks=("rows", "blocked", "pytorch", "causal"),
        test="def test_blocked_weights_are_zero(layer, x):\n"
        "    trace = layer(x, 'causal')\n"
        "    assert (trace.weights[..., ~causal_mask(len(x))] == 0).all()",
    ),
    "mask_off_by_one": Bug(
        title="The causal mask one diagonal off",
        wrong="allowed = torch.tril(torch.ones(T, T), diagonal=1).bool()",
        right="allowed = torch.tril(torch.ones(T, T), diagonal=0).bool()",
        symptom="Each token also sees the next one: a next-token model's training loss drops "
        "suspiciously low, and it fails at generation, where the next token is not there.",
        caught_by="The blocked-weights-are-0 check; a look-ahead test.",
        loud=False,
        seen_in=(
            "https://github.com/huggingface/transformers/issues/48745",
            "https://github.com/RVC-Boss/GPT-SoVITS/issues/965",
        ),
        checks=("blocked", "pytorch", "causal"),
        test="def test_no_look_ahead(layer, x):\n"
        "    changed = x.clone()\n"
        "    changed[-1] += 1.0\n"
        "    before, after = layer(x, 'causal').output, layer(changed, 'causal').output\n"
        "    torch.testing.assert_close(before[:-1], after[:-1])",
    ),
    "mask_blocks_self": Bug(
        title="The causal mask blocks the diagonal",
        wrong="blocked = torch.triu(torch.ones(T, T), diagonal=0).bool()",
        right="blocked = torch.triu(torch.ones(T, T), diagonal=1).bool()",
        symptom="No token may attend to itself; the first token has no key at all (zeros here, "
        "a row of NaN with a plain softmax, and a NaN loss).",
        caught_by="The comparison with PyTorch; the rows-sum-to-1 check (the first row).",
        loud=False,
        seen_in=(
            "https://github.com/pbloem/former/issues/10",
            "https://github.com/RVC-Boss/GPT-SoVITS/issues/965",
        ),
        checks=("rows", "pytorch"),
        test="def test_weights_rows_sum_to_one(layer, x):\n"
        "    weights = layer(x, 'causal').weights\n"
        "    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))",
    ),
    "fill_1e9_fp16": Bug(
        title="Filling with -1e9 in float16",
        wrong="masked = scaled.half().masked_fill(~allowed, -1e9)",
        right="masked = scaled.half().masked_fill(~allowed, float('-inf'))",
        symptom="RuntimeError: value cannot be converted to type at::Half (c10::Half in newer "
        "PyTorch) without overflow. float16 stops at ±65504.",
        caught_by="Any test that runs the forward in float16 (mixed precision).",
        loud=True,
        seen_in=(
            "https://github.com/NVIDIA/apex/issues/1052",
            "https://github.com/NVIDIA/apex/issues/1105",
            "https://github.com/InternLM/lmdeploy/issues/3152",
            "https://github.com/dotnet/TorchSharp/issues/1135",
        ),
        checks=("raises",),
        test="def test_forward_in_float16(layer, x):\n    layer.half()(x.half(), 'causal')",
    ),
    "no_output_projection": Bug(
        title="Forgetting W_o",
        wrong="output = concat",
        right="output = W_o(concat)",
        symptom="Each head's result stays in its own columns and the heads are never mixed; the "
        "layer has a quarter fewer parameters than it should and cannot match a trained model.",
        caught_by="The comparison with nn.MultiheadAttention on the same weights; a parameter "
        "count test.",
        loud=False,
        seen_in=(
            "https://github.com/Kyubyong/transformer/issues/117",
            "https://github.com/Kyubyong/transformer/pull/17",
            "https://github.com/jwallbridge/translob/issues/4",
            "https://github.com/stevezheng23/sequence_labeling_tf/pull/83",
        ),
        checks=("pytorch",),
        test="def test_parameter_count(layer):\n"
        "    C = layer.d_model\n"
        "    assert sum(p.numel() for p in layer.parameters()) == 4 * C * C",
    ),
    "mix_with_keys": Bug(
        title="Mixing the keys instead of the values",
        wrong="heads = weights @ k",
        right="heads = weights @ v",
        symptom="The output is a weighted average of the keys: W_v is never used (its gradient "
        "is 0) and the keys must serve as values too, so the layer learns worse.",
        caught_by="The comparison with PyTorch; a gradient test (W_v's gradient is all zeros).",
        loud=False,
        seen_in=(),
        checks=("pytorch",),
        test="def test_every_projection_gets_a_gradient(layer, x):\n"
        "    layer(x, 'causal').output.sum().backward()\n"
        "    grad = layer.W_v.weight.grad\n"
        "    assert grad is not None and grad.abs().sum() > 0",
    ),
    "dropout_at_eval": Bug(
        title="Attention dropout left on at evaluation",
        wrong="weights = F.dropout(weights, p, training=True)",
        right="weights = F.dropout(weights, p, training=self.training)",
        symptom="model.eval() changes nothing: the same input gives a different output every "
        "time, and validation scores are noisy and worse than they should be.",
        caught_by="A determinism test: two eval-mode forwards must agree.",
        loud=False,
        seen_in=(
            "https://github.com/karpathy/nanoGPT/pull/240",
            "https://github.com/pytorch/pytorch/issues/124464",
            "https://github.com/coleygroup/ms-pred/issues/38",
            "https://github.com/Coderx7/SimpleNet/issues/2",
        ),
        checks=("pytorch", "repeat"),
        test="def test_eval_is_deterministic(layer, x):\n"
        "    layer.eval()\n"
        "    torch.testing.assert_close(layer(x, 'causal').output, layer(x, 'causal').output)",
    ),
}

BUG_NAMES: tuple[str, ...] = tuple(BUGS)
SILENT_BUGS: tuple[str, ...] = tuple(name for name, bug in BUGS.items() if not bug.loud)
DROPOUT_P = 0.1  # the dropout a student's layer was built with, for dropout_at_eval


def bug(name: str) -> Bug:
    """The Bug of that name, or ValueError listing the names."""
    if name not in BUGS:
        raise ValueError(f"unknown bug {name!r}; bugs are {', '.join(BUG_NAMES)}")
    return BUGS[name]


def buggy_mask(name: str, allowed: Tensor) -> Tensor:
    """The mask the buggy line applies (True = may attend), from the intended one (..., T, T)."""
    T_q, T_k = allowed.shape[-2:]  # rows: queries, columns: keys
    if name == "mask_inverted":
        return ~allowed
    if name == "mask_off_by_one":  # each query gets the next query's row: causal -> tril(1)
        return torch.cat([allowed[..., 1:, :], allowed[..., -1:, :]], dim=-2)
    if name == "mask_blocks_self":  # triu(diagonal=0) blocks the diagonal too
        return allowed & ~torch.eye(T_q, T_k, dtype=torch.bool)
    return allowed


def run_buggy(
    name: str,
    layer: MultiHeadSelfAttention,
    x: Tensor,
    mask: MaskSpec = None,
    *,
    mask_value: float = NEG_INF,
    generator: torch.Generator | None = None,
) -> AttentionTrace:
    """The layer's forward with exactly the one mistake `name`, every intermediate traced.

    The trace's `allowed` is the mask the buggy code applied (for mask_after_softmax: after the
    softmax); compare with the intended one through `run_checks`. Loud bugs raise PyTorch's
    RuntimeError. dropout_at_eval drops with p = DROPOUT_P from `generator`."""
    bug(name)
    layer.check_input(x)
    mask_value = check_mask_value(mask_value)
    batched = x.ndim == 3
    x3 = x if batched else x.unsqueeze(0)  # (B, T, C)
    B, T, C = x3.shape
    H, d_head = layer.n_heads, layer.d_head
    intended = resolve_mask(mask, (B, H, T, T)).expand(B, H, T, T)
    allowed = buggy_mask(name, intended)  # (B, H, T, T)

    if name == "fill_1e9_fp16":  # mixed precision: the whole forward in float16
        x3 = x3.half()
    q_all, k_all, v_all = layer.project_qkv(x3)  # 3 x (B, T, C)
    if name == "split_without_transpose":
        q, k, v = (t.view(B, H, T, d_head) for t in (q_all, k_all, v_all))  # (B, H, T, d_head)
    else:
        q, k, v = (split_heads(t, H) for t in (q_all, k_all, v_all))  # (B, H, T, d_head)

    scores = dot_scores(q, k)  # (B, H, T, T)
    if name == "no_scaling":
        scale = 1.0
    elif name == "scale_by_d_model":
        scale = 1.0 / math.sqrt(C)
    else:
        scale = 1.0 / math.sqrt(d_head)
    scaled = scores * scale  # (B, H, T, T)

    if name == "mask_after_softmax":
        masked = scaled  # nothing masked before the softmax
        weights = torch.softmax(scaled, dim=-1).masked_fill(~allowed, 0.0)  # (B, H, T, T)
    else:
        fill = -1e9 if name == "fill_1e9_fp16" else mask_value
        masked = scaled.masked_fill(~allowed, fill)  # float16 and -1e9: PyTorch raises here
        if name == "softmax_over_queries":
            weights = torch.softmax(masked, dim=-2)  # (B, H, T, T), columns sum to 1
        else:
            weights = softmax_rows(masked, allowed, mask_value)  # (B, H, T, T)

    dropped = None
    if name == "dropout_at_eval":
        keep = torch.rand(weights.shape, generator=generator, dtype=weights.dtype) >= DROPOUT_P
        dropped = weights * keep / (1.0 - DROPOUT_P)  # F.dropout(weights, p, training=True)
    heads = (weights if dropped is None else dropped) @ (k if name == "mix_with_keys" else v)

    if name == "merge_without_transpose":
        concat = heads.reshape(B, T, C)  # (B, T, C), rows mix tokens and heads
    elif name == "view_without_contiguous":
        concat = heads.transpose(1, 2).view(B, T, C)  # raises for H > 1 and T > 1
    else:
        concat = merge_heads(heads)  # (B, T, C)
    if name == "no_output_projection" or layer.W_o is None:
        output = concat
    else:
        output = layer._linear(layer.W_o, concat)  # (B, T, C)

    trace = AttentionTrace(
        x=x3, q=q, k=k, v=v, scores=scores, scaled=scaled, masked=masked, weights=weights,
        heads=heads, concat=concat, output=output, allowed=allowed, scale=scale,
        mask_value=mask_value, dropped=dropped,
    )  # fmt: skip
    return trace if batched else unbatch(trace)


def pytorch_output(layer: MultiHeadSelfAttention, x: Tensor, allowed: Tensor) -> Tensor:
    """The layer's output computed with PyTorch's own F.scaled_dot_product_attention."""
    x3 = x if x.ndim == 3 else x.unsqueeze(0)  # (B, T, C)
    q, k, v = (split_heads(t, layer.n_heads) for t in layer.project_qkv(x3))  # (B, H, T, d)
    has_key = allowed.any(dim=-1, keepdim=True)  # SDPA gives NaN for a row with no key
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~has_key)
    heads = heads.masked_fill(~has_key, 0.0)  # (B, H, T, d_head)
    concat = merge_heads(heads)  # (B, T, C)
    output = concat if layer.W_o is None else layer._linear(layer.W_o, concat)
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
    """The live checks on the buggy forward `name` (None: the correct layer), unbatched x."""

    def forward(inputs: Tensor, generator_seed: int) -> AttentionTrace:
        generator = torch.Generator().manual_seed(generator_seed)
        if name is None:
            return layer.eval()(inputs, mask)
        return run_buggy(name, layer, inputs, mask, generator=generator)

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
