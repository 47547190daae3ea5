"""Numbers as the tables print them, and as Arrow: table text and heatmap cells."""

from __future__ import annotations

import base64
import io
import math

import numpy as np
import pyarrow as pa
from PIL import Image
from torch import Tensor

# The colour scale runs from -this to +this (diverging kinds): the chart reads it from the data,
# and "Show data" lists it under a name a student can read.
SCALE_FIELD = "colour scale ±"
# A heatmap's row and column positions, which its axes sort by (charts.axes): the labels' order
# travels with the data, so one spec serves every label set, and a chart whose data the browser
# swaps in place (the spec unchanged) still draws its labels in order (issue 42, item 9: Vega
# kept the old order of the labels two texts share, "16:␣" on top of lesson 12's maps)
ROW_ORDER, COLUMN_ORDER = "row number", "column number"

DIGITS = 4  # as torch prints: the worked example reproduces to this digit

# How wide each character is drawn in a table (the grid's 400 14px "Source Sans", measured in
# Chromium with the canvas's measureText), in px. A column is as wide as the text it will show
# (numbers, "-inf", "None", a header): counting characters at a digit's width cut "masked" to
# "nasked" and "None" to "lone". Any other character counts as a full em.
GLYPH_PX = {
    **dict.fromkeys("0123456789#$+<=>^~−×", 6.958), **dict.fromkeys(".,:;'′·", 3.486),
    " ": 2.8, "!": 4.046, '"': 5.964, "%": 11.536, "&": 8.526, "(": 4.242, ")": 4.242,
    "*": 5.852, "-": 4.354, "/": 4.9, "?": 5.95, "@": 11.858, "A": 7.602, "B": 8.232,
    "C": 7.994, "D": 8.61, "E": 7.378, "F": 6.916, "G": 8.638, "H": 9.128, "I": 3.682,
    "J": 6.706, "K": 8.106, "L": 6.804, "M": 10.178, "N": 9.058, "O": 9.296, "P": 7.924,
    "Q": 9.296, "R": 7.966, "S": 7.476, "T": 7.504, "U": 9.03, "V": 7.21, "W": 11.004,
    "X": 7.182, "Y": 6.664, "Z": 7.546, "[": 4.242, "\\": 4.9, "]": 4.242, "_": 7.0,
    "`": 7.588, "a": 7.056, "b": 7.742, "c": 6.384, "d": 7.77, "e": 6.944, "f": 4.088,
    "g": 7.056, "h": 7.616, "i": 3.444, "j": 3.458, "k": 6.93, "l": 3.57, "m": 11.606,
    "n": 7.658, "o": 7.588, "p": 7.77, "q": 7.77, "r": 4.858, "s": 5.866, "t": 4.732,
    "u": 7.616, "v": 6.538, "w": 10.066, "x": 6.244, "y": 6.538, "z": 5.95, "{": 4.242,
    "|": 3.374, "}": 4.242, "√": 7.798, "…": 13.272, "∞": 10.948, "ℓ": 5.726, "⟨": 4.242,
    "⟩": 4.242,
}  # fmt: skip
EM_PX = 14.0
CELL_PADDING = 8  # px: the grid's padding on each side of a cell's text
MIN_GAP = 5  # px: at least this much air between a cell's text and its far edge
# The data grid's header row (Streamlit's 2.1875rem, whatever the rows' height) and its border
# (1 px above and below): a table `grid_height` px tall shows every row with no inner scroll.
HEADER_PX = 35
BORDER_PX = 2


def grid_height(rows: int, row_height: int) -> int:
    """The st.dataframe height, in px, that shows a header and `rows` rows of `row_height`
    whole (Streamlit's own sizing: rows × row height + header + borders)."""
    return rows * row_height + HEADER_PX + BORDER_PX


def text_px(text: str) -> float:
    """How wide `text` is drawn in a table cell or header, in px (GLYPH_PX)."""
    return sum(GLYPH_PX.get(ch, EM_PX) for ch in text)


def texts_px(texts: np.ndarray) -> np.ndarray:
    """text_px of every string in an array, at once (a 64 x 256 table's 16,384 numbers on every
    new setting): each character's code looked up in a table of GLYPH_PX."""
    texts = np.asarray(texts, dtype=str)
    if texts.size == 0 or texts.dtype.itemsize == 0:
        return np.zeros(texts.shape)
    codes = texts.reshape(-1).view(np.uint32).reshape(texts.size, -1)  # 0 pads short strings
    drawn = np.where(codes < GLYPH_TABLE.size, GLYPH_TABLE[np.minimum(codes, 0xFFFF)], EM_PX)
    # rounded: a text's width must not depend on the longest text it was measured with (the
    # padding changes numpy's order of summation, and 42.63 came out as 42.629999999999995)
    return np.round(drawn.sum(axis=1), 9).reshape(texts.shape)


def widest_printed(values: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """The width in px of each column's widest number as format_array prints it, printing only
    the candidates: a plain number (fixed decimals) is at least as wide as any other of its sign
    with a smaller magnitude, so each column's largest and smallest value, plus every special
    value (inf, NaN, huge), decide it. (rows, cols) -> (cols,)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return np.zeros(values.shape[1:])
    plain = np.isfinite(values) & (np.abs(values) < 1e6)
    columns = np.arange(values.shape[1])
    edges = np.zeros(values.shape, dtype=bool)
    edges[np.where(plain, values, -np.inf).argmax(axis=0), columns] = True
    edges[np.where(plain, values, np.inf).argmin(axis=0), columns] = True
    drawn = np.zeros(values.shape)
    drawn[edges] = texts_px(format_array(values[edges], digits))
    if not plain.all():  # each distinct special value measured once (half a causal map is -inf)
        odd, where = np.unique(values[~plain], return_inverse=True)
        drawn[~plain] = texts_px(format_array(odd, digits))[where.reshape(-1)]
    return drawn.max(axis=0)


def glyph_table() -> np.ndarray:
    """GLYPH_PX by character code for the Basic Multilingual Plane (EM_PX for the rest, 0 for
    the padding NUL of a numpy string)."""
    table = np.full(0x10000, EM_PX)
    table[0] = 0.0
    for char, px in GLYPH_PX.items():
        table[ord(char)] = px
    return table


GLYPH_TABLE = glyph_table()


def column_px(texts) -> int:
    """A grid column's width for the widest of `texts` (column_room)."""
    return column_room(max(map(text_px, texts), default=0.0))


def column_room(text_width: float) -> int:
    """A grid column's width for text `text_width` px wide: the grid draws a cell's text
    CELL_PADDING + 0.5 px from one edge, and MIN_GAP px of air are kept at the other (the full
    padding there too would widen X's table past a 1280 x 720 screen at 150 %)."""
    return math.ceil(text_width + CELL_PADDING + 0.5 + MIN_GAP)


def feature_labels(n: int, prefix: str = "d", start: int = 0) -> list[str]:
    """Column names for features: d0, d1, ... (start shifts them, for one head's columns)."""
    return [f"{prefix}{start + i}" for i in range(n)]


def format_number(value: float, digits: int = DIGITS) -> str:
    """A number as the tables print it: fixed decimals, -inf as '-inf' (as torch prints it, with
    the same minus as every other number), -0.0000 as 0.0000."""
    return str(format_array(np.array([value], dtype=np.float64), digits)[0])


def format_array(values: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """format_number over an array (object array of the same shape). A 64 x 256 table is
    16,384 cells on every new setting, so this is the hot loop: f-strings, then fix-ups for
    the few special values."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.reshape(-1)
    plain = f"{{:.{digits}f}}".format
    text = np.empty(flat.size, dtype=object)
    text[:] = [plain(v) for v in flat.tolist()]
    tiny = 0.5 * 10.0**-digits
    special = ~np.isfinite(flat) | (np.abs(flat) >= 1e6) | (np.signbit(flat) & (flat > -tiny))
    if special.any():  # each distinct value once: a causal T x T score table is half -inf
        odd, where = np.unique(flat[special], return_inverse=True)
        words = np.array([special_number(v, digits) for v in odd.tolist()], dtype=object)
        text[special] = words[where.reshape(-1)]
    return text.reshape(values.shape)


def number_text(value: float) -> str:
    """One number as format_array prints it, fast (a pandas Styler asks for one cell at a
    time): the plain case is one f-string."""
    plain = math.isfinite(value) and abs(value) < 1e6
    if plain and not (math.copysign(1.0, value) < 0 and value > -0.5 * 10.0**-DIGITS):
        return f"{value:.{DIGITS}f}"
    return special_number(value, DIGITS)


def special_number(value: float, digits: int) -> str:
    """The printed form of infinities, NaN, huge values and negative zero."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    if abs(value) >= 1e6:
        return f"{value:.{digits - 1}e}"
    return f"{0.0:.{digits}f}"  # -0.00001 prints as 0.0000, not -0.0000


def number_table(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    corner: str,
    blocked: np.ndarray | None = None,
) -> pa.Table:
    """Numbers as an Arrow table: the row labels first (under `corner`), then one float64 column
    per label, at full precision (the grid formats them for display; its CSV export writes the
    full value: -inf as -Infinity, which pandas reads as -inf). NaN is null, and so are
    `blocked` cells when given (a drill's blanks): the grid shows its placeholder there and a
    CSV leaves them empty, which pandas reads as NaN. A stage's masked cells are never blocked
    here: they hold their true values (0.0, -inf). No pandas round trip, which for a 64 x 256
    table cost more than all the maths."""
    values = np.asarray(values, dtype=np.float64)
    missing = np.isnan(values)
    if blocked is not None:
        missing = missing | np.asarray(blocked, dtype=bool)
    n_rows = len(rows)
    # every column a slice of one array, column after column (one conversion, not one each)
    flat = pa.array(np.ascontiguousarray(values.T).reshape(-1), pa.float64())
    holes = missing.any(axis=0)
    arrays = [pa.array(rows, pa.string())]
    for c in range(len(columns)):
        column = flat.slice(c * n_rows, n_rows)
        if holes[c]:
            column = pa.array(values[:, c], pa.float64(), mask=missing[:, c])
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=[corner, *columns])


def corner_title(row_title: str, col_title: str, columns: list[str]) -> str:
    """The row labels' header: 'query \\ key' for a T x T table (rows, then columns), else
    the rows' title ('token'), unless a column has that name."""
    if row_title == "query" or row_title in columns:
        return f"{row_title} \\ {col_title}"  # has a space, which no token has
    return row_title


def long_form(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    blocked: np.ndarray | Tensor | None = None,
    digits: int = DIGITS,
    text: np.ndarray | None = None,
    bound: float | None = None,
    names: tuple[str, str] = ("row", "column"),
) -> pa.Table:
    """One row per cell for a heatmap, as Arrow: (row label, column label, value, printed,
    masked[, colour scale ±]), the row and column under `names` (the chart's axis titles). This is
    what the chart toolbar's "Show data" lists, so every column means something to a student.

    Rows come row after row, columns in order: the chart keeps that order (no sort field).
    With `bound`, SCALE_FIELD holds the half-width of the symmetric colour scale (one dictionary
    value, one byte per cell): the chart reads its domain from the data, so its spec stays the
    same. Masked cells keep a finite value (Vega drops non-finite cells) and print as
    'masked: <value>'."""
    values = np.asarray(values, dtype=np.float64)
    n_rows, n_cols = values.shape
    flat = values.reshape(-1)
    labels = (format_array(flat, digits) if text is None else text.reshape(-1)).copy()
    masked = np.zeros(flat.size, dtype=bool) if blocked is None else np.asarray(blocked, bool)
    masked = masked.reshape(-1)
    if masked.any():
        labels[masked] = "masked: " + labels[masked]
        flat = np.where(masked, 0.0, flat)  # -inf and -1e9 must not stretch the colour scale
    i = np.repeat(np.arange(n_rows, dtype=np.int32), n_cols)
    j = np.tile(np.arange(n_cols, dtype=np.int32), n_rows)
    # Labels as dictionaries: each label is sent once, each cell carries two small integers
    # (a 64 x 256 heatmap's data halves, from 0.9 to 0.44 MB).
    row_name, col_name = names
    table = {
        row_name: pa.DictionaryArray.from_arrays(
            pa.array(i, pa.int32()), pa.array(rows, pa.string())
        ),
        col_name: pa.DictionaryArray.from_arrays(
            pa.array(j, pa.int32()), pa.array(columns, pa.string())
        ),
        "value": pa.array(flat),
        "printed": pa.array(labels.tolist(), pa.string()),
        "masked": pa.array(masked),
        ROW_ORDER: pa.array(i, positions(n_rows)),
        COLUMN_ORDER: pa.array(j, positions(n_cols)),
    }
    if bound is not None:
        table[SCALE_FIELD] = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(flat.size, dtype=np.int8)), pa.array([float(bound)], pa.float64())
        )
    return pa.table(table)


def positions(n: int) -> pa.DataType:
    """The smallest integer type that numbers n positions (one byte a cell up to 256)."""
    return pa.uint8() if n <= 256 else pa.uint16()


def image_form(
    picture: np.ndarray,
    rows: list[str],
    columns: list[str],
    bound: float | None = None,
    names: tuple[str, str] = ("row", "column"),
    values: np.ndarray | None = None,
    blocked: np.ndarray | None = None,
) -> pa.Table:
    """A large heatmap's data (charts.heatmap_image): its cells as one PNG (a data URL on the
    first row; a pixel, or a square of pixels, per cell), and one row per row label and per
    column label for the axes, in order; with `bound`, SCALE_FIELD holds the half-width of the
    symmetric colour scale, as in long_form.

    With `values` (rows x columns), the numbers too, one column per column label beside the
    row labels (`blocked` cells empty): what the chart toolbar's "Show data" lists is then the
    matrix the picture paints, as a student reads it, not the picture's address. The chart draws
    nothing from these columns."""
    n = max(len(rows), len(columns))
    buffer = io.BytesIO()
    Image.fromarray(picture, "RGB").save(buffer, format="PNG", compress_level=1)
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    row_name, col_name = names
    table = {
        row_name: pa.array(list(rows) + [None] * (n - len(rows)), pa.string()),
        col_name: pa.array(list(columns) + [None] * (n - len(columns)), pa.string()),
        "image": pa.array([url] + [None] * (n - 1), pa.string()),
        ROW_ORDER: pa.array(list(range(len(rows))) + [None] * (n - len(rows)), positions(n)),
        COLUMN_ORDER: pa.array(
            list(range(len(columns))) + [None] * (n - len(columns)), positions(n)
        ),
    }
    if bound is not None:
        table[SCALE_FIELD] = pa.array(np.full(n, float(bound)))
    if values is not None:
        numbers = np.full((n, len(columns)), np.nan, dtype=np.float32)
        numbers[: len(rows)] = values
        empty = ~np.isfinite(numbers)
        if blocked is not None:
            empty[: len(rows)] |= np.asarray(blocked, bool)
        for j, label in enumerate(columns):
            name = label if label not in table else f"{col_name} {label}"
            table[name] = pa.array(numbers[:, j], mask=empty[:, j])
    return pa.table(table)
