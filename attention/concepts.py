"""A concept check over the course's core ideas, in two parallel forms, and the figures physics
education reports for a course taught between them (issue 45; docs/concept_check.md).

Ten items, one concept each. Every wrong choice is a misconception of the bug hunt's catalogue
(attention.bugs) or of the course's own list below, and the two forms ask the same concept with
the same misconceptions on other numbers, so the form taken after is not the form taken before
remembered; an item's choices have the same shape in both forms (as many, and as many of them
whole numbers), so neither form is easier to guess by elimination (issue 55). The numbers of a
numeric item's choices are computed here, each by the mistake that names it, never typed.

The figures (Hake 1998; Marx & Cummings 2007; Nissen et al. 2018):
    class gain <g> = (post% - pre%) / (100 - pre%), on the class's mean scores
    a student's normalized change c = (post - pre) / (100 - pre) if post > pre,
                                      (post - pre) / pre if post < pre, 0 if equal;
                                      left out (and counted) when pre = post = 0 or 100
    Cohen's d_z for paired scores = mean(post - pre) / sd(post - pre), with a 95 % interval;
    and Cohen's d on the pooled spread = (mean post - mean pre) / √((sd_pre² + sd_post²) / 2)
    per item: difficulty (share right) and discrimination (point-biserial r of the item with the
    total of the other items)
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Misconceptions not in the bug hunt's catalogue (its keys, attention.bugs.BUGS, are used too)
MISCONCEPTIONS = {
    "score_scaled": "taking the raw score to be already divided by √d_k",
    "score_adds": "adding all the entries of q and k instead of multiplying pairs",
    "score_lengths": "multiplying the lengths of q and k, ignoring their angle",
    "variance_as_sd": "giving the variance d_k where the spread (√d_k) is asked",
    "scale_already": "thinking q · k already has spread 1",
    "scale_inverted": "giving 1/√d_k, the scale, for the spread",
    "softmax_all_entries": "normalising over every entry of the matrix",
    "hard_attention": "taking the softmax to pick only the largest score",
    "uniform_over_allowed": "spreading the weight evenly over the allowed keys",
    "every_head_all_columns": "giving every head all C columns",
    "interleaved_split": "splitting the columns interleaved: head h takes every H-th column",
    "scale_by_heads": "dividing by √H, the number of heads",
    "scale_by_d_k": "dividing by d_k itself, not by its square root",
    "one_column_a_head": "giving each head one column",
    "order_invariant": "thinking each output stays in its row when the inputs move",
    "order_aware": "thinking attention without positions knows where each token is",
    "order_blurs": "thinking attention without positions blends every token into one average",
    "cache_queries": "caching the queries too",
    "cache_weights": "caching the attention weights",
    "cache_causal_weights": "caching the attention weights, the causal triangle of them",
    "cache_keys_only": "caching the keys only",
    "sum_values": "adding the values without weighting them",
    "average_values": "averaging the values evenly",
    "no_mask": "applying no mask at all",
}
# and the bug hunt's mistakes a wrong choice can be (their titles: attention.bugs.BUGS); no other
BUG_KEYS = (
    "softmax_over_queries", "mask_after_softmax", "mask_inverted", "mask_blocks_self",
    "scale_by_d_model", "mix_with_keys",
)  # fmt: skip


def misconception_title(key: str) -> str:
    """What a misconception key names, in words."""
    if key in MISCONCEPTIONS:
        return MISCONCEPTIONS[key]
    if key not in BUG_KEYS:
        raise KeyError(f"{key!r} is no misconception of the concept check")
    from attention.bugs import BUGS  # the catalogue's titles, read when first named

    return BUGS[key].title


CONCEPTS = (
    "what a score is",
    "why scale by √d_k",
    "which axis the softmax runs over",
    "what the causal mask blocks",
    "masking before the softmax",
    "how heads split the columns",
    "which d_k scales the scores",
    "why attention needs positions",
    "what the KV cache stores",
    "the output mixes the values",
)


@dataclass(frozen=True)
class Item:
    """One question of a form: its concept, the right choice, and each wrong choice with the
    misconceptions (keys of MISCONCEPTIONS or BUG_KEYS) that give it."""

    number: int  # 1 .. 10, the same concept in both forms
    form: str  # "A" or "B"
    concept: str
    prompt: str
    right: str
    wrong: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def choices(self) -> tuple[str, ...]:
        """Every choice, in an order fixed by the item (not the right one always first)."""
        options = [self.right, *(choice for choice, _ in self.wrong)]
        random.Random(f"{self.form}{self.number}").shuffle(options)
        return tuple(options)

    def diagnosis(self, choice: str) -> tuple[str, ...]:
        """The misconceptions a choice shows (none for the right one or an unknown one)."""
        return next((named for wrong, named in self.wrong if wrong == choice), ())


def number(value: float) -> str:
    """A choice's number as the check prints it."""
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    if abs(value * 1000 - round(value * 1000)) < 1e-9 and round(value * 1000) % 10:
        return f"{value:.3f}"  # 0.125 as it is, never rounded to 0.12 or 0.13
    return f"{value:.2f}"


def merged(right: str, wrong: Sequence[tuple[str, str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Wrong choices (text, misconception), those that print the same merged into one choice,
    and none that prints as the right one."""
    found: dict[str, list[str]] = {}
    for text, name in wrong:
        if text != right:
            found.setdefault(text, []).append(name)
    return tuple((text, tuple(names)) for text, names in found.items())


def score_text(value: float) -> str:
    """A scaled score as the check prints it: ln n where e^value is a whole number n >= 2 (so
    the softmax is worked by hand), else the number."""
    n = round(math.exp(value))
    return f"ln {n}" if n >= 2 and abs(math.log(n) - value) < 1e-12 else number(value)


def softmax(row: Sequence[float]) -> list[float]:
    top = max(row)
    exps = [math.exp(v - top) for v in row]
    return [e / sum(exps) for e in exps]


def score_item(form: str, q: tuple[float, ...], k: tuple[float, ...]) -> Item:
    dot = sum(a * b for a, b in zip(q, k, strict=True))
    right = number(dot)
    wrong = [
        (number(dot / math.sqrt(len(q))), "score_scaled"),
        (number(sum(q) + sum(k)), "score_adds"),
        (number(math.dist(q, [0] * len(q)) * math.dist(k, [0] * len(k))), "score_lengths"),
    ]
    return Item(1, form, CONCEPTS[0],
                f"A query q = {q} meets a key k = {k}. What is their raw score?",
                right, merged(right, wrong))  # fmt: skip


def scale_item(form: str, d_k: int) -> Item:
    right = number(math.sqrt(d_k))
    wrong = [(number(d_k), "variance_as_sd"), ("1", "scale_already"),
             (number(1 / math.sqrt(d_k)), "scale_inverted")]  # fmt: skip
    return Item(2, form, CONCEPTS[1],
                f"q and k have d_k = {d_k} entries, each drawn with mean 0 and variance 1. Before "
                "scaling, what is the typical spread (standard deviation) of q · k?",
                right, merged(right, wrong))  # fmt: skip


def axis_item(form: str, scores: tuple[tuple[float, ...], ...], i: int, j: int) -> Item:
    rows = [list(r) for r in scores]
    right = number(softmax(rows[i])[j])
    column = [r[j] for r in rows]
    every = [v for r in rows for v in r]
    top = max(rows[i])
    wrong = [
        (number(softmax(column)[i]), "softmax_over_queries"),
        (number(math.exp(rows[i][j]) / sum(math.exp(v) for v in every)), "softmax_all_entries"),
        (number(1.0 if rows[i][j] == top else 0.0), "hard_attention"),
    ]
    shown = "; ".join("(" + ", ".join(score_text(v) for v in r) + ")" for r in rows)
    return Item(3, form, CONCEPTS[2],
                f"Scaled scores, one row per query, one column per key: {shown}. What weight "
                f"does query {i} put on key {j}? (No mask.)",
                right, merged(right, wrong))  # fmt: skip


def keys_text(keys: Sequence[int]) -> str:
    return ", ".join(map(str, keys)) if keys else "none"


def causal_item(form: str, T: int, query: int) -> Item:
    right = keys_text(range(query + 1))
    wrong = [
        (keys_text(range(query)), "mask_blocks_self"),
        (keys_text(range(query + 1, T)), "mask_inverted"),  # True and False swapped: j > i
        (keys_text(range(T)), "no_mask"),
    ]
    return Item(4, form, CONCEPTS[3],
                f"A causal mask over T = {T} tokens (0 to {T - 1}). Which keys may query {query} "
                "attend to?",
                right, merged(right, wrong))  # fmt: skip


def mask_item(form: str, row: tuple[float, ...], query: int, key: int) -> Item:
    allowed = row[: query + 1]
    right = number(softmax(list(allowed))[key])
    wrong = [
        (number(softmax(list(row))[key]), "mask_after_softmax"),
        (number(softmax(list(row))[key]), "no_mask"),
        (number(0.0 if key <= query else 1.0), "mask_inverted"),
        (number(1 / len(allowed)), "uniform_over_allowed"),
    ]
    shown = ", ".join(score_text(v) for v in row)
    return Item(5, form, CONCEPTS[4],
                f"Query {query}'s scaled scores against keys 0 to {len(row) - 1} are ({shown}); a "
                f"causal mask applies. What weight does key {key} get?",
                right, merged(right, wrong))  # fmt: skip


def columns_text(columns: Sequence[int]) -> str:
    columns = list(columns)
    if len(columns) > 2 and columns == list(range(columns[0], columns[-1] + 1)):
        return f"{columns[0]} to {columns[-1]}"
    return ", ".join(map(str, columns))


def heads_item(form: str, C: int, H: int, head: int) -> Item:
    d = C // H
    right = columns_text(range(head * d, (head + 1) * d))
    wrong = [
        (columns_text(range(head, C, H)), "interleaved_split"),
        (columns_text(range(C)), "every_head_all_columns"),
        (columns_text([head]), "one_column_a_head"),
    ]
    return Item(6, form, CONCEPTS[5],
                f"Q has C = {C} columns (0 to {C - 1}) and the layer has H = {H} heads (0 to "
                f"{H - 1}). Which columns of Q does head {head} use?",
                right, merged(right, wrong))  # fmt: skip


def d_k_item(form: str, C: int, H: int) -> Item:
    right = number(math.sqrt(C // H))
    wrong = [(number(math.sqrt(C)), "scale_by_d_model"), (number(C // H), "scale_by_d_k"),
             (number(math.sqrt(H)), "scale_by_heads")]  # fmt: skip
    return Item(7, form, CONCEPTS[6],
                f"A layer with d_model = {C} and H = {H} heads. By what number is each head's "
                "score divided?",
                right, merged(right, wrong))  # fmt: skip


def position_item(form: str, tokens: tuple[str, ...]) -> Item:
    first, *_, last = tokens
    swapped = (last, *tokens[1:-1], first)
    right = f"the row '{first}' had, now in the last row"
    wrong = [
        (f"the row '{first}' had, still in row 0", "order_invariant"),
        ("a row no order gave before", "order_aware"),
        ("the average of every row", "order_blurs"),
    ]
    return Item(8, form, CONCEPTS[7],
                f"Self-attention with no position information and no mask reads "
                f"'{' '.join(tokens)}', then '{' '.join(swapped)}' (first and last swapped). "
                f"What is the output row of '{first}' the second time?",
                right, merged(right, wrong))  # fmt: skip


def cache_item(form: str, tokens: int, H: int, d_k: int) -> Item:
    right = number(2 * tokens * H * d_k)
    wrong = [(number(3 * tokens * H * d_k), "cache_queries"),
             (number(tokens * tokens * H), "cache_weights"),  # every query row, T × T a head
             (number(tokens * (tokens + 1) // 2 * H), "cache_causal_weights"),  # rows 1 .. T
             (number(tokens * H * d_k), "cache_keys_only")]  # fmt: skip
    return Item(9, form, CONCEPTS[8],
                f"A layer with H = {H} heads of size d_k = {d_k} has read {tokens} tokens. How "
                "many numbers does its KV cache hold?",
                right, merged(right, wrong))  # fmt: skip


def vector_text(v: Sequence[float]) -> str:
    return "(" + ", ".join(number(x) for x in v) + ")"


def output_item(form: str, weights: tuple[float, float], keys, values) -> Item:
    def mix(rows, w) -> list[float]:
        return [sum(wi * r[c] for wi, r in zip(w, rows, strict=True)) for c in range(len(rows[0]))]

    right = vector_text(mix(values, weights))
    wrong = [
        (vector_text(mix(keys, weights)), "mix_with_keys"),
        (vector_text(mix(values, (1, 1))), "sum_values"),
        (vector_text(mix(values, (0.5, 0.5))), "average_values"),
    ]
    return Item(10, form, CONCEPTS[9],
                f"A query's weights over two keys are {vector_text(weights)}. The keys are "
                f"{vector_text(keys[0])} and {vector_text(keys[1])}; the values "
                f"{vector_text(values[0])} and {vector_text(values[1])}. What is its output?",
                right, merged(right, wrong))  # fmt: skip


LN2, LN3, LN4 = math.log(2), math.log(3), math.log(4)
FORMS: dict[str, tuple[Item, ...]] = {
    "A": (
        score_item("A", (1, 2), (3, -1)),
        scale_item("A", 16),
        axis_item("A", ((LN4, 0.0), (LN2, 0.0)), 1, 0),
        causal_item("A", 4, 2),
        mask_item("A", (0.0, LN2, LN3), 1, 0),
        heads_item("A", 12, 3, 1),
        d_k_item("A", 64, 4),
        position_item("A", ("the", "cat", "sat")),
        cache_item("A", 10, 4, 16),
        output_item("A", (0.25, 0.75), ((1, 1), (2, 0)), ((4, 0), (0, 8))),
    ),
    "B": (
        score_item("B", (2, 2), (1, -3)),
        scale_item("B", 64),
        axis_item("B", ((0.0, LN3), (0.0, LN4)), 0, 1),
        causal_item("B", 5, 1),
        mask_item("B", (LN3, 0.0, LN4), 1, 1),
        heads_item("B", 8, 4, 2),
        d_k_item("B", 36, 4),
        position_item("B", ("a", "dog", "ran", "home")),
        cache_item("B", 6, 2, 8),
        output_item("B", (0.75, 0.25), ((0, 2), (1, 1)), ((4, 8), (0, 4))),
    ),
}
WHEN_FORM = {"before": "A", "after": "B"}


# --- the figures --------------------------------------------------------------------------


@dataclass(frozen=True)
class Gain:
    """What a class's before and after give (None where a figure is undefined, with why)."""

    students: int  # who took both
    pre: float  # mean share right before, %
    post: float  # mean share right after, %
    g: float | None  # Hake's class gain on the means; None when pre = 100
    c: float | None  # mean normalized change over the students it is defined for
    c_left_out: int  # students at 0 or at 100 both times
    d: float | None  # Cohen's d_z for paired scores; None with fewer than 2 or no spread
    d_interval: tuple[float, float] | None  # 95 %
    d_pooled: float | None  # Cohen's d on the pooled spread of the before and after scores
    why: str = ""  # why a figure is undefined


def normalized_change(pre: float, post: float) -> float | None:
    """Marx & Cummings' c for one student's percentages; None when pre = post = 0 or 100."""
    if pre == post:
        return None if pre in (0, 100) else 0.0
    if post > pre:
        return (post - pre) / (100 - pre)
    return (post - pre) / pre


def gain(pairs: Sequence[tuple[float, float]]) -> Gain:
    """The class's figures from each student's (before %, after %)."""
    n = len(pairs)
    if n == 0:
        return Gain(0, math.nan, math.nan, None, None, 0, None, None, None, "no student took both")
    pre = statistics.fmean(p for p, _ in pairs)
    post = statistics.fmean(q for _, q in pairs)
    why = []
    g = None if pre == 100 else (post - pre) / (100 - pre)
    if g is None:
        why.append("<g> is undefined: the class was right on everything before")
    changes = [normalized_change(p, q) for p, q in pairs]
    defined = [c for c in changes if c is not None]
    c = statistics.fmean(defined) if defined else None
    diffs = [q - p for p, q in pairs]
    d = interval = pooled = None
    if n >= 2:
        spread = math.sqrt((statistics.stdev(p for p, _ in pairs) ** 2
                            + statistics.stdev(q for _, q in pairs) ** 2) / 2)  # fmt: skip
        pooled = (post - pre) / spread if spread > 0 else None
    if n >= 2 and statistics.stdev(diffs) > 0:
        d = statistics.fmean(diffs) / statistics.stdev(diffs)
        se = math.sqrt(1 / n + d * d / (2 * n))  # the paired d's standard error (large n)
        interval = (d - 1.96 * se, d + 1.96 * se)
    elif n < 2:
        why.append("d needs two students or more")
    else:
        why.append("d is undefined: every student changed by the same amount")
    return Gain(
        n, pre, post, g, c, len(changes) - len(defined), d, interval, pooled, "; ".join(why)
    )


def point_biserial(item: Sequence[bool], rest: Sequence[float]) -> float | None:
    """The correlation of an item (right or wrong) with the rest of the score; None where
    either has no spread."""
    n = len(item)
    if n < 2 or len(set(item)) < 2 or len(set(rest)) < 2:
        return None
    right = [r for i, r in zip(item, rest, strict=True) if i]
    wrong = [r for i, r in zip(item, rest, strict=True) if not i]
    p = len(right) / n
    sd = statistics.pstdev(rest)
    return (statistics.fmean(right) - statistics.fmean(wrong)) / sd * math.sqrt(p * (1 - p))


def score(form: str, answers: Mapping[int, str]) -> float:
    """The share right, %, of one student's answers (item number -> choice) to a form."""
    items = FORMS[form]
    return 100 * sum(answers.get(item.number) == item.right for item in items) / len(items)
