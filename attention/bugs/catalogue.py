"""The classic from-scratch attention mistakes: what each looks like, where it was reported, and
which step of the layer's plain forward it replaces.

A mistake is one step of `Steps` (attention/ops.py) replaced by the function a student wrote
(mistakes.py), run on the layer's own weights: `student_layer(name, layer)` is that layer,
`run_buggy` its forward with every intermediate traced. The code is plain differentiable torch,
so a model can train through it (training.py); a loud bug raises what PyTorch raises for it.
What a student reads is what runs: the lesson shows `source_diff` (the two functions' sources)
and the catching test's source (catching.py).
"""

from __future__ import annotations

import ast
import copy
import difflib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from attention.bugs import catching, mistakes
from attention.layer import MultiHeadSelfAttention
from attention.masks import MaskSpec
from attention.ops import NEG_INF, PLAIN, Steps
from attention.trace import AttentionTrace

DROPOUT_P = 0.1  # the attention dropout a student's layer was built with, for dropout_at_eval


@dataclass(frozen=True)
class Bug:
    """One classic mistake: the step it replaces, how it shows, and the test that catches it."""

    title: str
    replaces: str  # the field of Steps whose function the student wrote wrong
    mistake: Callable  # the student's function (mistakes.py), with the plain step's signature
    symptom: str  # what a student sees
    caught_by: str  # which invariant or test catches it, in words
    loud: bool  # True when PyTorch raises instead of computing wrong numbers
    seen_in: tuple[str, ...]  # public reports where it happened
    checks: tuple[str, ...]  # keys of CHECKS that fail for it (on a causal multi-head layer)
    test: Callable[[MultiHeadSelfAttention, Tensor], None]  # catching.py: fails on the student's
    dropout: float = 0.0  # the attention dropout of the student's layer

    @property
    def plain(self) -> Callable:
        """The layer's own step that the mistake replaces."""
        return getattr(PLAIN, self.replaces)

    @property
    def steps(self) -> Steps:
        """The plain steps with this one mistake in place."""
        return replace(PLAIN, **{self.replaces: self.mistake})


BUGS: dict[str, Bug] = {
    "softmax_over_queries": Bug(
        title="Softmax over the wrong axis",
        replaces="mask_and_softmax",
        mistake=mistakes.softmax_over_queries,
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
        test=catching.test_weights_rows_sum_to_one,
    ),
    "scale_by_d_model": Bug(
        title="Scaling by √d_model instead of √d_k",
        replaces="choose_scale",
        mistake=mistakes.scale_by_d_model,
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
        test=catching.test_layer_equals_sdpa,
    ),
    "no_scaling": Bug(
        title="No scaling at all",
        replaces="choose_scale",
        mistake=mistakes.no_scaling,
        symptom="Scores √d_k times too large: the softmax saturates (one weight near 1, the "
        "rest near 0) and its gradient vanishes; training is slow or unstable for large d_k.",
        caught_by="The comparison with PyTorch's scaled_dot_product_attention.",
        loud=False,
        seen_in=(
            "https://github.com/PAIR-code/tiny-transformers/issues/71",
            "https://github.com/mlc-ai/mlc-llm/pull/3426",
            "https://github.com/huggingface/blog/pull/2893",
            "https://github.com/ethen8181/machine-learning/issues/13",
        ),
        checks=("pytorch",),
        test=catching.test_layer_equals_sdpa,
    ),
    "split_without_transpose": Bug(
        title="Splitting heads with view and no transpose",
        replaces="split_heads",
        mistake=mistakes.split_without_transpose,
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
        test=catching.test_head_h_owns_its_columns,
    ),
    "merge_without_transpose": Bug(
        title="Merging heads with reshape and no transpose",
        replaces="merge_heads",
        mistake=mistakes.merge_without_transpose,
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
        test=catching.test_concat_row_t_is_token_t,
    ),
    "view_without_contiguous": Bug(
        title="view after transpose, without contiguous",
        replaces="merge_heads",
        mistake=mistakes.view_without_contiguous,
        symptom="RuntimeError: view size is not compatible with input tensor's size and stride "
        "(with more than one head and token).",
        caught_by="Any test that runs the forward with H > 1 and T > 1.",
        loud=True,
        seen_in=(),
        checks=("raises",),
        test=catching.test_forward_runs,
    ),
    "mask_after_softmax": Bug(
        title="Masking after the softmax",
        replaces="mask_and_softmax",
        mistake=mistakes.mask_after_softmax,
        symptom="Blocked weights are 0, but each row was normalised over every key, the future "
        "ones too: rows sum to less than 1 and how much depends on future tokens.",
        caught_by="The rows-sum-to-1 check; a look-ahead test.",
        loud=False,
        seen_in=(
            "https://github.com/huggingface/pytorch-image-models/pull/2236",
            "https://github.com/ruotianluo/self-critical.pytorch/issues/89",
        ),
        checks=("rows", "pytorch", "causal"),
        test=catching.test_weights_rows_sum_to_one,
    ),
    "mask_inverted": Bug(
        title="The mask convention inverted",
        replaces="build_causal_mask",
        mistake=mistakes.mask_inverted,
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
        test=catching.test_blocked_weights_are_zero,
    ),
    "mask_off_by_one": Bug(
        title="The causal mask one diagonal off",
        replaces="build_causal_mask",
        mistake=mistakes.mask_off_by_one,
        symptom="Each token also sees the next one: a next-token model's training loss drops "
        "suspiciously low, and it fails at generation, where the next token is not there.",
        caught_by="The blocked-weights-are-0 check; a look-ahead test.",
        loud=False,
        seen_in=(
            "https://github.com/huggingface/transformers/issues/48745",
            "https://github.com/RVC-Boss/GPT-SoVITS/issues/965",
        ),
        checks=("blocked", "pytorch", "causal"),
        test=catching.test_no_look_ahead,
    ),
    "mask_blocks_self": Bug(
        title="The causal mask blocks the diagonal",
        replaces="build_causal_mask",
        mistake=mistakes.mask_blocks_self,
        symptom="No token may attend to itself; the first token has no key at all (zeros here, "
        "a row of NaN with a plain softmax, and a NaN loss).",
        caught_by="The comparison with PyTorch; the rows-sum-to-1 check (the first row).",
        loud=False,
        seen_in=(
            "https://github.com/pbloem/former/issues/10",
            "https://github.com/RVC-Boss/GPT-SoVITS/issues/965",
        ),
        checks=("rows", "pytorch"),
        test=catching.test_weights_rows_sum_to_one,
    ),
    "fill_1e9_fp16": Bug(
        title="Filling with -1e9 in float16",
        replaces="mask_and_softmax",
        mistake=mistakes.fill_1e9_fp16,
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
        test=catching.test_forward_in_float16,
    ),
    "no_output_projection": Bug(
        title="Forgetting W_o",
        replaces="project_out",
        mistake=mistakes.no_output_projection,
        symptom="Each head's result stays in its own columns and the heads are never mixed; a "
        "quarter of the layer's parameters (W_o) do nothing, and it cannot match a trained model.",
        caught_by="The comparison with nn.MultiheadAttention on the same weights; a gradient test "
        "(W_o's gradient stays empty), or a parameter count when W_o was never made.",
        loud=False,
        seen_in=(
            "https://github.com/Kyubyong/transformer/issues/117",
            "https://github.com/Kyubyong/transformer/pull/17",
            "https://github.com/jwallbridge/translob/issues/4",
            "https://github.com/stevezheng23/sequence_labeling_tf/pull/83",
        ),
        checks=("pytorch",),
        test=catching.test_every_weight_gets_a_gradient,
    ),
    "mix_with_keys": Bug(
        title="Mixing the keys instead of the values",
        replaces="mix_values",
        mistake=mistakes.mix_with_keys,
        symptom="The output is a weighted average of the keys: W_v is never used (its gradient "
        "is 0) and the keys must serve as values too, so the layer learns worse.",
        caught_by="The comparison with PyTorch; a gradient test (W_v's gradient is all zeros).",
        loud=False,
        seen_in=(),
        checks=("pytorch",),
        test=catching.test_every_weight_gets_a_gradient,
    ),
    "dropout_at_eval": Bug(
        title="Attention dropout left on at evaluation",
        replaces="dropout_weights",
        mistake=mistakes.dropout_at_eval,
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
        test=catching.test_eval_is_deterministic,
        dropout=DROPOUT_P,
    ),
}

BUG_NAMES: tuple[str, ...] = tuple(BUGS)
SILENT_BUGS: tuple[str, ...] = tuple(name for name, bug in BUGS.items() if not bug.loud)


def bug(name: str) -> Bug:
    """The Bug of that name, or ValueError listing the names."""
    if name not in BUGS:
        raise ValueError(f"unknown bug {name!r}; bugs are {', '.join(BUG_NAMES)}")
    return BUGS[name]


def student_layer(name: str, layer: MultiHeadSelfAttention) -> MultiHeadSelfAttention:
    """The layer as a student wrote it with the mistake `name`, evaluated (not training): the
    same weights (shared, not copied), the mistake in place of the plain step."""
    mistake = bug(name)
    student = copy.copy(layer)  # a new module object holding the same parameters
    student.steps = mistake.steps
    student.dropout = mistake.dropout
    student.training = False
    return student


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
    softmax). Loud bugs raise PyTorch's RuntimeError. dropout_at_eval drops with p = DROPOUT_P
    from `generator`."""
    return student_layer(name, layer)(x, mask, mask_value=mask_value, generator=generator)


def code_lines(function: Callable) -> tuple[list[str], list[str]]:
    """A function's source as written: its header (def .. colon) and its body, docstring left
    out."""
    lines = textwrap.dedent(inspect.getsource(function)).splitlines()
    first = ast.parse("\n".join(lines)).body[0].body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return lines[: first.lineno - 1], lines[first.end_lineno if docstring else first.lineno - 1 :]


def source_diff(bug: Bug) -> str:
    """The plain step against the student's, as the diff of their sources: the plain step's
    header, then its body line by line, "-" for the plain step's lines, "+" for the student's.
    (The two signatures are the same; the student's function is only named after its bug.)"""
    header, plain = code_lines(bug.plain)
    _, wrong = code_lines(bug.mistake)
    whole = max(len(plain), len(wrong))  # context enough for one hunk: the whole body
    diff = list(difflib.unified_diff(plain, wrong, n=whole, lineterm=""))[3:]  # no ---, +++, @@
    return "\n".join([" " + line for line in header] + diff)


def source(function: Callable) -> str:
    """A function's whole source, as the lesson shows a catching test."""
    return textwrap.dedent(inspect.getsource(function)).rstrip("\n")
