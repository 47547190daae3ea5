"""The classic from-scratch mistakes, each one replaced step of the plain forward: the catalogue,
the live checks that catch them, and the shipped curves of the bugs that still train.

`python -m attention.bugs.training` rebuilds the curves (the trainer is not imported here);
lesson 7's questions are questions.py."""

from attention.bugs.catalogue import (
    BUG_NAMES,
    BUGS,
    DROPOUT_P,
    SILENT_BUGS,
    Bug,
    bug,
    code_lines,
    run_buggy,
    source,
    source_diff,
    student_layer,
)
from attention.bugs.checks import (
    CHECKS,
    CheckResult,
    differing_stages,
    pytorch_output,
    run_checks,
    stage_difference,
)
from attention.bugs.curves import (
    COMMAND,
    CORRECT,
    CURVE_TASKS,
    CURVES_PATH,
    REACHED,
    Curve,
    load_curves,
)

__all__ = [
    "BUGS",
    "BUG_NAMES",
    "CHECKS",
    "COMMAND",
    "CORRECT",
    "CURVES_PATH",
    "CURVE_TASKS",
    "DROPOUT_P",
    "REACHED",
    "SILENT_BUGS",
    "Bug",
    "CheckResult",
    "Curve",
    "bug",
    "code_lines",
    "differing_stages",
    "load_curves",
    "pytorch_output",
    "run_buggy",
    "run_checks",
    "source",
    "source_diff",
    "stage_difference",
    "student_layer",
]
