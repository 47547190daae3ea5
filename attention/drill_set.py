"""Lesson 8's exercise sets: six drills made from a trace's own numbers (which key wins, one
scaled score, one weight, one output entry, a shape after a reshape, the keys a mask blocks),
different for every seed. The drill itself, its grading and its working are attention.drills;
the numbers a classic mistake gives for a score drill, attention.diagnosis.

Pure Python and PyTorch (no Streamlit): `make_drills(trace, labels, causal=..., seed=...)`;
the lesson's check-yourself questions beyond the set, `drills_questions`.
"""

from __future__ import annotations

import math
import random
from functools import partial

from attention.diagnosis import scale_mistakes
from attention.drills import (
    SHAPE_EXAMPLE,
    Drill,
    Given,
    exact_note,
    f4,
    factor,
    shown,
)
from attention.masks import build_mask
from attention.questions import fresh_weight
from attention.trace import AttentionTrace

SEED_STRIDE = 100_003  # exercise set n of a lesson at sidebar seed s draws seed s x this + n


def make_drills(
    trace: AttentionTrace, labels: list[str], *, causal: bool, seed: int
) -> tuple[Drill, ...]:
    """Six drills on an unbatched trace (H, T, .) whose tokens are `labels`; `seed` picks the
    head, the query, the key, the reshape and the padding, so every seed asks something new."""
    if trace.weights.ndim != 3:
        raise ValueError(
            f"drills need an unbatched trace, got weights {tuple(trace.weights.shape)}"
        )
    if len(labels) != trace.weights.shape[-1]:
        raise ValueError(f"{len(labels)} labels for {trace.weights.shape[-1]} tokens")
    rng = random.Random(seed)
    allowed = trace.allowed.expand(trace.weights.shape)  # (H, T, T)
    argmax_row, score_row, weight_row = pick_rows(allowed, rng)

    def key(row: tuple[int, int]) -> int:
        """One of the row's allowed keys (any key when the row has none)."""
        head, i = row
        keys = [j for j in range(allowed.shape[-1]) if bool(allowed[head, i, j])]
        return rng.choice(keys or list(range(allowed.shape[-1])))

    tokens = tuple(labels)
    return (
        argmax_drill(trace, tokens, *argmax_row),
        score_drill(trace, tokens, *score_row, key(score_row)),
        weight_drill(trace, tokens, *weight_row, key(weight_row)),
        output_drill(trace, tokens, *score_row, rng.randrange(trace.d_head)),
        shape_drill(trace, rng),
        mask_drill(tokens, causal, rng),
    )


def pick_rows(allowed, rng: random.Random) -> tuple[tuple[int, int], ...]:
    """(head, query) rows for the argmax, score and weight drills; the output drill reuses the
    score's row. Drills 1 and 3 show rows of s′ and drill 4 a row of a, so the score's row
    (its answer is an s′) is neither drill 1's nor drill 3's, and the weight's row (its answer
    is an a) is not drill 4's; drill 1's row (its answer is that row's best key) is shown by no
    other drill when there are three rows to choose from. Rows of one head come first, and rows
    with two allowed keys or more (with one key the weight is 1 and the output that key's v)."""
    H, T = allowed.shape[0], allowed.shape[-1]
    head = rng.randrange(H)
    own = [(head, i) for i in rng.sample(range(T), T)]
    others = [(h, i) for h in range(H) if h != head for i in range(T)]
    rng.shuffle(others)
    rows = own + others
    rich = {row for row in rows if int(allowed[row].sum()) >= 2}

    def take(left: list) -> tuple[int, int]:
        """The first row with two allowed keys or more, else the first; removed from left."""
        row = next((r for r in left if r in rich), left[0])
        left.remove(row)
        return row

    left = list(rows)
    weight = take(left)
    if not left:  # one head and one token: a single row to ask about
        return weight, weight, weight
    score = take(left)
    argmax = take(left) if left else weight
    return argmax, score, weight


def scaled_row(trace: AttentionTrace, head: int, i: int) -> tuple[float | None, ...]:
    """Query i's scaled scores, None where the key is blocked."""
    allowed = trace.allowed.expand(trace.weights.shape)[head, i]  # (T,)
    row = trace.scaled[head, i].tolist()
    return tuple(v if bool(a) else None for v, a in zip(row, allowed.tolist(), strict=True))


def argmax_drill(trace: AttentionTrace, labels: tuple[str, ...], head: int, i: int) -> Drill:
    """Which key does query i attend to most? The largest allowed scaled score wins."""
    row = scaled_row(trace, head, i)
    allowed = [(v, j) for j, v in enumerate(row) if v is not None]
    if not allowed:
        best, winners = None, frozenset()
    else:
        best = max(v for v, _ in allowed)
        winners = frozenset(j for v, j in allowed if v == best)
    raw = trace.scaled[head, i].tolist()
    top_raw = max(range(len(raw)), key=raw.__getitem__)
    working = [
        "softmax keeps the order of the scores, so the largest allowed scaled score gets the "
        "largest weight; blocked keys get none, however large their score.",
    ]
    if winners:
        names = ", ".join(f"{j} ({labels[j]})" for j in sorted(winners))
        working.append(f"Largest allowed score: {f4(best)} at key {names}.")
        if row[top_raw] is None:
            working.append(
                f"Key {top_raw} ({labels[top_raw]}) has a larger score, {f4(raw[top_raw])}, "
                "but it is blocked."
            )
        weight = float(trace.weights[head, i, min(winners)])
        working.append(f"Its weight: {f4(weight)}.")
    answer_text = ", ".join(f"{j} ({labels[j]})" for j in sorted(winners)) or "none"
    return Drill(
        kind="argmax",
        prompt=f"Head {head}: which key does query {i} ({labels[i]}) attend to most? "
        "Type its position or its token.",
        given=Given(
            labels,
            (
                (f"s′ row {i}", scaled_row_all(trace, head, i)),
                ("allowed", tuple(v is not None for v in row)),
            ),
        ),
        answer=winners,
        answer_text=answer_text,
        working=tuple(working),
        labels=labels,
    )


def scaled_row_all(trace: AttentionTrace, head: int, i: int) -> tuple[float | None, ...]:
    """Query i's scaled scores before the mask (every key shown; the mask row says which count)."""
    return tuple(trace.scaled[head, i].tolist())


def score_drill(trace: AttentionTrace, labels: tuple[str, ...], head: int, i: int, j: int) -> Drill:
    """One scaled score s'_ij = (q_i · k_j) × scale."""
    kv = trace.kv_head(head)  # the K/V head query head `head` reads (itself unless grouped)
    q_i, k_j = trace.q[head, i].tolist(), trace.k[kv, j].tolist()
    truth = float(trace.scaled[head, i, j])
    pairs = list(zip(q_i, k_j, strict=True))
    products = " + ".join(f"{factor(a)} × {factor(b)}" for a, b in pairs)
    dot = sum(shown(a) * shown(b) for a, b in pairs)  # from the digits the table shows
    hand = shown(dot) * shown(trace.scale)
    columns = tuple(f"d{c}" for c in range(len(q_i)))
    return Drill(
        kind="score",
        prompt=f"Head {head}: compute the scaled score of query {i} ({labels[i]}) against key "
        f"{j} ({labels[j]}), s′ = (q_{i} · k_{j}) × {f4(trace.scale)}.",
        given=Given(columns, ((f"q_{i}", tuple(q_i)), (f"k_{j}", tuple(k_j)))),
        answer=truth,
        answer_text=f4(truth),
        working=(
            f"q_{i} · k_{j} = {products} = {f4(dot)}",
            f"s′ = {factor(shown(dot))} × {f4(trace.scale)} = {f4(hand)}",
            *exact_note("s′", hand, truth),
        ),
        diagnose=partial(  # the numbers a wrong scale gives, from q and k (the drill's givens)
            scale_mistakes,
            truth / trace.scale,
            trace.d_head,
            trace.d_model,
            truth,
        ),
    )


def weight_drill(
    trace: AttentionTrace, labels: tuple[str, ...], head: int, i: int, j: int
) -> Drill:
    """One attention weight a_ij = exp(s'_ij) / sum over allowed k of exp(s'_ik)."""
    row = scaled_row(trace, head, i)
    truth = float(trace.weights[head, i, j])
    allowed = [v for v in row if v is not None]
    if row[j] is None or not allowed:
        working = (f"Key {j} is blocked for query {i}: its weight is 0.",)
    else:  # from the digits the table shows, each step printed before the next uses it
        top = shown(max(allowed))
        exps = [shown(math.exp(shown(v) - top)) for v in allowed]
        total = sum(exps)
        mine = shown(math.exp(shown(row[j]) - top))
        hand = mine / shown(total)
        terms = " + ".join(f4(e) for e in exps)
        working = (
            f"Subtract the row's largest allowed score, {f4(top)}, before exp (the ratio "
            "does not change).",
            f"exp(s′_{i},{j} − max) = exp({f4(row[j])} − {factor(top)}) = {f4(mine)}",
            f"sum over the allowed keys = {terms} = {f4(total)}",
            f"a_{i},{j} = {f4(mine)} / {f4(total)} = {f4(hand)}",
            *exact_note(f"a_{i},{j}", hand, truth),
        )
    return Drill(
        kind="weight",
        prompt=f"Head {head}: compute the attention weight of query {i} ({labels[i]}) on key "
        f"{j} ({labels[j]}), a = softmax over the allowed keys of row {i}.",
        given=Given(labels, ((f"s′ row {i}", row),)),
        answer=truth,
        answer_text=f4(truth),
        working=working,
    )


def output_drill(
    trace: AttentionTrace, labels: tuple[str, ...], head: int, i: int, column: int
) -> Drill:
    """One output entry z_i[c] = sum_j a_ij v_j[c]."""
    weights = trace.weights[head, i].tolist()  # (T,)
    values = trace.v[trace.kv_head(head), :, column].tolist()  # (T,) the K/V head it reads
    truth = float(trace.heads[head, i, column])
    pairs = [(a, v) for a, v in zip(weights, values, strict=True) if a]  # blocked keys: a = 0
    terms = " + ".join(f"{factor(a)} × {factor(v)}" for a, v in pairs)
    hand = sum(shown(a) * shown(v) for a, v in pairs)  # from the digits the table shows
    return Drill(
        kind="output",
        prompt=f"Head {head}: compute entry {column} of query {i}'s output ({labels[i]}), "
        f"z_{i}[{column}] = Σ_j a_{i},j × v_j[{column}].",
        given=Given(labels, ((f"a row {i}", tuple(weights)), (f"v[:, {column}]", tuple(values)))),
        answer=truth,
        answer_text=f4(truth),
        working=(
            f"z_{i}[{column}] = {terms or '0'} = {f4(hand)}",
            *exact_note(f"z_{i}[{column}]", hand, truth),
        ),
    )


def shape_drill(trace: AttentionTrace, rng: random.Random) -> Drill:
    """The shape of a tensor after one of the reshapes multi-head attention makes."""
    H, T, d = trace.q.shape
    C = H * d
    B = rng.randint(1, 4)
    steps = (
        ("q = q_all.view(B, T, H, C // H)", f"q_all has shape {(B, T, C)}", (B, T, H, d),
         "view splits the last axis C into H heads of d_head = C / H."),
        ("q = q_all.view(B, T, H, C // H).transpose(1, 2)", f"q_all has shape {(B, T, C)}",
         (B, H, T, d), "view splits C into (H, d_head); transpose(1, 2) swaps T and H."),
        ("scores = q @ k.transpose(-2, -1)", f"q and k have shape {(B, H, T, d)}", (B, H, T, T),
         "(…, T, d_head) @ (…, d_head, T) = (…, T, T): one score per query and key."),
        ("heads = weights @ v", f"weights has shape {(B, H, T, T)} and v {(B, H, T, d)}",
         (B, H, T, d), "(…, T, T) @ (…, T, d_head) = (…, T, d_head)."),
        ("concat = heads.transpose(1, 2).reshape(B, T, C)", f"heads has shape {(B, H, T, d)}",
         (B, T, C), "transpose(1, 2) gives (B, T, H, d_head); reshape merges H × d_head into C."),
    )  # fmt: skip
    line, given, after, why = rng.choice(steps)
    sizes = f"B = {B}, T = {T}, C = {C}, H = {H}"
    return Drill(
        kind="shape",
        prompt=f"{given} ({sizes}). What is the shape after\n    {line}\n"
        f"Give its sizes in order, like {SHAPE_EXAMPLE} for a 3 × 5 matrix.",
        given=None,
        answer=tuple(after),
        answer_text=str(tuple(after)),
        working=(why, f"{given} → {tuple(after)}"),
    )


def mask_drill(labels: tuple[str, ...], causal: bool, rng: random.Random) -> Drill:
    """Which queries a mask keeps from one key (a column of the mask, where lesson 3 asks for
    a query's row): the causal mask (as in the sidebar) and padding."""
    T = len(labels)
    n_padding = rng.randint(0, max(0, T - 1)) if T > 1 else 0
    allowed = build_mask(T, causal=causal, n_padding=n_padding)  # (T, T)
    j = rng.randrange(T)
    blocked = frozenset(i for i in range(T) if not bool(allowed[i, j]))
    parts = ["the causal mask" if causal else "no causal mask"]
    parts.append(
        f"the last {n_padding} token{'s' if n_padding != 1 else ''} as padding"
        if n_padding
        else "no padding"
    )
    why = []
    if j >= T - n_padding:
        why.append(f"Padding: key {j} is filler, so no query may see it.")
    elif causal and j > 0:
        earlier = f"0…{j - 1}" if j > 1 else "0"
        why.append(f"Causal: key {j} is in the future of queries {earlier}.")
    why.append("Blocked: " + (" ".join(str(i) for i in sorted(blocked)) or "none") + ".")
    return Drill(
        kind="mask",
        prompt=f"With {' and '.join(parts)}, which queries may NOT attend to key {j} "
        f"({labels[j]})? Type their positions (like 0 1 2), or none.",
        given=Given(labels, (("position", tuple(range(T))),)),
        answer=blocked,
        answer_text=" ".join(str(i) for i in sorted(blocked)) or "none",
        working=tuple(why),
    )


# Check yourself (lesson 8): beyond the exercise set


def drills_questions(trace: AttentionTrace, labels, seed: int) -> tuple[Drill, ...]:
    """Lesson 8: one more weight (a new query) and one more shape, beyond the exercise set."""
    rng = random.Random(seed * 7 + 5)
    return (
        fresh_weight(trace, labels, seed * 7 + 11, rng),
        shape_drill(trace, rng),
    )
