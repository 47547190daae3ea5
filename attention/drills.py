"""Drills: exercises generated from a trace's own numbers, graded with the full working.

Pure Python and PyTorch (no Streamlit): `make_drills(trace, labels, causal=..., seed=...)` gives
six exercises (which key wins, one scaled score, one weight, one output entry, a shape after a
reshape, the keys a mask blocks), different for every seed; `grade(drill, typed)` says right,
wrong or why the answer cannot be read, never raising on what a student types.
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from attention.masks import build_mask
from attention.trace import AttentionTrace

TOLERANCE = 0.005  # a number is right within 0.005 of the exact value: rounded to 2 decimals or
# more it always is; cut short ("0.17" for 0.17604) it can be up to 0.01 off, and then it is wrong
RULE_EXAMPLE = 0.17604  # the value rule() grades as its example
HUGE = 1e6  # no number in these drills comes near this
KINDS = ("argmax", "score", "weight", "output", "shape", "mask")  # make_drills, one of each
# The lessons' check-yourself questions (attention.questions) add: any decimal within TOLERANCE,
# an exact whole number, yes or no
QUESTION_KINDS = ("number", "whole", "yesno")
SHAPE_EXAMPLE = "(3, 5)"  # two sizes: every shape drill's answer has three or four, so never it


@dataclass(frozen=True)
class Given:
    """What a drill shows: named rows over named columns. A row holds numbers (float, None = a
    blocked cell), yes/no (bool: may the query attend?) or positions (int)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[float | bool | int | None, ...]], ...]


@dataclass(frozen=True)
class Mistake:
    """A wrong answer with a cause: the number that classic mistakes of the bug hunt's catalogue
    give for a question (attention.diagnosis runs each one), named by the catalogue."""

    value: float  # the choice's number: within the tolerance of what each mistake gives
    bugs: tuple[str, ...]  # keys of attention.bugs.BUGS
    titles: tuple[str, ...]  # their titles, as the bug hunt names them
    values: tuple[float, ...] = ()  # what each of them gives, in the same order

    def said(self) -> str:
        """Each mistake named with the number it gives: "0.0680 is what masking after the
        softmax gives", or, merged, "0.0666 is what A (0.0680) or B (0.0652) gives"."""
        if len(self.bugs) == 1 or not self.values:
            return f"{f4(self.value)} is what {in_sentence(self.titles)} gives."
        named = [
            f"{title[0].lower() + title[1:]} ({f4(v)})"
            for title, v in zip(self.titles, self.values, strict=True)
        ]
        return f"{f4(self.value)} is what {' or '.join(named)} gives, within the tolerance."


@dataclass(frozen=True)
class Drill:
    """One exercise: the question, the numbers it needs, the answer and the working."""

    kind: str  # one of KINDS or QUESTION_KINDS
    prompt: str  # plain text
    given: Given | None
    answer: float | int | bool | tuple[int, ...] | frozenset[int]  # number, shape, positions
    answer_text: str  # the answer as the page prints it
    working: tuple[str, ...]  # plain-text lines, shown after an answer
    labels: tuple[str, ...] = ()  # token labels, for answers that name a key
    mistakes: tuple[Mistake, ...] = ()  # the numbers classic mistakes give (a diagnostic)
    # computes `mistakes` when asked (attention.diagnosis.diagnosed); not part of equality
    diagnose: Callable[[], tuple[Mistake, ...]] | None = field(default=None, compare=False)
    hint: str = ""  # what to check before a second try; "" for its kind's (HINTS)
    percent: bool = False  # a weight asked as a number: "34 %" is read as 0.34, as for "weight"
    # wrong readings of the question: (the number a reading gives, the sentence naming it,
    # "0 is the earlier 'R' itself; ..."), for hints that say what the answer misread
    readings: tuple[tuple[float, str], ...] = ()

    @property
    def takes_percent(self) -> bool:
        """Whether a percentage is an answer here: a weight (kind "weight", or `percent`)."""
        return self.kind == "weight" or self.percent


@dataclass(frozen=True)
class Grade:
    """The verdict on one typed answer; `mistake` when a wrong number is what a classic mistake
    gives."""

    status: str  # "right" | "wrong" | "invalid"
    message: str
    mistake: Mistake | None = None
    reading: str = ""  # the wrong reading of the question the number is (Drill.readings)


# What to check before a second try, by the kind of question: the step it turns on, never
# its numbers (a first wrong answer gets this; the answer and the working come after a
# second, or on request)
HINTS = {
    "argmax": "The largest scaled score in the query's row wins; blocked keys are out of the "
    "running.",
    "score": "Multiply the two vectors entry by entry, add the products, then multiply by the "
    "scale; keep 4 decimals until the end.",
    "weight": "Softmax over the query's row: e to the power of each allowed score (after "
    "subtracting the row's largest), divided by their sum. A blocked key gets 0.",
    "output": "A weighted sum down V's column: each weight times the same key's value, added.",
    "shape": "view cuts the last size into the sizes it names; transpose(1, 2) swaps the "
    "second and third.",
    "mask": "Causal: a key after a query is in its future. Padding: a filler key is hidden "
    "from every query.",
    "number": "Go back to the formula the question names and work it step by step from the "
    "numbers it gives, keeping 4 decimals until the end.",
    "whole": "Count again from the definition the question gives, positions from 0.",
    "yesno": "Read the question's condition again against the numbers it gives.",
}


def hint(drill: Drill, verdict: Grade) -> str:
    """What to check before a second try: the classic mistake the wrong number matches, where
    one does, else the step the kind of question turns on."""
    if verdict.mistake is not None:
        titles = in_sentence(verdict.mistake.titles)
        return f"that number is what you get with {titles}: check that step."
    if verdict.reading:
        return verdict.reading
    return drill.hint or HINTS.get(drill.kind, HINTS["number"])


def in_sentence(titles) -> str:
    """Mistakes' titles inside a sentence: "softmax over the wrong axis or no scaling at all"."""
    return " or ".join(title[0].lower() + title[1:] for title in titles)


def mistake_of(drill: Drill, value: float) -> Mistake | None:
    """The classic mistake whose number a typed value is (within the drills' tolerance)."""
    near = [m for m in drill.mistakes if abs(value - m.value) <= TOLERANCE + 1e-9]
    return min(near, key=lambda m: abs(value - m.value), default=None)


def f4(value: float) -> str:
    """A number to 4 decimals, as the tables print it."""
    return "0.0000" if abs(value) < 5e-5 else f"{value:.4f}"


def shown(value: float) -> float:
    """The number a student reads in a table (4 decimals): hand working starts from these."""
    return float(f4(value))


def factor(value: float) -> str:
    """A number printed as a factor of a product: a negative one in brackets, 0.2 × (-0.1)."""
    text = f4(value)
    return f"({text})" if text.startswith("-") else text


def exact_note(name: str, hand: float, truth: float) -> tuple[str, ...]:
    """A line for when working from the 4-decimal numbers lands on other digits than the
    exact answer, saying whether the hand result counts as right too."""
    if f4(hand) == f4(truth):
        return ()
    counts = abs(hand - truth) <= TOLERANCE
    return (
        f"From the unrounded numbers {name} = {f4(truth)}"
        + (f"; the working's {f4(hand)} counts as right too." if counts else "."),
    )


def rule(percent: bool = True) -> str:
    """The grading rule in words, its example graded by `grade` itself (tests check). With
    `percent`, it says a weight may be typed as a percentage: say so only above questions that
    ask for a weight (Drill.takes_percent), the only questions `grade` takes a percentage for."""
    x = RULE_EXAMPLE
    cut = math.floor(x * 100) / 100
    return (
        f"A number counts as right within {TOLERANCE} of the exact value, so round it to 2 "
        f"decimals or more: for {x}, {x:.2f} and {x:.3f} are right; {cut:.2f} (cut short, "
        f"{x - cut:.4f} off) is not. A decimal comma is fine"
        + (f", and a weight may be typed as a percentage ({100 * x:.0f} %)." if percent else ".")
    )


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


def diagnosis_of(name: str, *args) -> tuple[Mistake, ...]:
    """The numbers the bug hunt's mistakes give for a drill: attention.diagnosis's `name`
    (scale_mistakes) on `args`, run when an answer is typed. A drill diagnoses only mistakes a
    student can make from the numbers it gives: the scale, from q and k (its row of weights
    shows no blocked score, and an output drill no key)."""
    from attention import diagnosis  # here: diagnosis builds its questions on this module

    return getattr(diagnosis, name)(*args)


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
        diagnose=partial(
            diagnosis_of,
            "scale_mistakes",
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


def ascii_digits(text: str) -> str:
    """Any script's decimal digits (٣, ३, ３, ...) as 0-9; other characters unchanged."""
    return "".join(
        str(unicodedata.decimal(ch))
        if not ch.isascii() and unicodedata.decimal(ch, None) is not None
        else ch
        for ch in unicodedata.normalize("NFKC", text)
    )


def parse_number(typed: str) -> float:
    """A typed number, tolerant of spaces, a decimal comma, a Unicode minus and other scripts'
    digits; ValueError with a message a student reads otherwise."""
    text = ascii_digits(re.sub(r"\s+", "", str(typed)))
    text = text.replace("−", "-").replace("–", "-").replace("\u066b", ".")  # Arabic decimal mark
    if not text:
        raise ValueError("Type a number first.")
    if text.endswith(PERCENT_SIGNS):
        raise ValueError(
            "Only a weight can be a percentage: type this one as a plain number, like 0.1234."
        )
    if "," in text:
        if "." in text or text.count(",") > 1:
            raise ValueError(f"“{str(typed)[:20]}” is not a number: use one decimal separator.")
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"“{str(typed)[:20]}” is not a number.") from None
    if math.isnan(value):
        raise ValueError("NaN is not an answer: every number here is finite.")
    if math.isinf(value) or abs(value) >= HUGE:
        raise ValueError("That number is far too large: every answer here is well below a million.")
    return value


PERCENT_SIGNS = ("%", "\u066a", "\uff05")  # %, Arabic ٪, full-width ％
YES, NO = ("yes", "y", "true"), ("no", "n", "false")


def parse_percent(typed: str) -> float:
    """A weight: a number, or a percentage ("18 %" is 0.18)."""
    text = str(typed).strip()
    if text.endswith(PERCENT_SIGNS):
        return parse_number(text[:-1]) / 100
    return parse_number(text)


def parse_integers(typed: str) -> tuple[int, ...]:
    """Whole numbers separated by commas, spaces, x or ×, with optional brackets."""
    text = str(typed).strip().strip("()[]{} ")
    if not text:
        return ()
    parts = [p for p in re.split(r"[\s,;x×*]+", text) if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"“{str(typed)[:30]}” is not a list of whole numbers.") from None
    if any(abs(v) >= HUGE for v in values):
        raise ValueError("That number is far too large for a position or a size.")
    return values


def grade(drill: Drill, typed: str) -> Grade:
    """Right, wrong, or invalid (with the reason) for what a student typed; never raises."""
    typed = "" if typed is None else str(typed)[:200]
    if not typed.strip():
        return Grade("invalid", "Type an answer first.")
    try:
        if drill.kind in ("score", "weight", "output", "number"):
            value = parse_percent(typed) if drill.takes_percent else parse_number(typed)
            right = abs(value - float(drill.answer)) <= TOLERANCE + 1e-9
            shown = f4(value)
        elif drill.kind == "argmax":
            return grade_key(drill, typed)
        elif drill.kind == "whole":
            value = parse_number(typed)
            if value != int(value):
                return Grade("invalid", "Type a whole number: this answer has no decimals.")
            right, shown = int(value) == drill.answer, str(int(value))
        elif drill.kind == "yesno":
            word = typed.strip().lower()
            if word not in YES + NO:
                return Grade("invalid", "Type yes or no.")
            right, shown = (word in YES) == drill.answer, "yes" if word in YES else "no"
        elif drill.kind == "shape":
            value = parse_integers(typed)
            if not value:
                return Grade("invalid", f"Type a shape: its sizes in order, like {SHAPE_EXAMPLE}.")
            right = value == drill.answer
            shown = str(value)
        else:  # mask
            if typed.strip().lower() in ("none", "no", "nothing", "-", "0 keys"):
                value = frozenset()
            else:
                value = frozenset(parse_integers(typed))
            T = len(drill.given.columns)
            outside = sorted(p for p in value if not 0 <= p < T)
            if outside:
                return Grade(
                    "invalid", f"Positions run from 0 to {T - 1}; {outside[0]} is not one."
                )
            right = value == drill.answer
            shown = " ".join(str(p) for p in sorted(value)) or "none"
    except ValueError as error:
        return Grade("invalid", str(error))
    if right:
        return Grade("right", f"Right: {drill.answer_text}.")
    said = f"Not quite: you gave {shown}, the answer is {drill.answer_text}."
    mistake = mistake_of(drill, value) if drill.mistakes else None
    if mistake is not None:
        said += f" {shown} is what you get with a classic mistake: {in_sentence(mistake.titles)}."
    reading = reading_of(drill, value)
    if reading:
        said += f" {reading}."
    return Grade("wrong", said, mistake, reading)


def reading_of(drill: Drill, value) -> str:
    """The sentence of the wrong reading of the question whose number the answer is, or ""."""
    if not isinstance(value, int | float):
        return ""
    return next((words for number, words in drill.readings
                 if abs(value - number) <= TOLERANCE + 1e-9), "")  # fmt: skip


def grade_key(drill: Drill, typed: str) -> Grade:
    """A key named by its position or by its token label."""
    text = typed.strip()
    labels = drill.labels
    if text in labels:
        position = labels.index(text)
    else:
        lowered = [label.lower() for label in labels]
        if text.lower() in lowered and lowered.count(text.lower()) == 1:
            position = lowered.index(text.lower())
        else:
            try:
                number = parse_number(text)
            except ValueError:
                return Grade("invalid", f"“{text[:20]}” is neither a position nor a token here.")
            if number != int(number) or not 0 <= number < len(labels):
                return Grade("invalid", f"Positions run from 0 to {len(labels) - 1}.")
            position = int(number)
    if position in drill.answer:
        return Grade("right", f"Right: {drill.answer_text}.")
    return Grade(
        "wrong", f"Not quite: you gave {position} ({labels[position]}), the answer is "
        f"{drill.answer_text}."
    )  # fmt: skip
