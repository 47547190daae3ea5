"""What a student takes home: the whole trace as JSON, every table as a named CSV, and a Jupyter
notebook that rebuilds the view in plain PyTorch and checks it against the dashboard's numbers.

json_trace.py and csv_tables.py make the files, notebooks.py the notebooks (their code is the
real Python of cells/), downloads.py the buttons: the only Streamlit calls here. The public API,
re-exported from the modules that define it.
"""

from dashboard.exports.csv_tables import csv_field, csv_text, tables_zip
from dashboard.exports.downloads import (
    download_name,
    show_downloads,
    show_exercises,
    show_notebook_download,
)
from dashboard.exports.json_trace import json_numbers, trace_json, trace_payload, variant_of
from dashboard.exports.notebooks import (
    decode_cells,
    exercise_notebook,
    layer_exercises,
    lesson_notebook,
    notebook,
    position_cells,
    python_notebook,
    scaling_data,
    scaling_exercise_notebook,
    scaling_notebook,
    tiling_cells,
)

__all__ = [
    "csv_field",
    "csv_text",
    "decode_cells",
    "download_name",
    "exercise_notebook",
    "json_numbers",
    "layer_exercises",
    "lesson_notebook",
    "notebook",
    "position_cells",
    "python_notebook",
    "scaling_data",
    "scaling_exercise_notebook",
    "scaling_notebook",
    "show_downloads",
    "show_exercises",
    "show_notebook_download",
    "tables_zip",
    "tiling_cells",
    "trace_json",
    "trace_payload",
    "variant_of",
]
