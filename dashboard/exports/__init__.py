"""What a student takes home: the whole trace as JSON, every table as a named CSV, and a Jupyter
notebook that rebuilds the view in plain PyTorch and checks it against the dashboard's numbers.

Builders are pure (a lesson in, text or bytes out); `show_downloads` is the only Streamlit call.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial

import nbformat
import streamlit as st
from nbformat import v4
from torch import Tensor

from attention import STAGES
from attention.explain import allowed_matrix
from dashboard.lessons import Lesson, Variant
from dashboard.render.tables import corner_title

SCHEMA_VERSION = 2
NULL_MEANS = (
    "null stands for -Infinity: a blocked score in 'masked' when the fill is -inf, and "
    "'mask_value' itself then. JSON has no infinities; nothing else is ever null."
)
WEIGHT_CONVENTION = (
    "nn.Linear weights, shape (out, in) = (C, C): Q = X @ W_q.T, K = X @ W_k.T, V = X @ W_v.T, "
    "output = concat @ W_o.T (W_o is null when the layer has none). No biases."
)


def finite_list(values: Tensor | float) -> list | float | None:
    """A tensor as nested lists with every non-finite number (only -inf occurs) as None."""
    if isinstance(values, float):
        return values if math.isfinite(values) else None
    if bool(values.isfinite().all()):
        return values.tolist()
    return _nones(values.tolist())


def _nones(values):
    if isinstance(values, list):
        return [_nones(v) for v in values]
    return values if math.isfinite(values) else None


def variant_of(lesson: Lesson) -> Variant:
    """The lesson's variant (padding, fill value, edited encodings), from its cache key."""
    return Variant(*lesson.key[1]) if len(lesson.key) == 2 else Variant()


def trace_payload(lesson: Lesson) -> dict:
    """Settings, tokens, the mask, the layer's weights and every stage, as JSON-ready values."""
    trace, layer = lesson.trace, lesson.layer
    weights = {
        name: None if linear is None else linear.weight.detach().tolist()
        for name, linear in (
            ("W_q", layer.W_q), ("W_k", layer.W_k), ("W_v", layer.W_v), ("W_o", layer.W_o),
        )
    }  # fmt: skip
    return {
        "schema": {
            "version": SCHEMA_VERSION,
            "null": NULL_MEANS,
            "weights": WEIGHT_CONVENTION,
            "stages": {s.name: f"({', '.join(s.dims)}): {s.title}" for s in STAGES},
            "allowed": "(T, T) bool: True = query (row) may attend to key (column)",
            "how_to_load": (
                "data = json.load(f); W_q = torch.tensor(data['weights']['W_q']); "
                "X = torch.tensor(data['stages']['x']); Q = X @ W_q.T"
            ),
        },
        "settings": asdict(lesson.settings),
        "variant": {k: v for k, v in asdict(variant_of(lesson)).items() if k != "mask_value"},
        "tokens": list(lesson.embedded.tokens),
        "labels": list(lesson.labels),
        "n_heads": trace.n_heads,
        "d_head": trace.d_head,
        "scale": trace.scale,
        "mask_value": finite_list(float(trace.mask_value)),
        "allowed": allowed_matrix(trace, 0).tolist(),
        "weights": weights,
        "shapes": {s.name: list(trace.stage(s.name).shape) for s in STAGES},
        "stages": {s.name: finite_list(trace.stage(s.name)) for s in STAGES},
    }


def trace_json(lesson: Lesson) -> str:
    """The whole trace as one strict JSON document (no NaN or Infinity tokens)."""
    return json.dumps(trace_payload(lesson), allow_nan=False)


def tables_zip(lesson: Lesson) -> bytes:
    """Every stage (every head) as its own CSV, at full precision, plus the mask: x.csv,
    q_head0.csv, …, weights_head1.csv, output.csv, allowed.csv. Plain UTF-8 without a BOM;
    a blocked score is written -inf, which pandas and numpy read as a number."""
    trace, labels = lesson.trace, lesson.labels
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for stage in STAGES:
            tensor = trace.stage(stage.name)
            square = stage.dims[-1] == "T"
            for head, matrix in enumerate(tensor if stage.per_head else [tensor]):
                width = matrix.shape[-1]
                start = head * width if stage.per_head and not square else 0
                columns = labels if square else [f"d{start + c}" for c in range(width)]
                corner = "query \\ key" if square else corner_title("token", "feature", columns)
                name = f"{stage.name}_head{head}.csv" if stage.per_head else f"{stage.name}.csv"
                archive.writestr(name, csv_text(matrix, labels, columns, corner))
        allowed = allowed_matrix(trace, 0).int()
        archive.writestr("allowed.csv", csv_text(allowed, labels, labels, "query \\ key"))
    return buffer.getvalue()


def csv_text(matrix: Tensor, rows: list[str], columns: list[str], corner: str) -> str:
    """One labelled matrix as CSV, every digit kept (repr of float), -inf as '-inf'."""
    out = io.StringIO()
    out.write(",".join(csv_field(c) for c in [corner, *columns]) + "\n")
    for label, row in zip(rows, matrix.tolist(), strict=True):
        out.write(",".join([csv_field(label), *map(repr, row)]) + "\n")
    return out.getvalue()


def csv_field(text: str) -> str:
    """A label as one CSV field (quoted when it holds a comma, a quote or a line break)."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


# The notebook. Every code cell is plain PyTorch; the dashboard's numbers are embedded as JSON
# and only read back to compare. The recipe for X and the weights must match how
# attention.inputs and attention.layer build them: tests/dashboard/test_exports.py executes
# notebooks.
NOTEBOOK_INTRO = """# Self-attention, rebuilt in plain PyTorch

This notebook was written by the *Self-attention, step by step* dashboard. It rebuilds the view
you were looking at with nothing but PyTorch: the seeded weights, the input X, the mask, then every
stage, printing each one and checking it equals the numbers the dashboard showed (embedded in the
last cell of this section, as JSON).

Run all cells (Kernel → Restart & Run All). Only `torch` is needed."""


def notebook(
    lesson: Lesson, section: Sequence[nbformat.NotebookNode] = ()
) -> nbformat.NotebookNode:
    """A Jupyter notebook that rebuilds this lesson's trace in plain PyTorch and asserts every
    stage equals the dashboard's numbers; then the lesson's own section, if it has one (the KV
    cache's decoding, FlashAttention's tiles), checked against those stages."""
    payload = trace_payload(lesson)
    s = lesson.settings
    variant = variant_of(lesson)
    layer = lesson.layer
    C, H = layer.d_model, layer.n_heads
    T = len(lesson.labels)
    seed = 42 if s.source == "worked" else s.seed
    cells = [
        v4.new_markdown_cell(NOTEBOOK_INTRO),
        v4.new_code_cell(
            "import json\nimport math\n\nimport torch\n\n"
            "torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)"
        ),
        v4.new_markdown_cell("## What the dashboard showed\n\nSettings, then its numbers."),
        v4.new_code_cell(
            f"source = {s.source!r}\ntokens = {list(lesson.embedded.tokens)!r}\n"
            f"T, C, H = {T}, {C}, {H}  # tokens, d_model, heads\n"
            f"d_head = C // H\nseed = {seed}\ncausal = {s.causal}\n"
            f"n_padding = {min(variant.n_padding, T)}  # trailing tokens that are padding keys\n"
            f"empty_last_row = {variant.empty_last_row}  # block every key of the last query\n"
            f"mask_value = {repr_float(lesson.trace.mask_value)}  # what blocked scores hold\n"
            f"has_W_o = {layer.W_o is not None}"
        ),
        v4.new_code_cell(
            "# The dashboard's numbers (JSON: null stands for -inf). Only used to compare.\n"
            f"dashboard = json.loads({json.dumps(json.dumps(payload, allow_nan=False))})\n\n\n"
            "def shown(name):\n"
            '    """One stage as the dashboard computed it, as a tensor."""\n'
            "    def fix(v):\n"
            "        return [fix(x) for x in v] if isinstance(v, list) else "
            "(-math.inf if v is None else v)\n"
            "    return torch.tensor(fix(dashboard['stages'][name]))"
        ),
        *weights_cells(s.source),
        v4.new_markdown_cell("## The input X, shape (T, C)"),
        v4.new_code_cell(x_recipe(lesson)),
        v4.new_markdown_cell(
            "## The mask, True = may attend\n\nRows are queries, columns are keys."
        ),
        v4.new_code_cell(
            "allowed = torch.ones(T, T, dtype=torch.bool)\n"
            "if causal:\n"
            "    allowed = torch.tril(allowed)  # query i sees keys 0 .. i\n"
            "if n_padding:\n"
            "    allowed[:, T - n_padding:] = False  # padding keys\n"
            "if empty_last_row:\n"
            "    allowed[-1] = False\n"
            "assert allowed.tolist() == dashboard['allowed']\n"
            "print(allowed)"
        ),
        v4.new_markdown_cell(
            "## Every stage\n\nEach head owns d_head consecutive columns of Q, K and V. "
            "A query with no allowed key gets zero weights, as PyTorch's "
            "`scaled_dot_product_attention` gives."
        ),
        v4.new_code_cell(
            "with torch.no_grad():\n"
            "    Q, K, V = X @ W_q.weight.T, X @ W_k.weight.T, X @ W_v.weight.T  # (T, C) each\n"
            "    q = Q.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)\n"
            "    k = K.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)\n"
            "    v = V.view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)\n"
            "    scores = q @ k.transpose(-2, -1)  # (H, T, T)\n"
            "    scaled = scores / math.sqrt(d_head)  # (H, T, T)\n"
            "    masked = scaled.masked_fill(~allowed, mask_value)  # (H, T, T)\n"
            "    weights = torch.softmax(scaled.masked_fill(~allowed, -math.inf), dim=-1)\n"
            "    weights = torch.where(allowed, weights, torch.zeros(()))  # (H, T, T)\n"
            "    heads = weights @ v  # (H, T, d_head)\n"
            "    concat = heads.transpose(0, 1).reshape(T, C)  # (T, C)\n"
            "    output = concat @ W_o.weight.T if has_W_o else concat  # (T, C)\n\n"
            "stages = dict(x=X, q=q, k=k, v=v, scores=scores, scaled=scaled, masked=masked,\n"
            "              weights=weights, heads=heads, concat=concat, output=output)"
        ),
    ]
    for stage in STAGES:
        cells.append(
            v4.new_code_cell(
                f"# {stage.title}, shape ({', '.join(stage.dims)})\n"
                f"print(stages[{stage.name!r}])\n"
                f"torch.testing.assert_close(stages[{stage.name!r}], shown({stage.name!r}), "
                "rtol=1e-5, atol=1e-5)"
            )
        )
    cells.append(v4.new_code_cell("print('Every stage equals the dashboard:', ', '.join(stages))"))
    cells.extend(section)
    return python_notebook(cells)


def python_notebook(cells: list[nbformat.NotebookNode]) -> nbformat.NotebookNode:
    """A notebook of these cells for a plain python3 Jupyter kernel."""
    book = v4.new_notebook(cells=cells)
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}  # fmt: skip
    book.metadata["language_info"] = {"name": "python"}
    return book


# The layer above as one function, for the sections that run it again on other inputs or masks
# (the stage cell keeps every intermediate in its own name instead).
ATTEND = (
    "def attend(X, causal):\n"
    '    """The layer above as one function, causal or not: (T, C) -> (T, C)."""\n'
    "    with torch.no_grad():\n"
    "        def split(M):\n"
    "            return M.view(T, H, d_head).transpose(0, 1)  # (T, C) -> (H, T, d_head)\n"
    "\n"
    "        q, k, v = split(X @ W_q.weight.T), split(X @ W_k.weight.T), "
    "split(X @ W_v.weight.T)\n"
    "        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)  # (H, T, T)\n"
    "        if causal:\n"
    "            future = ~torch.ones(T, T, dtype=torch.bool).tril()  # key after query\n"
    "            scores = scores.masked_fill(future, -math.inf)\n"
    "        concat = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(T, C)\n"
    "        return concat @ W_o.weight.T if has_W_o else concat  # (T, C)\n"
)


def decode_cells(decoded: Tensor) -> list[nbformat.NotebookNode]:
    """Lesson 10's section: the layer above decodes one token at a time with a KV cache; every
    output row must equal the full causal pass and the dashboard's own decoding, decoded (T, C)."""
    return [
        v4.new_markdown_cell(
            "## Generation with a KV cache\n\nA model writes one token at a time. Under the "
            "causal mask token t's output needs only tokens 0 … t, and their keys and values "
            "never change: keep them in a cache, and each step computes one query row. The rows "
            "must equal the full causal pass (the one above, when its mask is causal)."
        ),
        v4.new_code_cell(
            f"decoded_by_dashboard = torch.tensor({json.dumps(decoded.tolist())})  # (T, C)\n"
            "k_cache = torch.empty(H, 0, d_head)  # (H, cached, d_head)\n"
            "v_cache = torch.empty(H, 0, d_head)  # (H, cached, d_head)\n"
            "rows = []\n\n\n"
            "def split(row):\n"
            "    return row.view(1, H, d_head).transpose(0, 1)  # (1, C) -> (H, 1, d_head)\n\n\n"
            "with torch.no_grad():\n"
            "    for t in range(T):\n"
            "        x_t = X[t : t + 1]  # (1, C): only the new token goes through the layer\n"
            "        q_t = split(x_t @ W_q.weight.T)  # (H, 1, d_head)\n"
            "        k_t = split(x_t @ W_k.weight.T)  # (H, 1, d_head)\n"
            "        v_t = split(x_t @ W_v.weight.T)  # (H, 1, d_head)\n"
            "        k_cache = torch.cat([k_cache, k_t], dim=1)  # (H, t + 1, d_head)\n"
            "        v_cache = torch.cat([v_cache, v_t], dim=1)  # (H, t + 1, d_head)\n"
            "        scores_t = q_t @ k_cache.transpose(-2, -1) / math.sqrt(d_head)  # (H,1,t+1)\n"
            "        weights_t = torch.softmax(scores_t, dim=-1)  # (H, 1, t + 1)\n"
            "        concat_t = (weights_t @ v_cache).transpose(0, 1).reshape(1, C)  # (1, C)\n"
            "        rows.append(concat_t @ W_o.weight.T if has_W_o else concat_t)\n"
            "        print(f'step {t}: one query row; the cache holds {k_cache.shape[1]} keys "
            "and values per head')\n"
            "decoded = torch.cat(rows)  # (T, C)\n\n\n"
            + ATTEND
            + "\n\n# the full causal pass, all T tokens at once (a trained task may be open)\n"
            "torch.testing.assert_close(decoded, attend(X, True), rtol=1e-5, atol=1e-5)\n"
            "torch.testing.assert_close(decoded, decoded_by_dashboard, rtol=1e-5, atol=1e-5)\n"
            "print('Decoding with the cache equals the full causal pass, row for row.')"
        ),
    ]


def tiling_cells(tiled: Tensor, block_q: int, block_k: int) -> list[nbformat.NotebookNode]:
    """Lesson 11's section: FlashAttention's tiled walk (Dao et al. 2022, algorithm 1) over head
    0 with the page's block sizes; it must equal head 0 of the pass above and the dashboard's
    own tiled output, tiled (T, d_head)."""
    return [
        v4.new_markdown_cell(
            "## FlashAttention: the same numbers, tile by tile\n\nHead 0, walked in tiles of "
            "B_r queries × B_c keys (Dao et al. 2022, algorithm 1). No T × T matrix is ever "
            "held: per query row, a running max m, a normaliser ℓ and an accumulator O, "
            "rescaled by e^(m − m') whenever the max grows."
        ),
        v4.new_code_cell(
            f"B_r, B_c = {block_q}, {block_k}  # query and key block sizes, as on the page\n"
            f"tiled_by_dashboard = torch.tensor({json.dumps(tiled.tolist())})  # (T, d_head)\n"
            "q0, k0, v0 = q[0], k[0], v[0]  # (T, d_head): head 0\n"
            "m = torch.full((T,), -math.inf)  # running max of each query row\n"
            "l = torch.zeros(T)  # running normaliser\n"
            "O = torch.zeros(T, d_head)  # running, unnormalised output\n"
            "tiles = 0\n"
            "for r0 in range(0, T, B_r):\n"
            "    rows = torch.arange(r0, min(r0 + B_r, T))\n"
            "    for c0 in range(0, T, B_c):\n"
            "        cols = torch.arange(c0, min(c0 + B_c, T))\n"
            "        if causal and c0 > rows[-1]:\n"
            "            continue  # the whole tile is in the future: no work\n"
            "        S = q0[rows] @ k0[cols].T / math.sqrt(d_head)  # (B_r, B_c) scores\n"
            "        if causal:\n"
            "            S = S.masked_fill(cols[None, :] > rows[:, None], -math.inf)\n"
            "        m_new = torch.maximum(m[rows], S.max(dim=-1).values)  # (B_r,)\n"
            "        P = torch.exp(S - m_new[:, None])  # (B_r, B_c) unnormalised weights\n"
            "        rescale = torch.exp(m[rows] - m_new)  # (B_r,): 0 on a row's first tile\n"
            "        l[rows] = rescale * l[rows] + P.sum(dim=-1)\n"
            "        O[rows] = rescale[:, None] * O[rows] + P @ v0[cols]\n"
            "        m[rows] = m_new\n"
            "        tiles += 1\n"
            "tiled = O / l[:, None]  # (T, d_head)\n"
            "print(f'{tiles} tiles of at most {B_r} x {B_c}; the largest score matrix held: "
            "{min(B_r, T)} x {min(B_c, T)}, never {T} x {T}')\n"
            "print(tiled)\n"
            "torch.testing.assert_close(tiled, heads[0], rtol=1e-5, atol=1e-5)  # the full pass\n"
            "torch.testing.assert_close(tiled, tiled_by_dashboard, rtol=1e-5, atol=1e-5)\n"
            "print('The tiled walk equals head 0 of the full pass.')"
        ),
    ]


def position_cells(
    perm: Tensor, shuffled: Tensor, pe: Tensor, rope_scores: Tensor | None
) -> list[nbformat.NotebookNode]:
    """Lesson 9's section: shuffle the tokens (perm (T,), the page's Attn(P X) without a mask
    (T, C)), the sinusoidal table pe (T, C) and, when d_head is even, RoPE's scores of the first
    token against itself (T, T); each rebuilt and checked against the page."""
    cells = [
        v4.new_markdown_cell(
            "## Position\n\nWithout a mask, attention is blind to order: shuffle the rows of X "
            "and the output rows shuffle the same way. With the causal mask they do not."
        ),
        v4.new_code_cell(
            f"perm = torch.tensor({perm.tolist()})  # new position i takes token perm[i]\n"
            f"shuffled_by_dashboard = torch.tensor({json.dumps(shuffled.tolist())})  # (T, C)\n\n\n"
            + ATTEND
            + "\n\n"
            "open_gap = (attend(X[perm], False) - attend(X, False)[perm]).abs().max()\n"
            "causal_gap = (attend(X[perm], True) - attend(X, True)[perm]).abs().max()\n"
            "print(f'max |Attn(P X) - P Attn(X)|: {open_gap:.2e} without a mask, "
            "{causal_gap:.4f} with the causal mask')\n"
            "torch.testing.assert_close(attend(X[perm], False), attend(X, False)[perm], "
            "rtol=1e-5, atol=1e-5)\n"
            "torch.testing.assert_close(attend(X[perm], False), shuffled_by_dashboard, "
            "rtol=1e-5, atol=1e-5)"
        ),
        v4.new_markdown_cell(
            "### Sinusoidal positions\n\nPE[pos, 2i] = sin(pos / 10000^(2i/C)), "
            "PE[pos, 2i+1] = cos(pos / 10000^(2i/C))."
        ),
        v4.new_code_cell(
            f"pe_by_dashboard = torch.tensor({json.dumps(pe.tolist())})  # (T, C)\n"
            "pos = torch.arange(T, dtype=torch.float32)[:, None]  # (T, 1)\n"
            "two_i = torch.arange(0, C, 2, dtype=torch.float32)  # (ceil(C/2),)\n"
            "angle = pos / torch.pow(10000.0, two_i / C)  # (T, ceil(C/2))\n"
            "PE = torch.zeros(T, C)\n"
            "PE[:, 0::2] = torch.sin(angle)\n"
            "PE[:, 1::2] = torch.cos(angle[:, : C // 2])\n"
            "print(PE)\n"
            "torch.testing.assert_close(PE, pe_by_dashboard, rtol=1e-5, atol=1e-5)"
        ),
    ]
    if rope_scores is None:
        return [*cells, v4.new_markdown_cell("RoPE needs an even d_head: not shown here.")]
    return [
        *cells,
        v4.new_markdown_cell(
            "### RoPE\n\nRotate each pair of features of q and k by position × "
            "10000^(−2i/d_head). The first token's query against its own key, at every pair of "
            "positions: each diagonal is one number, the score depends on m − n only."
        ),
        v4.new_code_cell(
            f"rope_by_dashboard = torch.tensor({json.dumps(rope_scores.tolist())})  # (T, T)\n"
            "\n"
            "\n"
            "def rotate(vectors):\n"
            '    """RoPE on (T, d_head): the vector at position p turned by p * theta_i."""\n'
            "    two_i = torch.arange(0, d_head, 2, dtype=torch.float64)  # (d_head / 2,)\n"
            "    inv_freq = 10000.0 ** (-two_i / d_head)  # theta_i per position\n"
            "    theta = torch.arange(T).double()[:, None] * inv_freq  # (T, d_head / 2)\n"
            "    cos, sin = torch.cos(theta).float(), torch.sin(theta).float()\n"
            "    even, odd = vectors[:, 0::2], vectors[:, 1::2]\n"
            "    out = torch.empty_like(vectors)\n"
            "    out[:, 0::2], out[:, 1::2] = even * cos - odd * sin, even * sin + odd * cos\n"
            "    return out\n"
            "\n"
            "\n"
            "q_0, k_0 = q[0, 0], k[0, 0]  # (d_head,): the first token's query and key, head 0\n"
            "rope_scores = rotate(q_0.expand(T, -1)) @ rotate(k_0.expand(T, -1)).T  # (T, T)\n"
            "for offset in range(-T + 1, T):  # one value per diagonal\n"
            "    diagonal = torch.diagonal(rope_scores, offset)\n"
            "    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), "
            "rtol=1e-4, atol=1e-4)\n"
            "print(rope_scores)\n"
            "torch.testing.assert_close(rope_scores, rope_by_dashboard, rtol=1e-5, atol=1e-5)\n"
            "print('Shuffling, the sinusoidal table and RoPE all equal the page.')"
        ),
    ]


SCALING_INTRO = """# Why divide by √d_k? Rebuilt in plain PyTorch

This notebook was written by lesson 4 of the *Self-attention, step by step* dashboard. It draws
the same random q and k, measures Var(q·k) with and without the 1/√d_k scale, then feeds one row
of scores to a softmax at three scales and measures how peaked it is and how much gradient flows
back, checking every number against the page (embedded below). Only `torch` is needed."""


def scaling_notebook(
    seed: int,
    n: int,
    variances: list[tuple[int, float, float]],
    t: int,
    d_k: int,
    temperature: float,
    saturation: list[tuple[float, float, float, float]],
) -> nbformat.NotebookNode:
    """Lesson 4 as a notebook: variances [(d_k, Var(q·k), Var(q·k/√d_k))] of n random pairs
    (seed + d_k), and for one row of t scores at d_k, the softmax at scales 1, 1/√d_k and
    1/(τ√d_k): [(scale, max weight, entropy, gradient size)]; each rebuilt and asserted."""
    cells = [
        v4.new_markdown_cell(SCALING_INTRO),
        v4.new_code_cell(
            "import math\n\nimport torch\n\n"
            f"seed, n = {seed}, {n}  # the page's seed; random pairs per d_k\n"
            f"variances_by_dashboard = {variances!r}  # (d_k, Var(q·k), Var(q·k / √d_k))\n"
            f"T, d_k, tau = {t}, {d_k}, {temperature!r}  # one query against T keys\n"
            f"saturation_by_dashboard = {saturation!r}  # (scale, max weight, entropy, ‖J‖)"
        ),
        v4.new_markdown_cell(
            "## Dot products grow with d_k\n\nq·k sums d_k products of variance 1: "
            "Var(q·k) = d_k, and Var(q·k / √d_k) = 1."
        ),
        v4.new_code_cell(
            "for d, shown_raw, shown_scaled in variances_by_dashboard:\n"
            "    generator = torch.Generator().manual_seed(seed + d)\n"
            "    q = torch.randn(n, d, generator=generator)  # (n, d_k)\n"
            "    k = torch.randn(n, d, generator=generator)  # (n, d_k)\n"
            "    raw = (q * k).sum(dim=-1)  # (n,) one dot product per pair\n"
            "    scaled = raw / math.sqrt(d)\n"
            "    print(f'd_k = {d:4d}: Var(q·k) = {raw.var():9.4f}   "
            "Var(q·k / √d_k) = {scaled.var():.4f}')\n"
            "    assert math.isclose(raw.var().item(), shown_raw, rel_tol=1e-5)\n"
            "    assert math.isclose(scaled.var().item(), shown_scaled, rel_tol=1e-5)"
        ),
        v4.new_markdown_cell(
            "## Large scores saturate the softmax\n\nThe softmax's Jacobian is "
            "diag(p) − p pᵀ: checked against autograd's, then its size measured at each scale."
        ),
        v4.new_code_cell(
            "generator = torch.Generator().manual_seed(seed)\n"
            "q = torch.randn(d_k, generator=generator)  # (d_k,)\n"
            "keys = torch.randn(T, d_k, generator=generator)  # (T, d_k)\n"
            "scores = keys @ q  # (T,) raw scores, variance d_k\n"
            "scales = [1.0, 1 / math.sqrt(d_k), 1 / (tau * math.sqrt(d_k))]  # none, standard, τ\n"
            "for scale, shown in zip(scales, saturation_by_dashboard, strict=True):\n"
            "    assert math.isclose(scale, shown[0], rel_tol=1e-12)\n"
            "    shown_max, shown_entropy, shown_gradient = shown[1:]\n"
            "    p = torch.softmax(scores.double() * scale, dim=-1)  # (T,)\n"
            "    J = torch.diag(p) - torch.outer(p, p)  # (T, T) d p / d (scaled scores)\n"
            "    J_autograd = torch.autograd.functional.jacobian(\n"
            "        lambda z: torch.softmax(z, dim=-1), scores.double() * scale\n"
            "    )\n"
            "    torch.testing.assert_close(J, J_autograd)\n"
            "    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum()\n"
            "    print(f'scale {scale:.4f}: max weight {p.max():.4f}, entropy {entropy:.4f} "
            "nats, gradient size {J.norm():.4f}')\n"
            "    for mine, shown in ((p.max(), shown_max), (entropy, shown_entropy), "
            "(J.norm(), shown_gradient)):\n"
            "        assert math.isclose(mine.item(), shown, rel_tol=1e-5, abs_tol=1e-9)\n"
            "print('Every variance and every softmax equals the page.')"
        ),
    ]
    return python_notebook(cells)


def show_notebook_download(
    build: Callable[[], nbformat.NotebookNode],
    file_name: str,
    help: str = "Rebuilds this page's numbers in plain PyTorch and checks each one against it.",
    where=st,
) -> None:
    """The *Take it home as a notebook* button (in `where`); the notebook is built on click."""
    where.download_button(
        "Take it home as a notebook",
        data=lambda: nbformat.writes(build()).encode(),
        file_name=file_name,
        mime="application/x-ipynb+json",
        on_click="ignore",
        icon=":material/code:",
        key="notebook",
        help=help,
    )


def repr_float(value: float) -> str:
    """A float as Python source (-inf as -math.inf)."""
    if math.isinf(value):
        return "-math.inf" if value < 0 else "math.inf"
    return repr(float(value))


def weights_cells(source: str) -> list:
    """The cells that make W_q, W_k, W_v (and W_o): seeded as the tutorials do, or, for a
    trained model's layer, its trained weights as literals."""
    check = (
        "for name, linear in [('W_q', W_q), ('W_k', W_k), ('W_v', W_v), ('W_o', W_o)]:\n"
        "    if linear is not None:\n"
        "        assert torch.equal(linear.weight, torch.tensor(dashboard['weights'][name])), "
        "name\n"
        "print(W_q.weight)"
    )
    if source == "trained":
        return [
            v4.new_markdown_cell(
                "## The weights\n\nThis layer was trained (lesson 6), so its weights cannot be "
                "drawn from a seed: they are the dashboard's own, copied in."
            ),
            v4.new_code_cell(
                "def trained(name):\n"
                "    linear = torch.nn.Linear(C, C, bias=False)\n"
                "    with torch.no_grad():\n"
                "        linear.weight.copy_(torch.tensor(dashboard['weights'][name]))\n"
                "    return linear\n\n\n"
                "W_q, W_k, W_v = trained('W_q'), trained('W_k'), trained('W_v')\n"
                "W_o = trained('W_o') if has_W_o else None\n" + check
            ),
        ]
    return [
        v4.new_markdown_cell(
            "## The weights\n\n`torch.manual_seed(seed)` right before the four projections are "
            "created, in the order W_q, W_k, W_v, W_o, as the classic tutorials do."
        ),
        v4.new_code_cell(
            "torch.manual_seed(seed)\n"
            "W_q = torch.nn.Linear(C, C, bias=False)\n"
            "W_k = torch.nn.Linear(C, C, bias=False)\n"
            "W_v = torch.nn.Linear(C, C, bias=False)\n"
            "W_o = torch.nn.Linear(C, C, bias=False) if has_W_o else None\n" + check
        ),
    ]


def x_recipe(lesson: Lesson) -> str:
    """The code cell that makes X: drawn from the seed for random vectors, else the dashboard's
    own X (a sentence's token vectors, or the worked example's encodings), as literals."""
    if lesson.settings.source == "random":
        return (
            "# seeded N(0, 1) vectors from a stream of their own: a hash of the seed, so X is\n"
            "# independent of the weights drawn by torch.manual_seed(seed)\n"
            "import hashlib\n\n"
            "x_digest = hashlib.blake2b(f'x\\x00{seed}'.encode(), digest_size=8).digest()\n"
            "x_seed = int.from_bytes(x_digest, 'little') >> 1\n"
            "X = torch.randn(T, C, generator=torch.Generator().manual_seed(x_seed))  # (T, C)\n"
            "assert torch.equal(X, shown('x'))\n"
            "print(X)"
        )
    what = {
        "worked": "the encodings of the worked example",
        "trained": "the trained model's residual stream entering this layer (token and position "
        "embeddings, plus the earlier layers' outputs)",
    }.get(
        lesson.settings.source,
        "one vector per token (plus sinusoidal positions, if chosen), as the dashboard made them",
    )
    return (
        f"# {what}\nX = torch.tensor({json.dumps(lesson.embedded.x.tolist())})  # (T, C)\nprint(X)"
    )


def lesson_notebook(
    lesson: Lesson, section: Callable[[], list] | None = None
) -> nbformat.NotebookNode:
    """The lesson's notebook, with its own section (built now, from `section`) if it has one."""
    return notebook(lesson, section() if section else ())


def show_downloads(lesson: Lesson, section: Callable[[], list] | None = None) -> None:
    """Take it home: the trace as JSON, every table as CSV, a notebook that rebuilds it all
    (and, given a lesson's `section`, what that lesson adds). Each file is built only when
    clicked."""
    json_col, csv_col, book_col = st.columns(3)
    json_col.download_button(
        "The whole trace (JSON)",
        data=lambda: trace_json(lesson),
        file_name="attention_trace.json",
        mime="application/json",
        on_click="ignore",
        icon=":material/download:",
        key="trace_json",
        help="Settings, tokens, mask, W_q, W_k, W_v, W_o and every stage at full precision.",
    )
    csv_col.download_button(
        "Every table (CSV, zip)",
        data=lambda: tables_zip(lesson),
        file_name="attention_tables.zip",
        mime="application/zip",
        on_click="ignore",
        icon=":material/table:",
        key="tables_zip",
        help="One file per stage and head (q_head0.csv, …), every digit, -inf where masked.",
    )
    show_notebook_download(
        partial(lesson_notebook, lesson, section),
        "attention_rebuilt.ipynb",
        help="Rebuilds this view in plain PyTorch and checks every number against this page.",
        where=book_col,
    )
