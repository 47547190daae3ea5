"""Lesson 14's check-yourself questions, on the Shakespeare GPT's own numbers at the student's
text, position and character (attention/lm/block.py).

Each asks for a number the page does not print (a feature past the LayerNorm table's first
SHOWN_FEATURES, a character the lens's row does not list) and names the misconceptions whose
numbers a wrong answer matches: adding before the LayerNorm (normalising the sum, as a post-LN
block does, and carrying that on) or adding LN(x) instead of x; reading the lens without the
final LayerNorm; a softmax over the wrong axis (down a character's column, over positions);
and, for LayerNorm itself, the variance for the spread, no γ and β, the mean left in.
"""

from __future__ import annotations

import math

import torch

from attention.drills import TOLERANCE, Drill, Given, Mistake, exact_note, f4, factor, shown
from attention.lm.block import (
    Lens,
    Stream,
    check_position,
    layer_norm_row,
    lens_without_final_norm,
    logit_lens,
)
from attention.lm.corpus import GLYPHS, vocabulary
from attention.lm.model import CharGPT
from attention.questions import grouped_mistakes

SHOWN_FEATURES = 8  # the LayerNorm table on the page prints features 0 .. 7; questions ask past
LENS_TOP = 3  # characters the lens's row lists per stage
LENS_STAGE = 1  # the question's stage: after layer 0's attention (lens_pick)
CLEAR = 4 * TOLERANCE  # the lens question's answer at least this far from 0
LENS_ROWS = 3  # positions in the question's table: p - 2 .. p

MISCONCEPTIONS = {
    "block_add_before_ln": "Adding before the LayerNorm (post-LN: LN(x + attention) carried on)",
    "block_add_normed": "Adding LN(x) instead of x (the residual skips the LayerNorm)",
    "block_lens_no_final_ln": "Reading the lens without the final LayerNorm",
    "block_softmax_wrong_axis": "A softmax over the wrong axis (down the character's column, "
    "over the positions in the table)",
    "block_ln_variance": "Dividing by the variance instead of the spread √(variance + ε)",
    "block_ln_no_affine": "Leaving out γ and β",
    "block_ln_no_mean": "Leaving the mean in",
}


def glyph(char: int) -> str:
    c = vocabulary()[char]
    return GLYPHS.get(c, c)


def mistakes(values: dict[str, float], truth: float) -> tuple[Mistake, ...]:
    """The misconceptions' numbers as a question's mistakes (questions.grouped_mistakes)."""
    return grouped_mistakes(values, truth, MISCONCEPTIONS)


def past_shown(values: torch.Tensor) -> int:
    """The feature, past the first SHOWN_FEATURES (the page prints those), of the largest |value|
    (all of them where there are no more)."""
    start = SHOWN_FEATURES if values.shape[0] > SHOWN_FEATURES else 0
    return start + int(values[start:].abs().argmax())


def number_drill(prompt, given, truth, hand, working, name, found, percent=False) -> Drill:
    return Drill(
        "number", prompt, given, truth, f4(truth),
        (*working, *exact_note(name, hand, truth), *(m.said() for m in found)),
        mistakes=found, percent=percent,
    )  # fmt: skip


def residual_question(stream: Stream, position: int) -> Drill:
    """Question 1: the stream after block 0 at one feature, from what the block read and wrote."""
    b = stream.blocks[0]
    j = past_shown(b.attn_out[position] + b.mlp_out[position])  # where the block writes most
    x, ln1 = float(b.resid_pre[position, j]), float(b.ln1[position, j])
    a, ln2, m = (
        float(b.attn_out[position, j]),
        float(b.ln2[position, j]),
        float(b.mlp_out[position, j]),
    )
    truth = float(b.resid_post[position, j])
    hand = shown(x) + shown(a) + shown(m)
    c = stream.tokens()[position]
    rows = (
        # short labels: a question's row labels are cut at every width past ~24 characters
        ("x (after the embedding)", x),
        ("LN1(x)", ln1),
        ("attention 0's output", a),
        ("LN2(x + attention)", ln2),
        ("MLP 0's output", m),
    )
    return number_drill(
        f"Layer 0's block at position {position} ('{c}'), feature {j} of {b.resid_pre.shape[1]}: "
        "the numbers below are what the block read and wrote there (attention reads LN1(x), "
        "the MLP LN2(x + attention)). What does the residual "
        f"stream hold at feature {j} after the block (after layer 0's MLP)?",
        Given((f"feature {j}",), tuple((label, (v,)) for label, v in rows)),
        truth, hand,
        (
            "The block adds to the stream; the LayerNorms only shape what attention and the "
            "MLP read: x + attention + MLP",
            f"{f4(x)} + {factor(a)} + {factor(m)} = {f4(hand)}",
        ),
        f"the stream at feature {j}",
        mistakes({"block_add_before_ln": ln2 + m, "block_add_normed": ln1 + a + m}, truth),
    )  # fmt: skip


def lens_pick(lens: Lens, position: int, chosen: int) -> tuple[int, int]:
    """The question's stage and character: at a stage, the likeliest character that the lens's
    row does not list (past its top LENS_TOP) and is not the page's chosen one. LENS_STAGE's,
    unless its probability is under CLEAR (a guess of 0 would pass the drills' tolerance): then
    the stage where that character is likeliest."""
    picks = []
    for stage in range(lens.probs.shape[0]):
        order = torch.argsort(lens.probs[stage, position], descending=True).tolist()
        c = next(c for c in order[LENS_TOP:] if c != chosen)
        picks.append((float(lens.probs[stage, position, c]), stage, c))
    if picks[LENS_STAGE][0] >= CLEAR:
        return picks[LENS_STAGE][1:]
    return max(picks)[1:]


def lens_question(model: CharGPT, stream: Stream, position: int, chosen: int) -> Drill:
    """Question 2: a lens probability from its logits and the log of its normaliser, with the
    un-normed logits beside them and other positions above (the misconceptions' numbers)."""
    lens = logit_lens(model, stream)
    stage_index, c = lens_pick(lens, position, chosen)
    logits = lens.logits[stage_index]  # (T, vocab)
    raw = lens_without_final_norm(model, stream)[stage_index]  # (T, vocab)
    first = max(0, position - LENS_ROWS + 1)
    rows = []
    for i in range(first, position + 1):
        rows.append((f"{i} LN_f(x) Uᵀ", (float(logits[i, c]), float(logits[i].logsumexp(0)))))
    rows.append(
        (f"{position} x Uᵀ (no LN_f)", (float(raw[position, c]), float(raw[position].logsumexp(0))))
    )
    truth = lens.probability(stage_index, position, c)
    logit, lse = rows[position - first][1]
    hand = math.exp(shown(logit) - shown(lse))
    column = logits[first : position + 1, c]  # (rows,)
    values = {
        "block_lens_no_final_ln": float(torch.softmax(raw[position], 0)[c]),
        "block_softmax_wrong_axis": float(torch.softmax(column, 0)[-1]),
    }
    stage = lens.stages[stage_index].title
    return number_drill(
        f"The logit lens {stage}: each row is a position's logits, the column "
        f"'{glyph(c)}' that character's logit and 'all {logits.shape[1]}' the log of Σ exp over "
        f"every character's logit at that position. The last row is position {position}'s "
        "stream put through U without the final LayerNorm. What probability does the lens give "
        f"'{glyph(c)}' as the next character after position {position}?",
        Given((f"'{glyph(c)}'", f"all {logits.shape[1]}"), tuple(rows)),
        truth, hand,
        (
            "The lens is the model's own last step on the stream so far: the final LayerNorm, "
            "then U, then a softmax over the characters (one position's row)",
            f"p = exp(logit − log Σ exp) = exp({f4(logit)} − {factor(lse)}) = {f4(hand)}",
        ),
        "p",
        mistakes(values, truth),
        percent=True,
    )  # fmt: skip


def layer_norm_question(model: CharGPT, stream: Stream, position: int) -> Drill:
    """Question 3: one output of the last block's LN2 from its row's mean and variance."""
    b = stream.blocks[-1]
    ln = model.blocks[b.layer].ln_2
    done = layer_norm_row(ln, b.resid_mid[position])
    j = past_shown(done.row - done.mean)
    x, g, beta = float(done.row[j]), float(done.gamma[j]), float(done.beta[j])
    mean, var, eps = done.mean, done.variance, done.eps
    truth = float(done.output[j])
    std = math.sqrt(shown(var) + eps)
    hand = (shown(x) - shown(mean)) / std * shown(g) + shown(beta)
    values = {
        "block_ln_variance": (x - mean) / (var + eps) * g + beta,
        "block_ln_no_affine": (x - mean) / math.sqrt(var + eps),
        "block_ln_no_mean": x / math.sqrt(var + eps) * g + beta,
    }
    return number_drill(
        f"LN2 of layer {b.layer}, at position {position}: its input row (the stream after layer "
        f"{b.layer}'s attention) has the mean and variance below over its "
        f"{done.row.shape[0]} numbers; ε = {eps:g}. What does the LayerNorm output at feature "
        f"{j}?",
        Given(
            (f"x_{j}", "mean", "variance", f"γ_{j}", f"β_{j}"),
            ((f"position {position}", (x, mean, var, g, beta)),),
        ),
        truth, hand,
        (
            "LN(x)_j = (x_j − mean) / √(variance + ε) × γ_j + β_j",
            f"spread = √({f4(var)} + {eps:g}) = {f4(std)}",
            f"({f4(x)} − {factor(mean)}) / {f4(std)} × {factor(g)} + {factor(beta)} = {f4(hand)}",
        ),
        f"LN(x)_{j}",
        mistakes(values, truth),
    )  # fmt: skip


def block_questions(
    model: CharGPT, stream: Stream, position: int, chosen: int
) -> tuple[Drill, ...]:
    """The lesson's three questions at a position of the text, `chosen` the page's character."""
    position = check_position(stream, position)
    return (
        residual_question(stream, position),
        lens_question(model, stream, position, chosen),
        layer_norm_question(model, stream, position),
    )
