"""Bugs that still train: the shipped curves are complete and show the costs; one pair of runs
is retrained here as a learning-threshold test."""

import json

import pytest
import torch

from attention.bugs import (
    BUGS,
    COMMAND,
    CORRECT,
    CURVE_TASKS,
    CURVES_PATH,
    DROPOUT_P,
    SILENT_BUGS,
    load_curves,
    training,
)
from attention.bugs.training import train_curve
from attention.tiny import TASKS
from attention.tiny.training import build_model


@pytest.fixture(scope="module")
def curves():
    return load_curves()


def test_load_curves_has_every_silent_bug_on_every_task(curves):
    assert set(curves) == {(t, b) for t in CURVE_TASKS for b in (CORRECT, *SILENT_BUGS)}
    assert json.loads(CURVES_PATH.read_text())["command"] == COMMAND


def test_command_runs_the_training_module():
    assert f"python -m {training.__name__}" == COMMAND


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


def test_train_curve_trains_through_the_students_layers(monkeypatch):
    """The model trained for a bug runs the student's steps (and dropout) in every layer."""
    built = []

    def spy(task, seed, **options):
        built.append(build_model(task, seed, **options))
        return built[-1]

    monkeypatch.setattr("attention.tiny.training.build_model", spy)
    train_curve("previous_token", "dropout_at_eval", steps=1)
    assert all(layer.steps == BUGS["dropout_at_eval"].steps for layer in built[0].layers)
    assert all(layer.dropout == DROPOUT_P for layer in built[0].layers)


def test_train_curve_dropout_bug_is_reproducible():
    a = train_curve("previous_token", "dropout_at_eval", seed=3, steps=5)
    b = train_curve("previous_token", "dropout_at_eval", seed=3, steps=5)
    assert a == b


def test_build_model_with_a_bugs_steps_keeps_the_weights_changes_the_forward():
    with torch.no_grad():
        plain = build_model(TASKS["previous_token"], 0)
        ids = torch.zeros(2, 4, dtype=torch.long)
        steps = BUGS["no_scaling"].steps
        buggy = build_model(TASKS["previous_token"], 0, steps=steps)
        assert not torch.allclose(plain(ids).logits, buggy(ids).logits)
        assert torch.equal(plain.embed.weight, buggy.embed.weight)
