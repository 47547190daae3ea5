"""The tiny transformers: tasks, model, ablation, head diagnostics, checkpoints and training."""

from dataclasses import replace

import pytest
import torch
from torch.testing import assert_close

from attention.layer import merge_heads
from attention.ops import PLAIN
from attention.tiny import TASKS, evaluate, head_reports, held_out, load, train
from attention.tiny.adam import Adam
from attention.tiny.diagnostics import (
    induction_reference,
    max_token_reference,
    previous_token_reference,
    repeated_probe,
    row_score,
)
from attention.tiny.training import (
    EXAMPLE_SEED,
    Prediction,
    build_model,
    checkpoint_path,
    data_stream,
    get_task,
    predict,
    scored_loss,
)

NAMED_HEAD = {  # task -> (score, threshold) its trained model's best head must reach (row score)
    "previous_token": ("previous_token", 0.8),
    "reverse": ("mirror", 0.8),
    "running_max": ("max_token", 0.8),
    "induction": ("induction", 0.7),
}
# TransformerLens's detector score counts every row, also those with no reference, so its best is
# the ceiling (the share of rows with a reference: 0.90 previous-token, 0.48 on the induction
# probe, 1 otherwise). A trained named head must reach 0.8 of it; seeds 0, 1 and 3 reach 0.97,
# 0.99, 0.97 (previous token), 0.93, 0.94, 0.99 (mirror), 0.96, 0.90, 1.00 (largest token) and
# 0.99, 0.98, 0.99 (induction) of it. At initialisation the best head stays under 0.5 of it.
DETECTOR_SHARE = 0.8


def best(reports, score):
    return max(reports, key=lambda r: r.row_scores[score])


def best_detector(reports, score):
    return max(reports, key=lambda r: r.scores[score])


def detector_share(report, score) -> float:
    """A head's TransformerLens score as a share of the best it could reach on the probe."""
    return report.scores[score] / report.ceilings[score]


# --- tasks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TASKS)
def test_task_generate_shapes_and_determinism(name):
    task = TASKS[name]
    ids, targets, scored = task.generate(5, torch.Generator().manual_seed(3))
    again = task.generate(5, torch.Generator().manual_seed(3))
    assert ids.shape == targets.shape == scored.shape == (5, task.seq_len)
    assert ids.dtype == targets.dtype == torch.long and scored.dtype == torch.bool
    assert scored.any(dim=1).all()
    for a, b in zip((ids, targets, scored), again, strict=True):
        assert torch.equal(a, b)
    assert int(ids.max()) < len(task.vocab) and int(ids.min()) >= 0
    prefix = task.encode(task.prefix) if task.prefix else torch.empty(0, dtype=torch.long)
    assert torch.equal(ids[:, : len(task.prefix)], prefix.expand(5, -1))


def test_task_targets_are_what_each_task_asks():
    g = torch.Generator().manual_seed(0)
    ids, targets, scored = TASKS["previous_token"].generate(4, g)
    assert torch.equal(targets[:, 1:], ids[:, :-1]) and not scored[:, 0].any()
    ids, targets, _ = TASKS["reverse"].generate(4, g)
    assert torch.equal(targets, ids.flip(1))
    ids, targets, _ = TASKS["running_max"].generate(4, g)
    assert all(targets[r, t] == ids[r, : t + 1].max() for r in range(4) for t in range(10))


def test_task_induction_scored_targets_follow_the_earlier_copy():
    ids, targets, scored = TASKS["induction"].generate(200, torch.Generator().manual_seed(1))
    for row in range(200):
        for p in scored[row].nonzero().flatten().tolist():
            earlier = (ids[row, :p] == ids[row, p]).nonzero().flatten().tolist()
            assert len(earlier) == 1, "the current token must have one earlier occurrence"
            assert targets[row, p] == ids[row, earlier[0] + 1]


def test_task_induction_varies_segment_length_and_place():
    """No positional shortcut: lengths cover the whole range, copies start all over."""
    task = TASKS["induction"]
    _, _, scored = task.generate(2000, torch.Generator().manual_seed(2))
    lengths = set((scored.sum(1) + 1).tolist())
    starts = set(scored.float().argmax(1).tolist())
    body = task.seq_len - len(task.prefix)
    assert lengths == set(range(3, body // 2 + 1))
    assert min(starts) <= 5 + len(task.prefix) and max(starts) >= task.seq_len - 4


def test_task_encode_rejects_unknown_tokens_and_bad_lengths():
    task = TASKS["reverse"]
    assert task.decode(task.encode(["a", "h"])) == ["a", "h"]
    with pytest.raises(ValueError, match="not in this task's vocabulary"):
        task.encode(["a", "z"])
    with pytest.raises(ValueError, match="empty"):
        task.encode([])
    with pytest.raises(ValueError, match="at most 8"):
        task.encode(["a"] * 9)
    with pytest.raises(ValueError, match="whole number"):
        task.generate(0, torch.Generator())


# --- model -----------------------------------------------------------------------------------


def test_model_runs_on_every_length_and_traces_each_layer():
    model = build_model(TASKS["induction"], 0)
    for T in (1, 7, 24):
        out = model(torch.zeros(3, T, dtype=torch.long))
        assert out.logits.shape == (3, T, len(TASKS["induction"].vocab))
        assert [t.weights.shape for t in out.traces] == [(3, 2, T, T), (3, 1, T, T)]


def test_model_first_trace_input_is_token_plus_position_embedding():
    model = build_model(TASKS["previous_token"], 0)
    ids = torch.tensor([[0, 3, 1]])
    with torch.no_grad():
        out = model(ids)
        assert_close(out.traces[0].x, model.embed(ids) + model.pos(torch.arange(3)))
        resid = out.traces[0].x + out.traces[0].output
        assert_close(out.logits, model.unembed(resid))


@pytest.mark.parametrize("bad", [torch.zeros(2, 11, dtype=torch.long), torch.zeros(3),
                                 torch.zeros(1, 3), torch.full((1, 3), 8)])  # fmt: skip
def test_model_rejects_bad_ids(bad):
    with pytest.raises(ValueError):
        build_model(TASKS["previous_token"], 0)(bad)


def test_model_ablation_zeroes_that_heads_output():
    model = build_model(TASKS["induction"], 0)
    ids = held_out(TASKS["induction"], 4)[0]
    with torch.no_grad():
        plain = model(ids)
        cut = model(ids, ablate={(0, 1)})
        z = plain.traces[0].heads.clone()
        z[:, 1] = 0
        assert_close(cut.traces[0].heads, z)
        assert_close(cut.traces[0].output, model.layers[0].W_o(merge_heads(z)))
        assert_close(cut.traces[0].weights, plain.traces[0].weights)  # the pattern is kept
        assert not torch.allclose(cut.logits, plain.logits)


def test_model_layers_run_the_models_steps_and_dropout():
    steps = replace(PLAIN, mix_values=lambda weights, k, v: weights @ k)
    model = build_model(TASKS["induction"], 0, steps=steps, dropout=0.5)
    plain = build_model(TASKS["induction"], 0)
    assert all(layer.steps is steps and layer.dropout == 0.5 for layer in model.layers)
    ids = held_out(TASKS["induction"], 2)[0]
    with torch.no_grad():
        traces = model.eval()(ids).traces
        assert_close(traces[0].heads, traces[0].weights @ traces[0].k)
        assert_close(traces[0].weights, plain(ids).traces[0].weights)


def test_model_dropout_draws_from_the_generator():
    model = build_model(TASKS["reverse"], 0, dropout=0.5)
    ids = held_out(TASKS["reverse"], 2)[0]
    with torch.no_grad():
        first = model(ids, generator=torch.Generator().manual_seed(1)).logits
        again = model(ids, generator=torch.Generator().manual_seed(1)).logits
        other = model(ids, generator=torch.Generator().manual_seed(2)).logits
        evaluated = model.eval()(ids).logits
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert_close(evaluated, build_model(TASKS["reverse"], 0).eval()(ids).logits)


@pytest.mark.parametrize("pair", [(1, 1), (2, 0), (-1, 0), ("0", 0), (0,)])
def test_model_rejects_bad_ablation(pair):
    with pytest.raises(ValueError, match="ablate"):
        build_model(TASKS["induction"], 0)(torch.zeros(1, 3, dtype=torch.long), {pair})


# --- diagnostics on hand-made patterns -------------------------------------------------------


def test_diagnostics_perfect_and_uniform_patterns():
    ids = torch.tensor([[1, 2, 3, 4]])
    allowed = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    perfect = torch.eye(4, 4).roll(-1, dims=1).tril()  # row i -> i - 1 (row 0 -> nothing)
    perfect[0, 0] = 1.0
    uniform = allowed / allowed.sum(-1, keepdim=True)
    reference = previous_token_reference(ids)
    assert_close(row_score(perfect[None, None], reference, allowed), torch.tensor([1.0]))
    # rows 1..3 put 1/2, 1/3, 1/4 on the previous token; row 0 has no choice and is left out
    expected = torch.tensor([(1 / 2 + 1 / 3 + 1 / 4) / 3])
    assert_close(row_score(uniform[None, None], reference, allowed), expected)


def test_diagnostics_induction_and_max_references():
    ids = torch.tensor([[0, 5, 6, 7, 5, 6, 7]])
    reference = induction_reference(ids)[0]
    assert reference.nonzero().tolist() == [[4, 2], [5, 3], [6, 4]]
    largest = max_token_reference(torch.tensor([[2, 9, 1, 9]]), causal=True)[0]
    assert largest.nonzero().tolist() == [[0, 0], [1, 1], [2, 1], [3, 1], [3, 3]]


def test_diagnostics_repeated_probe_repeats_a_distinct_segment():
    task = TASKS["induction"]
    probe = repeated_probe(task, 3, torch.Generator().manual_seed(0))
    half = (task.seq_len - 1) // 2
    assert torch.equal(probe[:, 1 : 1 + half], probe[:, 1 + half : 1 + 2 * half])
    assert all(len(set(row[1 : 1 + half].tolist())) == half for row in probe)


# --- shipped checkpoints and training --------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return {name: load(name) for name in TASKS}


@pytest.mark.parametrize("name", TASKS)
def test_checkpoint_is_small_and_meets_accuracy(shipped, name):
    assert checkpoint_path(name).stat().st_size < 100_000
    assert evaluate(shipped[name].model, shipped[name].task) >= 0.95


@pytest.mark.parametrize("name", TASKS)
def test_checkpoint_named_head_forms_and_was_not_there_at_init(shipped, name):
    run = shipped[name]
    score, threshold = NAMED_HEAD[name]
    trained = best(head_reports(run.model, run.task), score)
    initial = best(head_reports(build_model(run.task, run.seed), run.task), score)
    assert trained.row_scores[score] >= threshold, trained
    assert initial.row_scores[score] < 0.5, initial
    assert trained.label.startswith(score.split("_")[0].replace("max", "largest"))


@pytest.mark.parametrize("name", TASKS)
def test_checkpoint_named_head_transformerlens_score_nears_its_ceiling(shipped, name):
    run = shipped[name]
    score, _ = NAMED_HEAD[name]
    trained = best_detector(head_reports(run.model, run.task), score)
    initial = best_detector(head_reports(build_model(run.task, run.seed), run.task), score)
    assert detector_share(trained, score) >= DETECTOR_SHARE, trained
    assert detector_share(initial, score) < 0.5, initial


def test_prediction_counts_the_right_answers_among_the_positions_that_count():
    """Issue 54, item 3: lesson 6 counted these in its view."""
    prediction = Prediction(
        ids=torch.tensor([5, 6, 7, 8]),
        targets=torch.tensor([1, 0, 3, 0]),
        scored=torch.tensor([False, True, True, True]),
        predicted=torch.tensor([1, 2, 3, 4]),  # right at 0 (not counted) and 2
        weights=(),
    )
    assert (prediction.right, prediction.counted) == (1, 3)
    unmarked = replace(prediction, targets=None, scored=None)
    assert (unmarked.right, unmarked.counted) == (None, None)


@pytest.mark.parametrize(
    "name, shown",
    [("previous_token", "9 of 9, 1,440"), ("reverse", "8 of 8, 1,408"),
     ("running_max", "10 of 10, 1,504"), ("induction", "6 of 6, 10,304")],
)  # fmt: skip
def test_prediction_on_the_example_and_the_parameters_are_what_lesson_6_showed(
    shipped, name, shown
):
    run = shipped[name]
    _, targets, scored = run.task.generate(1, torch.Generator().manual_seed(EXAMPLE_SEED))
    prediction = predict(run.model, run.history.example, targets[0], scored[0])
    right = int(((prediction.predicted == targets[0]) & scored[0]).sum())
    assert prediction.right == right and prediction.counted == int(scored[0].sum())
    assert f"{right} of {prediction.counted}, {run.model.n_parameters:,}" == shown
    assert run.model.n_parameters == sum(p.numel() for p in run.model.parameters())


def test_checkpoint_history_has_snapshots_from_noise_to_structure(shipped):
    history = shipped["induction"].history
    assert 20 <= len(history.snapshot_steps) <= 40 and int(history.snapshot_steps[0]) == 0
    assert [w.shape[1:] for w in history.snapshots] == [(2, 24, 24), (1, 24, 24)]
    assert history.loss[-1] < history.loss[0] / 4 and history.accuracy[-1] > 0.9


def test_checkpoint_induction_generalises_over_lengths_and_places(shipped):
    run = shipped["induction"]
    ids, targets, scored = held_out(run.task, 2048)
    with torch.no_grad():
        right = run.model(ids).logits.argmax(-1) == targets
    lengths = scored.sum(1) + 1
    starts = scored.float().argmax(1)
    for length in lengths.unique().tolist():
        rows = lengths == length
        assert right[rows][scored[rows]].float().mean() >= 0.9, f"segment length {length}"
    for late in (False, True):
        rows = (starts >= run.task.seq_len // 2 + 3) == late
        assert right[rows][scored[rows]].float().mean() >= 0.9, f"late copy {late}"


def test_checkpoint_ablating_the_induction_head_breaks_copying(shipped):
    run = shipped["induction"]
    reports = head_reports(run.model, run.task)
    induction = best(reports, "induction")
    previous = best([r for r in reports if r.layer == 0], "previous_token")
    unrelated = next(r for r in reports if r.layer == 0 and r.head != previous.head)
    accuracy = evaluate(run.model, run.task)
    assert accuracy - evaluate(run.model, run.task, ablate={(1, induction.head)}) >= 0.3
    assert accuracy - evaluate(run.model, run.task, ablate={(0, unrelated.head)}) < 0.1


@pytest.mark.parametrize("name", TASKS)
def test_train_from_scratch_meets_the_thresholds(name):
    calls = []
    run = train(name, seed=1, on_step=lambda step, steps: calls.append((step, steps)))
    assert calls[-1] == (run.task.size.steps, run.task.size.steps) and len(calls) == calls[-1][0]
    assert evaluate(run.model, run.task) >= 0.95
    score, threshold = NAMED_HEAD[name]
    reports = head_reports(run.model, run.task)
    assert best(reports, score).row_scores[score] >= threshold
    assert detector_share(best_detector(reports, score), score) >= DETECTOR_SHARE


def test_train_through_other_steps_is_deterministic_and_different():
    steps = replace(PLAIN, choose_scale=lambda d_head, d_model: 1.0)
    a = train("reverse", seed=5, steps=5, attention_steps=steps, dropout=0.1,
              generator=torch.Generator().manual_seed(0))  # fmt: skip
    b = train("reverse", seed=5, steps=5, attention_steps=steps, dropout=0.1,
              generator=torch.Generator().manual_seed(0))  # fmt: skip
    plain = train("reverse", seed=5, steps=5)
    assert all(layer.steps is steps for layer in a.model.layers)
    assert torch.equal(a.history.loss, b.history.loss)
    assert not torch.equal(a.history.loss, plain.history.loss)


def test_train_is_deterministic_for_a_seed():
    a, b = train("reverse", seed=5, steps=20), train("reverse", seed=5, steps=20)
    c = train("reverse", seed=6, steps=20)
    b_state = b.model.state_dict()
    for name, p in a.model.state_dict().items():
        assert torch.equal(p, b_state[name]), name
    assert not torch.equal(a.model.embed.weight, c.model.embed.weight)


@pytest.mark.parametrize(
    "kwargs", [{"name": "sorting"}, {"name": "reverse", "seed": -1},
               {"name": "reverse", "steps": 0}, {"name": "reverse", "seed": 1.5}],
)  # fmt: skip
def test_train_rejects_bad_arguments(kwargs):
    name = kwargs.pop("name")
    with pytest.raises(ValueError):
        train(name, **kwargs)


def test_load_unknown_task_says_which_exist():
    with pytest.raises(ValueError, match="previous_token"):
        load("sorting")


@pytest.mark.parametrize("name", ["reverse", "induction"])  # one layer; two layers of 2 heads
def test_adam_updates_every_parameter_as_pytorchs_adam_does_bit_for_bit(name):
    """attention.tiny.adam.Adam, which `train` uses (making a torch.optim.Adam imports
    the compiler: 72 MiB), against torch.optim.Adam: two copies of one model, the same batches, 30
    steps; every parameter equal to the last bit after each step."""
    task = get_task(name)
    ours, theirs = build_model(task, seed=3), build_model(task, seed=3)
    optimisers = (Adam(ours.parameters(), lr=task.size.lr),
                  torch.optim.Adam(theirs.parameters(), lr=task.size.lr))  # fmt: skip
    data = data_stream(3)
    for step in range(30):
        ids, targets, scored = task.generate(task.size.batch, data)
        for model, optimiser in zip((ours, theirs), optimisers, strict=True):
            loss = scored_loss(model(ids).logits, targets, scored)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        for (key, a), b in zip(
            ours.state_dict().items(), theirs.state_dict().values(), strict=True
        ):
            assert torch.equal(a, b), (step, key)
    assert not torch.equal(ours.embed.weight, build_model(task, seed=3).embed.weight)  # it moved


def test_adam_rejects_no_parameters_and_a_rate_that_is_not_positive():
    with pytest.raises(ValueError, match="at least one"):
        Adam([], lr=0.01)
    with pytest.raises(ValueError, match="lr"):
        Adam([torch.zeros(1, requires_grad=True)], lr=0.0)
