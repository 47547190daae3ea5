"""Jupyter notebooks that rebuild a page in plain PyTorch and assert it equals the page's numbers.

The code is not here: it is in `cells/`, real Python files in jupytext's percent format (see
`cells/__init__.py`), linted and run by the tests like any module. A notebook is a few of those
files read in order; what the page adds is data only, given to the assignments of the cells
tagged `parameters` (the page's settings, its numbers, a trained layer's weights). Builders are
pure: a lesson or numbers in, a notebook (or its cells) out.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import v4
from torch import Tensor

from attention.cross.model import EncoderDecoder, Written
from attention.lm.block import Lens, Stream
from attention.lm.corpus import vocabulary
from attention.lm.model import CharGPT
from dashboard import lessons
from dashboard.exports.json_trace import trace_json, variant_of
from dashboard.lessons import Computed
from dashboard.settings import Settings

CELLS = Path(__file__).with_name("cells")
HEADER = re.compile(r"# %%(?P<markdown> \[markdown\])?(?P<options>.*)")
OPTION = re.compile(r'(\w+)=("[^"]*"|\[[^\]]*\])')  # key="text" or key=["a", "b"]


@dataclass(frozen=True)
class Cell:
    """One cell of a percent-format file."""

    kind: str  # "code" or "markdown"
    source: str  # markdown without its "# " prefixes
    tags: tuple[str, ...] = ()
    script_only: bool = False  # active="py": the plain script's, never a notebook's


def read_cells(path: Path) -> list[Cell]:
    """The cells of a percent-format file, in order; what comes before the first `# %%` (the
    module's docstring) is the file's own."""
    cells, header, lines = [], None, []
    for line in [*path.read_text(encoding="utf-8").splitlines(), "# %%"]:  # the last closes
        match = HEADER.fullmatch(line)
        if match is None:
            lines.append(line)
            continue
        if header is not None:
            cells.append(make_cell(header, lines, path))
        header, lines = match, []
    return cells


def make_cell(header: re.Match, lines: list[str], path: Path) -> Cell:
    options = {key: json.loads(value) for key, value in OPTION.findall(header["options"])}
    if header["markdown"]:
        if not all(line == "#" or line.startswith("# ") for line in lines if line):
            raise ValueError(f"{path.name}: a markdown cell's lines are '# ' comments")
        lines = [line[2:] for line in lines]
    return Cell(
        kind="markdown" if header["markdown"] else "code",
        source="\n".join(lines).strip("\n"),
        tags=tuple(options.get("tags", ())),
        script_only="active" in options and "ipynb" not in options["active"],
    )


class JsonText(str):
    """A JSON document given to a notebook: written there as `json.loads("...")`."""


def literal(value: object) -> str:
    """Python source for one piece of data: a tensor as torch.tensor(nested lists), a JSON
    document through json.loads, ±infinity as ±math.inf, plain values (numbers, text, lists,
    tuples of them) by repr. Anything else is refused: a notebook is given data, never code."""
    if isinstance(value, JsonText):
        return f"json.loads({json.dumps(str(value))})"
    if isinstance(value, Tensor):
        if value.is_floating_point() and not bool(value.isfinite().all()):
            raise ValueError("a tensor given to a notebook holds only finite numbers")
        return f"torch.tensor({value.tolist()!r})"
    if isinstance(value, float) and math.isinf(value):
        return "-math.inf" if value < 0 else "math.inf"
    if is_plain(value):
        return plain_literal(value)
    raise TypeError(f"not data a notebook can be given: {type(value).__name__}")


def plain_literal(value: object) -> str:
    """repr, with text in double quotes as the cell files are formatted (a JSON string is a
    Python string literal)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(plain_literal, value)) + "]"
    if isinstance(value, tuple):
        items = ", ".join(map(plain_literal, value))
        return f"({items},)" if len(value) == 1 else f"({items})"
    return repr(value)


def is_plain(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(is_plain(item) for item in value)
    return value is None or isinstance(value, bool | int | str)


def fill(source: str, data: Mapping[str, object]) -> tuple[str, set[str]]:
    """A parameters cell with its first assignment to each name in `data` given that value
    (`name = ...`, or `a, b = ...` when every name is given), and the names it filled."""
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def index(lineno: int, col: int) -> int:  # ast's columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    edits, filled = [], set()
    for node in ast.parse(source).body:
        names = assigned_names(node)
        if not names or not set(names) & (data.keys() - filled):
            continue
        if not set(names) <= data.keys() or set(names) & filled:
            raise ValueError(f"{', '.join(names)}: every name of the assignment needs data")
        value = node.value
        span = index(value.lineno, value.col_offset), index(value.end_lineno, value.end_col_offset)
        edits.append((span, ", ".join(literal(data[name]) for name in names)))
        filled |= set(names)
    for (start, end), text in reversed(edits):
        source = source[:start] + text + source[end:]
    return source, filled


def assigned_names(node: ast.stmt) -> list[str]:
    """The names of `name = ...` or `a, b = ...` (with as many values), else none."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return []
    target = node.targets[0]
    if isinstance(target, ast.Name):
        return [target.id]
    if (
        isinstance(target, ast.Tuple)
        and all(isinstance(t, ast.Name) for t in target.elts)
        and isinstance(node.value, ast.Tuple)
        and len(node.value.elts) == len(target.elts)
    ):
        return [t.id for t in target.elts]
    return []


def cells_of(name: str, blank: bool = False, **data: object) -> list[nbformat.NotebookNode]:
    """The notebook cells of cells/<name>.py, its parameters given `data`: every name in
    `data` must be a parameter of the file. `blank`: each cell tagged "exercise" left for the
    learner, every name it assigns set to None under a *Your code* line."""
    remaining, cells = dict(data), []
    for cell in read_cells(CELLS / f"{name}.py"):
        if cell.script_only:
            continue
        if cell.kind == "markdown":
            cells.append(v4.new_markdown_cell(cell.source))
            continue
        source = cell.source
        if blank and "exercise" in cell.tags:
            names = [n for node in ast.parse(source).body for n in assigned_names(node)]
            source = (
                "# Your code: "
                + ", ".join(dict.fromkeys(names))
                + "\n"
                + "\n".join(f"{n} = None" for n in dict.fromkeys(names))
            )
        if "parameters" in cell.tags:
            source, filled = fill(source, remaining)
            remaining = {key: value for key, value in remaining.items() if key not in filled}
        cells.append(v4.new_code_cell(source))
    if remaining:
        raise ValueError(f"cells/{name}.py has no parameter {', '.join(remaining)}")
    return cells


def python_notebook(cells: Sequence[nbformat.NotebookNode]) -> nbformat.NotebookNode:
    """A notebook of these cells for a plain python3 Jupyter kernel."""
    book = v4.new_notebook(cells=list(cells))
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}  # fmt: skip
    book.metadata["language_info"] = {"name": "python"}
    return book


def page_data(lesson: Computed) -> dict[str, object]:
    """What cells/page.py is given: the lesson's settings and, as JSON, its numbers."""
    settings, layer, variant = lesson.settings, lesson.layer, variant_of(lesson)
    T = len(lesson.labels)
    return {
        "source": settings.source,
        "tokens": list(lesson.embedded.tokens),
        "T": T,
        "C": layer.d_model,
        "H": layer.n_heads,
        "seed": 42 if settings.source == "worked" else settings.seed,
        "causal": settings.causal,
        "n_padding": min(variant.n_padding, T),
        "empty_last_row": variant.empty_last_row,
        "mask_value": float(lesson.trace.mask_value),
        "has_W_o": layer.W_o is not None,
        "dashboard": JsonText(trace_json(lesson, shortest=True)),  # read as float32 tensors
    }


def notebook(
    lesson: Computed, section: Sequence[nbformat.NotebookNode] = ()
) -> nbformat.NotebookNode:
    """A Jupyter notebook that rebuilds this lesson's trace in plain PyTorch and asserts every
    stage equals the dashboard's numbers; then the lesson's own section, if it has one (the KV
    cache's decoding, FlashAttention's tiles), checked against those stages."""
    cells = [*cells_of("page", **page_data(lesson)), *cells_of("forward"), *cells_of("stages")]
    return python_notebook([*cells, *section])


def exercise_notebook(lesson: Computed, solved: bool = False) -> nbformat.NotebookNode:
    """The page's numbers, then each step of the layer for the learner to write (cells/
    exercise.py), each checked against them; `solved`: the steps written (the solution)."""
    cells = [*cells_of("page", **page_data(lesson)), *cells_of("exercise", blank=not solved)]
    return python_notebook(cells)


def layer_exercises(settings: Settings, solved: bool = False) -> nbformat.NotebookNode:
    """The exercises on the layer these settings show (a trained model's, for lessons 6 and
    12, whose pages have no sidebar trace): exercise_notebook of that lesson."""
    return exercise_notebook(lessons.computed(settings), solved)


def lesson_notebook(
    lesson: Computed, section: Callable[[], list] | None = None
) -> nbformat.NotebookNode:
    """The lesson's notebook, with its own section (built now, from `section`) if it has one."""
    return notebook(lesson, section() if section else ())


def decode_cells(decoded: Tensor) -> list[nbformat.NotebookNode]:
    """Lesson 10's section: the layer above decodes one token at a time with a KV cache; every
    output row must equal the full causal pass and the dashboard's own decoding, decoded (T, C)."""
    return cells_of("decode", decoded_by_dashboard=decoded)


def tiling_cells(tiled: Tensor, block_q: int, block_k: int) -> list[nbformat.NotebookNode]:
    """Lesson 11's section: FlashAttention's tiled walk (Dao et al. 2022, algorithm 1) over head
    0 with the page's block sizes; it must equal head 0 of the pass above and the dashboard's
    own tiled output, tiled (T, d_head)."""
    return cells_of("tiling", B_r=block_q, B_c=block_k, tiled_by_dashboard=tiled)


def position_cells(
    perm: Tensor, shuffled: Tensor, pe: Tensor, rope_scores: Tensor | None
) -> list[nbformat.NotebookNode]:
    """Lesson 9's section: shuffle the tokens (perm (T,), the page's Attn(P X) without a mask
    (T, C)), the sinusoidal table pe (T, C) and, when d_head is even, RoPE's scores of the first
    token against itself (T, T); each rebuilt and checked against the page."""
    cells = cells_of("position", perm=perm, shuffled_by_dashboard=shuffled, pe_by_dashboard=pe)
    if rope_scores is None:
        return [*cells, v4.new_markdown_cell("RoPE needs an even head size d_k: not shown here.")]
    return [*cells, *cells_of("rope", rope_by_dashboard=rope_scores)]


def scaling_data(
    seed: int,
    n: int,
    variances: list[tuple[int, float, float]],
    t: int,
    d_k: int,
    temperature: float,
    saturation: list[tuple[float, float, float, float]],
) -> dict[str, object]:
    """What lesson 4's cells (scaling.py, scaling_exercise.py) are given: variances [(d_k,
    Var(q·k), Var(q·k/√d_k))] of n random pairs (seed + d_k), and for one row of t scores at
    d_k, the softmax at scales 1, 1/√d_k and 1/(τ√d_k): [(scale, max weight, entropy, gradient
    size)]."""
    return {
        "seed": seed, "n": n, "variances_by_dashboard": variances, "T": t, "d_k": d_k,
        "tau": temperature, "saturation_by_dashboard": saturation,
    }  # fmt: skip


def scaling_notebook(data: dict[str, object]) -> nbformat.NotebookNode:
    """Lesson 4 as a notebook (`data`: scaling_data), each number rebuilt and asserted."""
    return python_notebook(cells_of("scaling", **data))


def scaling_exercise_notebook(
    data: dict[str, object], solved: bool = False
) -> nbformat.NotebookNode:
    """Lesson 4's exercises on the page's numbers (`data`: scaling_data): the learner writes
    the dot products, the scaling, the softmax, its entropy and Jacobian, each checked against
    the page; `solved`: written (the solution)."""
    return python_notebook(cells_of("scaling_exercise", blank=not solved, **data))


def block_data(model: CharGPT, stream: Stream, lens: Lens, position: int) -> dict[str, object]:
    """What lesson 14's cells (block.py) are given, at one position of the text: what the
    embeddings, each attention and each MLP wrote into the stream there, the final LayerNorm's
    γ, β and ε, the unembedding U, and the stream and the lens the page showed (S rows each)."""
    ln_f = model.ln_f
    attn_out, mlp_out = stream.layer_outputs()  # (L, T, C) each
    return {
        "tokens": list(stream.tokens()), "position": position, "vocab": list(vocabulary()),
        "embed": stream.embed[position], "pos_embed": stream.pos_embed[position],
        "attn_out": attn_out[:, position], "mlp_out": mlp_out[:, position],
        "gamma_f": ln_f.weight.detach(), "beta_f": ln_f.bias.detach(), "eps": float(ln_f.eps),
        "U": model.unembed.weight.detach(),
        "stream_by_dashboard": stream.resid()[:, position],
        "lens_by_dashboard": lens.probs[:, position],
    }  # fmt: skip


def block_exercise_notebook(data: dict[str, object], solved: bool = False) -> nbformat.NotebookNode:
    """Lesson 14's exercises on the page's numbers (`data`: block_data): the learner adds up
    the residual stream and reads it with the logit lens, each checked against the page;
    `solved`: written (the solution)."""
    return python_notebook(cells_of("block", blank=not solved, **data))


def cross_data(model: EncoderDecoder, done: Written, layer: int, head: int) -> dict[str, object]:
    """What lesson 13's cells (cross.py) are given, for the word the model reversed (`done`), one
    decoder layer and one head: the target Y the layer's cross-attention reads its queries from,
    the encoder's output X, the layer's W_q, W_k and W_v, and this head's scaled scores, weights
    and output as the page showed them."""
    cross = done.output.cross[layer]  # batched (1, ...)
    block = model.decoder[layer].cross
    return {
        "word": done.word, "layer": layer, "head": head, "H": int(cross.q.shape[1]),
        "Y": cross.y[0], "X": cross.x[0],
        "W_q": block.W_q.weight.detach(), "W_k": block.W_k.weight.detach(),
        "W_v": block.W_v.weight.detach(),
        "page_scaled": cross.scaled[0, head], "page_weights": cross.weights[0, head],
        "page_out": cross.heads[0, head],
    }  # fmt: skip


def cross_exercise_notebook(data: dict[str, object], solved: bool = False) -> nbformat.NotebookNode:
    """Lesson 13's exercises on the page's numbers (`data`: cross_data): the learner writes
    cross-attention step by step, each checked against the page; `solved`: written (the
    solution)."""
    return python_notebook(cells_of("cross", blank=not solved, **data))
