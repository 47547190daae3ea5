"""Check yourself: each lesson's questions, made from its live numbers and graded by the drills'
grader (`attention.drills.grade`), with the full working.

Pure Python and PyTorch. Every question is a `Drill` (kind "number", "whole", "yesno", "shape"
or "mask"), so every lesson's questions share one grader and one rule. A question asks about
something the lesson's page does not print: a fresh query against the page's keys, another
mask, another head count, a position past the sequence, other tile sizes; so its answer is
never on the page before the question asks it (tests/dashboard/test_course.py checks).
"""

from __future__ import annotations

import math
import random
from functools import partial

import torch
from torch import Tensor

from attention.diagnosis import scale_mistakes, softmax_mistakes
from attention.drill_set import shape_drill
from attention.drills import HINTS, Drill, Given, exact_note, f4, factor, shown
from attention.flash import tiled_attention
from attention.kv_cache import cache_bytes_per_token
from attention.masks import build_mask
from attention.positions import random_permutation, rope_angles, sinusoidal_positions
from attention.scaling import random_scores
from attention.trace import AttentionTrace

Row = tuple[float | None, ...]  # one row of scores, None where the key is blocked
SOFTMAX_STEP = "Subtract the row's largest allowed score"  # softmax_working's first line


def fresh_query(d: int, seed: int) -> Tensor:
    """A new query vector (d,) with one decimal, easy to multiply by hand; never all zero."""
    generator = torch.Generator().manual_seed(seed)
    q = torch.round(torch.randn(d, generator=generator) * 10) / 10  # (d,)
    return q if bool(q.abs().sum() > 0) else torch.ones(d) / 2


def softmax_weight(row: Row, j: int) -> float:
    """The exact softmax weight of key j over the row's allowed entries (0 when blocked)."""
    if row[j] is None:
        return 0.0
    allowed = torch.tensor([v for v in row if v is not None], dtype=torch.float64)
    return float(torch.exp(torch.tensor(row[j], dtype=torch.float64) - allowed.logsumexp(0)))


def softmax_working(row: Row, j: int, name: str) -> tuple[float, tuple[str, ...]]:
    """Hand working of one softmax weight from the digits a table shows: (hand result, lines)."""
    allowed = [v for v in row if v is not None]
    if row[j] is None or not allowed:
        return 0.0, (f"Key {j} is blocked: its weight is 0.",)
    top = shown(max(allowed))
    exps = [shown(math.exp(shown(v) - top)) for v in allowed]
    total = sum(exps)
    mine = shown(math.exp(shown(row[j]) - top))
    hand = mine / shown(total)
    return hand, (
        f"{SOFTMAX_STEP}, {f4(top)}, before exp (the ratio does not change).",
        f"exp({f4(row[j])} − {factor(top)}) = {f4(mine)}",
        f"sum over the allowed keys = {' + '.join(f4(e) for e in exps)} = {f4(total)}",
        f"{name} = {f4(mine)} / {f4(total)} = {f4(hand)}",
    )


def number(
    prompt: str, given: Given | None, truth: float, hand: float, working, name: str, hint="",
    diagnose=None,
):  # fmt: skip
    """A number question: right within the drills' tolerance of the exact value. A softmax
    weight (its working is softmax_working's) gets the weight's hint unless it has one;
    `diagnose` computes the numbers the bug hunt's mistakes give for it (attention.diagnosis)."""
    weight = any(line.startswith(SOFTMAX_STEP) for line in working)  # a softmax weight
    if not hint and weight:
        hint = HINTS["weight"]
    return Drill(
        "number", prompt, given, truth, f4(truth), (*working, *exact_note(name, hand, truth)),
        hint=hint, diagnose=diagnose, percent=weight,
    )  # fmt: skip


def whole(prompt: str, given: Given | None, answer: int, working: tuple[str, ...]) -> Drill:
    """A whole-number question: right only when exact."""
    return Drill("whole", prompt, given, int(answer), str(int(answer)), working)


def key_names(labels, count: int) -> tuple[str, ...]:
    return tuple(labels[:count]) if labels else tuple(str(j) for j in range(count))


# 1 · Step by step (and 8 · Drills): a fresh query against the page's keys and values


def fresh_score(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """s′ = (q* · k_j) × scale for a new query q* and one of head 0's keys."""
    k = trace.k[trace.kv_head(0)]  # (T, d_head)
    q = fresh_query(k.shape[-1], seed)  # (d_head,)
    j = rng.randrange(k.shape[0])
    pairs = list(zip(q.tolist(), k[j].tolist(), strict=True))
    dot = sum(shown(a) * shown(b) for a, b in pairs)
    hand = shown(dot) * shown(trace.scale)
    exact_dot = float(q.double() @ k[j].double())
    truth = exact_dot * trace.scale
    products = " + ".join(f"{factor(a)} × {factor(b)}" for a, b in pairs)
    return number(
        f"Head 0: a new query q* arrives. Compute its scaled score against key {j} "
        f"({labels[j]}), s′ = (q* · k_{j}) × {f4(trace.scale)}.",
        Given(
            tuple(f"d{c}" for c in range(len(pairs))),
            (("q*", tuple(q.tolist())), (f"k_{j}", tuple(k[j].tolist()))),
        ),
        truth,
        hand,
        (
            f"q* · k_{j} = {products} = {f4(dot)}",
            f"s′ = {factor(shown(dot))} × {f4(trace.scale)} = {f4(hand)}",
        ),
        "s′",
        diagnose=partial(scale_mistakes, exact_dot, k.shape[-1], trace.d_model, truth),
    )


def fresh_row(trace: AttentionTrace, seed: int) -> tuple[float, ...]:
    """The scaled scores (T,) of a new query against every key of head 0."""
    k = trace.k[trace.kv_head(0)]  # (T, d_head)
    q = fresh_query(k.shape[-1], seed)
    return tuple((k.double() @ q.double() * trace.scale).tolist())


def fresh_weight(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """One weight of a new query's softmax row, from its scaled scores."""
    row = fresh_row(trace, seed)
    j = rng.randrange(len(row))
    hand, working = softmax_working(row, j, f"a*_{j}")
    return number(
        f"Head 0: another new query, placed after the sequence, sees every key; its scaled "
        f"scores are below. Compute its attention weight on key {j} ({labels[j]}).",
        Given(key_names(labels, len(row)), (("s′ of q*", row),)),
        softmax_weight(row, j),
        hand,
        working,
        f"a*_{j}",
    )


def fresh_output(trace: AttentionTrace, labels, seed: int, rng: random.Random) -> Drill:
    """One entry of a new query's output, z*[c] = Σ_j a*_j v_j[c], from its weights."""
    row = torch.tensor(fresh_row(trace, seed)).softmax(-1)  # (T,)
    v = trace.v[trace.kv_head(0)]  # (T, d_head)
    c = rng.randrange(v.shape[-1])
    pairs = list(zip(row.tolist(), v[:, c].tolist(), strict=True))
    hand = sum(shown(a) * shown(b) for a, b in pairs)
    truth = float(row.double() @ v[:, c].double())
    return number(
        f"Head 0: a third new query has the attention weights below. Compute entry {c} of its "
        f"output, z*[{c}] = Σ_j a*_j × v_j[{c}].",
        Given(
            key_names(labels, len(pairs)),
            (("a*", tuple(row.tolist())), (f"v[:, {c}]", tuple(v[:, c].tolist()))),
        ),
        truth,
        hand,
        (f"z*[{c}] = {' + '.join(f'{factor(a)} × {factor(b)}' for a, b in pairs)} = {f4(hand)}",),
        f"z*[{c}]",
    )


def step_by_step_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 1: a score, a weight and an output entry of new queries against the page's K, V."""
    rng = random.Random(seed)
    return (
        fresh_score(trace, labels, seed * 3 + 1, rng),
        fresh_weight(trace, labels, seed * 3 + 2, rng),
        fresh_output(trace, labels, seed * 3 + 3, rng),
    )


# 2 · Multi-head: the split for another head count


def multi_head_questions(trace: AttentionTrace, seed: int) -> tuple[Drill, ...]:
    """Lesson 2: d_k = C / H', which head owns a column, and q's shape after the split, for a
    head count H' the page is not using."""
    rng = random.Random(seed)
    n_heads, seq_len, d_head = trace.q.shape  # (H, T, d_head)
    d_model = n_heads * d_head
    others = [h for h in range(1, d_model + 1) if d_model % h == 0 and h != n_heads]
    heads = rng.choice(others or [n_heads])
    d_k = d_model // heads
    column = rng.randrange(d_model)
    batch = rng.randint(2, 4)
    owner = column // d_k
    return (
        whole(
            f"This layer has C = {d_model}. With H = {heads} heads instead, how many columns "
            "(d_k) does each head get?",
            None,
            d_k,
            (f"d_k = C / H = {d_model} / {heads} = {d_k}.",),
        ),
        whole(
            f"Still C = {d_model} and H = {heads}: which head owns column {column} of Q "
            "(heads and columns counted from 0)?",
            None,
            owner,
            (
                f"Head h owns columns h·d_k … h·d_k + d_k − 1, with d_k = {d_k}.",
                f"{column} // {d_k} = {owner}: head {owner} owns columns {owner * d_k} … "
                f"{owner * d_k + d_k - 1}.",
            ),
        ),
        Drill(
            "shape",
            f"q_all has shape ({batch}, {seq_len}, {d_model}), H = {heads}. What is the shape "
            f"after q_all.view(B, T, H, C // H).transpose(1, 2)? Give its sizes in order.",
            None,
            (batch, heads, seq_len, d_k),
            str((batch, heads, seq_len, d_k)),
            (
                f"view splits C = {d_model} into (H, d_k) = ({heads}, {d_k}); transpose(1, 2) "
                "swaps T and H.",
            ),
        ),
    )


# 3 · Masking: another padding


def padding_choice(T: int, causal: bool, n_padding: int, rng: random.Random):
    """(padding, query) whose mask row differs from the page's, with two allowed keys or more
    when possible."""
    page = build_mask(T, causal=causal, n_padding=n_padding)
    best = []
    for pad in range(T):
        if pad == n_padding:
            continue
        mask = build_mask(T, causal=causal, n_padding=pad)
        for i in range(T):
            if not bool((mask[i] == page[i]).all()):
                best.append((int(mask[i].sum()) >= 2, pad, i, mask))
    if not best:
        return n_padding, T - 1, page
    rich = [b for b in best if b[0]] or best
    _, pad, i, mask = rng.choice(rich)
    return pad, i, mask


def masking_questions(
    trace: AttentionTrace, labels, causal: bool, n_padding: int, seed: int
) -> tuple[Drill, ...]:
    """Lesson 3: the keys another padding blocks for a query, and a weight under that mask."""
    rng = random.Random(seed)
    T = len(labels)
    pad, i, mask = padding_choice(T, causal, n_padding, rng)
    blocked = frozenset(j for j in range(T) if not bool(mask[i, j]))
    what = ("the causal mask and " if causal else "no causal mask and ") + (
        f"the last {pad} token{'s' if pad != 1 else ''} as padding" if pad else "no padding"
    )
    row = tuple(
        v if bool(a) else None
        for v, a in zip(trace.scaled[0, i].tolist(), mask[i].tolist(), strict=True)
    )
    keys = [j for j in range(T) if row[j] is not None] or [0]
    j = rng.choice(keys)
    hand, working = softmax_working(row, j, f"a_{i},{j}")
    text = " ".join(str(b) for b in sorted(blocked)) or "none"
    return (
        Drill(
            "mask",
            f"With {what}, which keys may query {i} ({labels[i]}) NOT attend to? Type their "
            "positions (like 3 4 5), or none.",
            Given(tuple(labels), (("position", tuple(range(T))),)),
            blocked,
            text,
            (
                f"Causal: query {i} sees keys 0 … {i} only." if causal else "No causal mask.",
                f"Padding: keys {T - pad} … {T - 1} are filler." if pad else "No padding.",
                f"Blocked: {text}.",
            ),
        ),
        number(
            f"Head 0, with {what}: query {i}'s scaled scores are below (blocked keys empty). "
            f"Compute its weight on key {j} ({labels[j]}).",  # stands alone: class mode asks it so
            Given(tuple(labels), ((f"s′ row {i}", row),)),
            softmax_weight(row, j),
            hand,
            working,
            f"a_{i},{j}",
        ),
    )


# 4 · Why √d_k


def why_sqrt_dk_questions(seed: int, shown_d_ks: tuple[int, ...]) -> tuple[Drill, ...]:
    """Lesson 4: the spread of q·k at a d_k the page does not show, one live pair scaled, and
    how far an unscaled softmax collapses."""
    rng = random.Random(seed)
    d_k = rng.choice([d for d in (8, 32, 128, 2048) if d not in shown_d_ks] or [8])
    generator = torch.Generator().manual_seed(seed + 17)
    q, k = torch.randn(d_k, generator=generator), torch.randn(d_k, generator=generator)
    raw = float(q.double() @ k.double())
    root = math.sqrt(d_k)
    scores = random_scores(4, d_k, seed + 29)  # (4,) raw q·k_j, variance d_k
    row = tuple(scores.tolist())
    top = max(range(4), key=row.__getitem__)
    hand, working = softmax_working(row, top, "largest weight")
    return (
        number(
            f"q and k have d_k = {d_k} independent entries, each N(0, 1). What is the standard "
            "deviation of q · k?",
            None,
            root,
            shown(root),
            (f"Var(q · k) = d_k = {d_k}, so its standard deviation is √{d_k} = {f4(root)}.",),
            "the standard deviation",
        ),
        number(
            f"One such pair, drawn live, has q · k = {f4(raw)} at d_k = {d_k}. What is its "
            "scaled score q · k / √d_k?",
            None,
            raw / root,
            shown(raw) / shown(root),
            (f"{f4(raw)} / √{d_k} = {f4(raw)} / {f4(root)} = {f4(shown(raw) / shown(root))}",),
            "the scaled score",
        ),
        number(
            f"One query against 4 keys at d_k = {d_k}: its raw scores q · k_j are below. "
            "Without the 1/√d_k, what is the largest softmax weight?",
            Given(("key 0", "key 1", "key 2", "key 3"), (("q · k_j", row),)),
            softmax_weight(row, top),
            hand,
            (
                *working,
                f"Scaled by 1/√{d_k} the same row's largest weight would be "
                f"{f4(softmax_weight(tuple(v / root for v in row), top))}.",
            ),
            "the largest weight",
        ),
    )


# 5 · Worked example: the other mask


def worked_example_by_hand(trace: AttentionTrace, labels) -> tuple[Drill, ...]:
    """Lesson 5's By hand, asked after the scores and before the stages that hold the answers:
    the scaled score of query 2 on key 1 from q and k, the weight of query 1 on key 0 from its
    scaled scores under the page's mask, and output entry 0 of query 2 from its weights and V.
    Positions count from 0, as everywhere; the tutorial's names x1, x2, x3 are the labels."""
    T = len(labels)
    if T < 3:
        raise ValueError(f"lesson 5's questions need its three tokens, got {T}")
    i, j = 2, 1
    q, k = trace.q[0, i], trace.k[trace.kv_head(0), j]  # (d_k,), (d_k,)
    pairs = list(zip(q.tolist(), k.tolist(), strict=True))
    dot = sum(shown(a) * shown(b) for a, b in pairs)
    products = " + ".join(f"{factor(a)} × {factor(b)}" for a, b in pairs)
    scaled = number(
        f"Compute the scaled score of query {i} ({labels[i]}) against key {j} ({labels[j]}), "
        f"s′_{i},{j} = (q_{i} · k_{j}) × 1/√d_k = (q_{i} · k_{j}) × {f4(trace.scale)}.",
        Given(
            tuple(f"d{c}" for c in range(len(pairs))),
            ((f"q_{i}", tuple(q.tolist())), (f"k_{j}", tuple(k.tolist()))),
        ),
        float(trace.scaled[0, i, j]),
        shown(dot) * shown(trace.scale),
        (
            f"q_{i} · k_{j} = {products} = {f4(dot)}",
            f"s′_{i},{j} = {factor(dot)} × {factor(trace.scale)} = "
            f"{f4(shown(dot) * shown(trace.scale))}",
        ),
        f"s′_{i},{j}",
        hint=HINTS["score"],
    )
    allowed = trace.allowed.expand(trace.weights.shape)[0]  # (T, T)

    def row_of(r: int) -> Row:
        return tuple(
            v if bool(a) else None
            for v, a in zip(trace.scaled[0, r].tolist(), allowed[r].tolist(), strict=True)
        )

    r, key = 1, 0
    hand, working = softmax_working(row_of(r), key, f"a_{r},{key}")
    weight = number(
        f"Compute the weight of query {r} ({labels[r]}) on key {key} ({labels[key]}), "
        f"a_{r},{key}, the softmax of query {r}'s scaled scores (a blocked key is left out).",
        Given(tuple(labels), ((f"s′ row {r}", row_of(r)),)),
        float(trace.weights[0, r, key]),
        hand,
        working,
        f"a_{r},{key}",
    )
    c = 0
    a, v = trace.weights[0, i].tolist(), trace.v[trace.kv_head(0), :, c].tolist()
    hand_out = sum(shown(w) * shown(x) for w, x in zip(a, v, strict=True))
    terms = " + ".join(f"{factor(w)} × {factor(x)}" for w, x in zip(a, v, strict=True))
    output = number(
        f"Compute entry {c} of query {i}'s output, z_{i}[{c}] = Σ_j a_{i},j × v_j[{c}].",
        Given(tuple(labels), ((f"a row {i}", tuple(a)), (f"v[:, {c}]", tuple(v)))),
        float(trace.heads[0, i, c]),
        hand_out,
        (f"z_{i}[{c}] = {terms} = {f4(hand_out)}",),
        f"z_{i}[{c}]",
        hint=HINTS["output"],
    )
    return scaled, weight, output


def worked_example_questions(trace: AttentionTrace, labels, causal: bool) -> tuple[Drill, ...]:
    """Lesson 5: a weight and an output entry under the mask the page does not show."""
    T = len(labels)
    other = build_mask(T, causal=not causal)  # (T, T)
    rows = [
        i
        for i in range(T)
        if int(other[i].sum()) >= 2
        and bool((other[i] != trace.allowed.expand(trace.weights.shape)[0, i]).any())
    ] or [T - 1]
    i = rows[len(rows) // 2]
    name = "with the causal mask" if not causal else "without the mask"

    def row_of(i: int) -> Row:
        return tuple(
            v if bool(a) else None
            for v, a in zip(trace.scaled[0, i].tolist(), other[i].tolist(), strict=True)
        )

    row = row_of(i)
    j = 0
    blocked = [k for k in range(T) if not bool(other[i, k])]
    hand, working = softmax_working(row, j, f"a_{i},{j}")
    weights = [softmax_weight(row, key) for key in range(T)]
    c = 0
    values = trace.v[0, :, c].tolist()
    out = sum(w * v for w, v in zip(weights, values, strict=True))
    hand_weights = [softmax_working(row, key, "")[0] for key in range(T)]
    hand_out = sum(shown(w) * shown(v) for w, v in zip(hand_weights, values, strict=True))
    terms = " + ".join(
        f"{factor(w)} × {factor(v)}" for w, v in zip(hand_weights, values, strict=True)
    )
    return (
        number(
            f"Switch the causal mask {'off' if causal else 'on'}: what is the weight of query "
            f"{i} ({labels[i]}) on key {j} ({labels[j]}) {name}? Below: its scaled scores s′ "
            f"(row {i}, query {i} against every key; column {j}, every query against key {j}), "
            "before any mask. "
            + (
                f"{name.capitalize()}, query {i} may not attend to "
                f"key{'s' if len(blocked) > 1 else ''} {', '.join(str(k) for k in blocked)}."
                if blocked
                else f"{name.capitalize()}, query {i} may attend to every key."
            ),
            Given(
                tuple(labels),
                (
                    (f"s′ row {i}", tuple(trace.scaled[0, i].tolist())),
                    (f"s′ column {j}", tuple(trace.scaled[0, :, j].tolist())),
                ),
            ),
            softmax_weight(row, j),
            hand,
            working,
            f"a_{i},{j}",
            diagnose=partial(
                softmax_mistakes, trace.scaled[0], other, (i, j), softmax_weight(row, j)
            ),
        ),
        number(
            f"Still {name}: compute entry {c} of query {i}'s output, z_{i}[{c}] = Σ_j a_{i},j "
            f"× v_j[{c}], from its scaled scores and V.",
            Given(tuple(labels), ((f"s′ row {i} {name}", row), (f"v[:, {c}]", tuple(values)))),
            out,
            hand_out,
            (
                f"The weights {name}: " + ", ".join(f4(w) for w in hand_weights) + ".",
                f"z_{i}[{c}] = {terms} = {f4(hand_out)}",
            ),
            f"z_{i}[{c}]",
        ),
    )


# 6 · What heads learn


def what_heads_learn_questions(weights: Tensor, seed: int) -> tuple[Drill, ...]:
    """Lesson 6: where an induction head looks in a repeated sequence, and a head's
    previous-token score from its weights (H, T, T) on the example."""
    rng = random.Random(seed)
    length = rng.randint(3, 5)
    segment = rng.sample(range(10), length)
    tokens = segment + segment
    m = rng.randrange(length)
    i = length + m
    H, T = weights.shape[0], weights.shape[-1]
    if T < 2:
        raise ValueError(f"a previous-token score needs two tokens or more, got {T}")
    head = rng.randrange(H)
    n = min(T - 1, 8)
    diagonal = tuple(float(weights[head, r, r - 1]) for r in range(1, n + 1))
    mean = sum(diagonal) / n
    hand = sum(shown(w) for w in diagonal) / n
    return (
        whole(
            f"The sequence below repeats a segment. Query {i} holds token {tokens[i]}: which "
            "key does an induction head attend to most? Type its position.",
            Given(tuple(str(p) for p in range(len(tokens))), (("token", tuple(tokens)),)),
            m + 1,
            (
                f"Token {tokens[i]} appeared before at position {m}; an induction head attends to "
                f"the token that followed it, position {m + 1} (token {tokens[m + 1]}), to predict "
                "it comes next again.",
            ),
        ),
        number(
            f"Layer 0, head {head} on the example: its weight on the previous token for query "
            f"rows 1 … {n} is below. What is its previous-token score on these rows (the mean)?",
            Given(tuple(f"row {r}" for r in range(1, n + 1)), (("a[i, i−1]", diagonal),)),
            mean,
            hand,
            (f"({' + '.join(f4(w) for w in diagonal)}) / {n} = {f4(hand)}",),
            "the score",
        ),
    )


# 7 · Bug hunt


def bug_hunt_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 7: a weight through two bugs: no 1/√d_k, and an inverted mask (a wrong scale
    when there is no mask to invert)."""
    rng = random.Random(seed)
    allowed = trace.allowed.expand(trace.weights.shape)  # (H, T, T)
    H, T = allowed.shape[0], allowed.shape[-1]
    head = rng.randrange(H)
    rows = [i for i in range(T) if int(allowed[head, i].sum()) >= 2] or [T - 1]
    i = rng.choice(rows)
    raw = tuple(
        v if bool(a) else None
        for v, a in zip(trace.scores[head, i].tolist(), allowed[head, i].tolist(), strict=True)
    )
    j = rng.choice([key for key in range(T) if raw[key] is not None] or [0])
    hand, working = softmax_working(raw, j, f"a_{i},{j}")
    inverted = ~allowed[head]  # (T, T): the bug lets each query see exactly what it should not
    rows2 = [r for r in range(T) if int(inverted[r].sum()) >= 2]
    if rows2:  # the inverted mask: the bug's own row, over the keys the mask should block
        q = rng.choice(rows2)
        row2 = tuple(
            v if bool(a) else None
            for v, a in zip(trace.scaled[head, q].tolist(), inverted[q].tolist(), strict=True)
        )
        bug = "The bug inverts the mask (True read as blocked)"
    else:  # no mask to invert: the scale 1/√C of the whole layer instead of 1/√d_head
        q = rng.choice(rows)
        C = trace.q.shape[0] * trace.q.shape[-1]
        raw_q = (  # query q's own raw row (it was query i's, under query q's name)
            v if bool(a) else None
            for v, a in zip(trace.scores[head, q].tolist(), allowed[head, q].tolist(), strict=True)
        )
        row2 = tuple(None if v is None else v / math.sqrt(C) for v in raw_q)
        bug = (
            f"The bug scales by 1/√C = 1/√{C} (the whole layer's width, not a head's)"
            if trace.q.shape[0] > 1  # one head: C = d_k, the right scale (no bug at all here)
            else f"The bug would scale by 1/√C = 1/√{C}, but with one head C = d_k: the scale "
            "is right here and the layer computes the correct weight"
        )
    col = rng.choice([key for key in range(T) if row2[key] is not None])
    hand2, working2 = softmax_working(row2, col, f"a_{q},{col}")
    return (
        number(
            (
                "The bug forgets the 1/√d_k. "
                if trace.q.shape[-1] > 1  # d_k = 1: nothing to forget, the weight is the right one
                else "The bug forgets the 1/√d_k; here d_k = 1, so it changes nothing. "
            )
            + f"Head {head}: query {i}'s raw scores q · k (not "
            f"scaled; blocked keys empty) are below. What weight does the buggy layer give "
            f"key {j} ({labels[j]})?",
            Given(tuple(labels), ((f"score row {i}", raw),)),
            softmax_weight(raw, j),
            hand,
            working,
            f"a_{i},{j}",
        ),
        number(
            f"{bug}. Head {head}: query {q}'s scaled scores as the buggy layer uses them are "
            f"below (keys it cannot see empty). What weight does it give key {col} "
            f"({labels[col]})?",
            Given(tuple(labels), ((f"buggy s′ row {q}", row2),)),
            softmax_weight(row2, col),
            hand2,
            working2,
            f"a_{q},{col}",
        ),
    )


# 8 · Drills


def drills_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 8: one more weight (a new query) and one more shape, beyond the exercise set."""
    rng = random.Random(seed * 7 + 5)
    return (
        fresh_weight(trace, labels, seed * 7 + 11, rng),
        shape_drill(trace, rng),
    )


# 9 · Position


def position_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 9: where a shuffled token's output goes, a sinusoidal entry past the sequence,
    and one RoPE rotation at a position past it."""
    rng = random.Random(seed)
    T = len(labels)
    C = trace.x.shape[-1]
    page = random_permutation(T, seed)
    perm = random_permutation(T, seed + 101)
    if T > 2 and bool((perm == page).all()):
        perm = perm.roll(1)
    i = rng.randrange(T)
    r = int((perm == i).nonzero()[0, 0])
    pos = T + rng.randint(1, 20)
    col = rng.randrange(C)
    pe = float(sinusoidal_positions(pos + 1, C)[pos, col])
    pair = col // 2
    angle = pos / 10000 ** (2 * pair / C)
    fn = "sin" if col % 2 == 0 else "cos"
    hand = math.sin(shown(angle)) if fn == "sin" else math.cos(shown(angle))
    questions = [
        whole(
            f"No mask. X is shuffled: row r of PX is token perm[r] of X (perm below). Output "
            f"row {i} of Attn(X) ({labels[i]}) turns up as which row of Attn(PX)?",
            Given(tuple(f"r={p}" for p in range(T)), (("perm[r]", tuple(perm.tolist())),)),
            r,
            (
                f"perm[{r}] = {i}: row {r} of PX is token {i}, and with no mask attention moves "
                f"outputs with their tokens, so Attn(PX)[{r}] = Attn(X)[{i}].",
            ),
        ),
        number(
            f"C = {C}. What is the sinusoidal position entry PE[{pos}, {col}], for a token at "
            f"position {pos} (past this sequence)? Angles are in radians.",
            None,
            pe,
            hand,
            (
                f"Column {col} is pair i = {pair}: angle = {pos} / 10000^({2 * pair}/{C}) = "
                f"{f4(angle)}",
                f"PE[{pos}, {col}] = {fn}({f4(angle)}) = {f4(hand)}",
            ),
            f"PE[{pos}, {col}]",
        ),
    ]
    d = trace.q.shape[-1]
    if d % 2 == 0:
        j = rng.randrange(T)
        a, b = trace.q[0, j, 0].item(), trace.q[0, j, 1].item()
        theta = float(rope_angles(torch.tensor([pos]), d)[0, 0])  # pair 0 turns by pos radians
        truth = a * math.cos(theta) - b * math.sin(theta)
        c, s = shown(math.cos(theta)), shown(math.sin(theta))
        hand = shown(a) * c - shown(b) * s
        questions.append(
            number(
                f"RoPE, head 0: query {j}'s first pair is (q₀, q₁) = ({f4(a)}, {f4(b)}). Moved "
                f"to position {pos}, pair 0 turns by {pos} radians. What is the rotated q₀?",
                None,
                truth,
                hand,
                (
                    f"q₀′ = q₀ cos θ − q₁ sin θ with θ = {pos}: cos θ = {f4(c)}, sin θ = {f4(s)}",
                    f"q₀′ = {factor(a)} × {factor(c)} − {factor(b)} × {factor(s)} = {f4(hand)}",
                ),
                "q₀′",
            )
        )
    return tuple(questions)


# 10 · KV cache


def kv_cache_questions(trace: AttentionTrace, seed: int) -> tuple[Drill, ...]:
    """Lesson 10: the K and V cache's bytes after t tokens (more than the page decodes), plain
    and grouped-query."""
    rng = random.Random(seed)
    n_heads, seq_len, d_head = trace.q.shape  # (H, T, d_head)
    t = seq_len + rng.randint(1, 60)
    plain = t * cache_bytes_per_token(n_heads, d_head)
    groups = [g for g in range(1, n_heads) if n_heads % g == 0] or [1]
    kv = rng.choice(groups)
    t2 = seq_len + rng.randint(61, 120)
    grouped = t2 * cache_bytes_per_token(kv, d_head)
    return (
        whole(
            f"This layer has H = {n_heads} heads of d_k = {d_head}, in float32 (4 bytes). "
            f"After {t} tokens, how many bytes do its K and V caches hold together?",
            None,
            plain,
            (
                f"Each token adds a key and a value per head: 2 × {n_heads} × {d_head} × 4 = "
                f"{cache_bytes_per_token(n_heads, d_head)} bytes.",
                f"{t} tokens × {cache_bytes_per_token(n_heads, d_head)} = {plain} bytes.",
            ),
        ),
        whole(
            f"The same layer with grouped-query attention, {kv} K/V head"
            f"{'s' if kv != 1 else ''} shared by the {n_heads} query heads: how many bytes after "
            f"{t2} tokens?",
            None,
            grouped,
            (
                f"Only the K/V heads are cached: 2 × {kv} × {d_head} × 4 = "
                f"{cache_bytes_per_token(kv, d_head)} bytes a token.",
                f"{t2} × {cache_bytes_per_token(kv, d_head)} = {grouped} bytes.",
            ),
        ),
    )


# 11 · Attention at scale


@torch.no_grad()  # numbers to ask about, nothing to train
def at_scale_questions(
    trace: AttentionTrace, labels, causal: bool, page_blocks: tuple[int, int], seed: int
) -> tuple[Drill, ...]:
    """Lesson 11: how many tiles FlashAttention computes, and one row's running max m and
    normaliser ℓ after its second key tile, for tile sizes the page is not showing."""
    rng = random.Random(seed)
    T = len(labels)
    sizes = [b for b in range(1, T + 1) if b not in page_blocks] or [1]
    block_q, block_k = rng.choice(sizes), rng.choice(sizes)
    kv = trace.kv_head(0)
    q, k, v = trace.q[0], trace.k[kv], trace.v[kv]  # (T, d_head)
    walk = tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    computed = sum(not s.skipped for s in walk.steps)
    n_q, n_k = math.ceil(T / block_q), math.ceil(T / block_k)
    skipped = n_q * n_k - computed
    rows = [i for i in range(T) if not causal or i >= block_k] or [T - 1]
    i = rng.choice(rows)
    tile = min(1, n_k - 1)
    per_row = tiled_attention(q, k, v, block_q=1, block_k=block_k, causal=causal)
    step = per_row.steps[i * n_k + tile]
    allowed = trace.allowed.expand(trace.weights.shape)[0, i]  # (T,)
    row = tuple(
        s if bool(a) else None
        for s, a in zip(trace.scaled[0, i].tolist(), allowed.tolist(), strict=True)
    )
    seen = [s for s in row[: (tile + 1) * block_k] if s is not None]
    first = [s for s in row[:block_k] if s is not None]
    m1, m2 = shown(max(first)), shown(max(seen))
    l1 = sum(shown(math.exp(shown(s) - m1)) for s in first)
    new = [s for s in row[block_k : (tile + 1) * block_k] if s is not None]
    l2 = shown(shown(l1) * shown(math.exp(m1 - m2))) + sum(
        shown(math.exp(shown(s) - m2)) for s in new
    )
    mask = "the causal mask" if causal else "no mask"
    return (
        whole(
            f"T = {T}, tiles of B_r = {block_q} queries × B_c = {block_k} keys, {mask}. How "
            "many tiles does FlashAttention compute (a tile wholly in the future is skipped)?",
            None,
            computed,
            (
                f"⌈{T}/{block_q}⌉ × ⌈{T}/{block_k}⌉ = {n_q} × {n_k} = {n_q * n_k} tiles, "
                f"{skipped} of them wholly in the future and skipped: {computed} computed.",
            ),
        ),
        number(
            f"Query {i}'s scaled scores (head 0, blocked keys empty) are below. Walking its keys "
            f"in tiles of B_c = {block_k}, what is its running max m after key tile {tile} "
            f"(tiles counted from 0, as positions are: tiles 0 … {tile} hold keys 0 … "
            f"{min(T, (tile + 1) * block_k) - 1})?",
            Given(tuple(labels), ((f"s′ row {i}", row),)),
            float(step.m_after[0]),
            m2,
            (
                f"Tiles 0 … {tile} hold keys 0 … {min(T, (tile + 1) * block_k) - 1}; the "
                f"largest allowed score among them is {f4(m2)}.",
            ),
            "m",
        ),
        number(
            f"The same walk: what is query {i}'s running normaliser ℓ after key tile {tile}, "
            "ℓ = Σ exp(s′ − m) over the keys seen so far?",
            Given(tuple(labels), ((f"s′ row {i}", row),)),
            float(step.l_after[0]),
            l2,
            (
                f"After tile 0: m = {f4(m1)}, ℓ = {f4(l1)}.",
                *(
                    (
                        f"Tile {tile}: m becomes {f4(m2)}; ℓ = {f4(l1)} × "
                        f"exp({f4(m1)} − {factor(m2)}) + Σ exp(s′ − {factor(m2)}) over its "
                        f"keys = {f4(l2)}",
                    )
                    if tile
                    else ()
                ),
            ),
            "ℓ",
        ),
    )
