"""Every table of the trace as its own CSV, at full precision, in one zip."""

from __future__ import annotations

import io
import math
import zipfile

from torch import Tensor

from attention import STAGES
from attention.explain import allowed_matrix
from dashboard.exports.json_trace import INFINITY
from dashboard.lessons import Computed
from dashboard.render.tables import corner_title

README = f"""Every table of the attention trace, one CSV per stage and head, every digit kept.

Rows are queries (or tokens), columns keys (or features); the first column holds the labels:
pandas.read_csv(path, index_col=0). Each file holds the true values: a masked weight is 0.0,
and a masked score (masked_head*.csv, when the mask fills with -inf) is {INFINITY}, which
pandas, numpy and JavaScript's Number() read as minus infinity. allowed.csv is the mask:
1 = the query (row) may attend to the key (column).

Every export of the dashboard writes the same: a table's own "Download as CSV" writes
{INFINITY} too, and attention_trace.json, which as strict JSON cannot hold an infinity, has
the string "{INFINITY}" (in a browser: JSON.parse(text, (k, v) => v === "{INFINITY}" ?
-Infinity : v); in Python, float() reads it).
"""


def tables_zip(lesson: Computed) -> bytes:
    """Every stage (every head) as its own CSV, at full precision, plus the mask: x.csv,
    q_head0.csv, …, weights_head1.csv, output.csv, allowed.csv. Plain UTF-8 without a BOM;
    the true values: a masked weight is 0.0 and a masked score -Infinity, as the table's own
    CSV download writes it (pandas, numpy and a browser's Number() read it as a number).
    README.txt says so."""
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
        archive.writestr("README.txt", README)
    return buffer.getvalue()


def csv_text(matrix: Tensor, rows: list[str], columns: list[str], corner: str) -> str:
    """One labelled matrix as CSV, every digit kept (repr of float), -inf as '-Infinity'."""
    out = io.StringIO()
    out.write(",".join(csv_field(c) for c in [corner, *columns]) + "\n")
    for label, row in zip(rows, matrix.tolist(), strict=True):
        out.write(",".join([csv_field(label), *map(csv_number, row)]) + "\n")
    return out.getvalue()


def csv_number(value: float | int) -> str:
    """A number as CSV text: every digit (repr), -inf as INFINITY ('-Infinity'), the one
    spelling pandas.read_csv, numpy and JavaScript's Number() all read as minus infinity."""
    return INFINITY if value == -math.inf else repr(value)


def csv_field(text: str) -> str:
    """A label as one CSV field (quoted when it holds a comma, a quote or a line break)."""
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text
