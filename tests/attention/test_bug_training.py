"""Bugs that still train: the shipped curves are complete and show the costs; one pair of runs
is retrained here as a learning-threshold test."""

import json

import pytest

from attention.bug_training import (
    COMMAND,
    CORRECT,
    CURVE_TASKS,
    CURVES_PATH,
    load_curves,
    train_curve,
)
from attention.bugs import SILENT_BUGS


@pytest.fixture(scope="module")
def curves():
    return load_curves()


def test_load_curves_has_every_silent_bug_on_every_task(curves):
    assert set(curves) == {(t, b) for t in CURVE_TASKS for b in (CORRECT, *SILENT_BUGS)}
    assert json.loads(CURVES_PATH.read_text())["command"] == COMMAND


def test_load_curves_records_match_in_length(curves):
    for curve in curves.values():
        assert len(curve.steps) == len(curve.loss) == len(curve.accuracy) >= 50
        assert list(curve.steps) == sorted(curve.steps)


@pytest.mark.parametrize("bug", ["softmax_over_queries", "no_scaling", "dropout_at_eval"])
def test_curves_bug_still_trains_but_reaches_lower_accuracy(curves, bug):
    correct, buggy = curves["induction", CORRECT], curves["induction", bug]
    assert buggy.loss[-1] < buggy.loss[0]  # it does learn something
    assert buggy.held_out < correct.held_out - 0.1


def test_curves_look_ahead_learns_suspiciously_fast(curves):
    correct, leak = curves["induction", CORRECT], curves["induction", "mask_off_by_one"]
    assert leak.reached < correct.reached / 2 and leak.held_out >= correct.held_out


def test_load_curves_missing_file_says_how_to_make_it(tmp_path):
    with pytest.raises(ValueError, match="make them with python -m"):
        load_curves(tmp_path / "none.json")


def test_train_curve_rejects_a_loud_bug():
    with pytest.raises(ValueError, match="only silent bugs train"):
        train_curve("previous_token", "fill_1e9_fp16", steps=1)


def test_train_curve_softmax_over_queries_learns_induction_worse():
    correct = train_curve("induction")
    buggy = train_curve("induction", "softmax_over_queries")
    assert correct.held_out >= 0.9
    assert buggy.held_out <= correct.held_out - 0.2
