"""Every table of the trace as its own CSV, at full precision, in one zip."""

from __future__ import annotations

import io
import zipfile

from torch import Tensor

from attention import STAGES
from attention.explain import allowed_matrix
from dashboard.lessons import Lesson
from dashboard.render.tables import corner_title


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
