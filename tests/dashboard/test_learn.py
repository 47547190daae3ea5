"""Lesson 6 (what heads learn) through AppTest, and the trained source in the other lessons."""

import threading
import time

import pytest
import torch
from conftest import as_read, no_exception, open_page, table
from torch.testing import assert_close

from attention.lm.training import SIZE
from attention.tiny import TASKS, evaluate, load, training
from dashboard import state, trained
from dashboard.controls import TRAINED_TASKS

PAGE = "pages/what_heads_learn.py"


def predictions(at) -> list:
    """The prediction tables shown (rows input, target, prediction; transposed back for long
    sequences, shown with positions as rows), in page order."""
    frames = [d.value for d in at.dataframe]
    frames = [f.T if list(f.columns[:1]) == ["input"] else f for f in frames]
    return [f for f in frames if list(f.index[:1]) == ["input"]]


REAL_MODEL_HEADS = SIZE.n_layers * SIZE.n_heads


def charts(at) -> int:
    return len(at.get("vega_lite_chart")) + len(at.get("arrow_vega_lite_chart"))


def test_learn_sidebar_task_list_agrees_with_the_package():
    assert {name: task.size.heads.__len__() for name, task in TASKS.items()} == TRAINED_TASKS


@pytest.mark.parametrize("name", TASKS)
def test_learn_every_task_draws_every_head_five_times(name):
    at = open_page(PAGE, learn=name)
    no_exception(at)
    assert not at.error and not at.warning, [e.value for e in (*at.error, *at.warning)]
    heads = sum(TASKS[name].size.heads)
    # gallery, training replay, probe, before and after training: one heatmap per head each;
    # plus the loss and accuracy curves, and the 8 heads of lesson 12's Shakespeare model
    assert charts(at) == 5 * heads + 2 + REAL_MODEL_HEADS
    assert at.title[0].value == "6 · What heads learn"


def test_learn_example_table_marks_scored_positions():
    at = open_page(PAGE, learn="previous_token")
    frame = predictions(at)[0]
    assert list(frame.index) == ["input", "target", "prediction"]
    assert frame.iloc[1, 0] == "·"  # the first token has nothing before it
    assert all(cell.endswith("✔") for cell in frame.iloc[2, 1:])
    assert list(frame.iloc[1, 1:]) == list(frame.iloc[0, :-1])


def test_learn_bad_task_in_link_falls_back_with_a_message():
    at = open_page(PAGE, learn="sorting")
    no_exception(at)
    assert any("not one of this lesson's" in w.value for w in at.warning)
    assert charts(at) == 5 * 2 + 2 + REAL_MODEL_HEADS


def test_learn_probe_reads_typed_tokens_and_refuses_unknown_ones():
    at = open_page(PAGE, learn="reverse")
    at.text_input(key="learn_probe_reverse").set_value("a b c d e f g h").run()
    no_exception(at)
    probe = predictions(at)[1]
    assert list(probe.loc["input"]) == list("abcdefgh")
    assert [cell.split()[0] for cell in probe.loc["prediction"]] == list("hgfedcba")
    at.text_input(key="learn_probe_reverse").set_value("a b **x** $y$").run()
    no_exception(at)
    assert any("not in this task's vocabulary" in as_read(e.value) for e in at.error)
    at.text_input(key="learn_probe_reverse").set_value("   ").run()
    assert any("empty" in e.value for e in at.error)


def test_learn_knocking_out_the_induction_head_drops_accuracy():
    at = open_page(PAGE, learn="induction")
    full = float(at.metric[-1].value.rstrip("%"))
    at.pills(key="learn_off").set_value([(1, 0)]).run()
    no_exception(at)
    cut = float(at.metric[-1].value.rstrip("%"))
    assert full >= 95 and full - cut >= 30, (full, cut)


def test_learn_replay_at_step_zero_shows_the_untrained_pattern():
    at = open_page(PAGE, learn="previous_token")
    key = "learn_step"
    at.select_slider(key=key).set_value(0).run()
    no_exception(at)
    run = load("previous_token")
    assert at.select_slider(key=key).value == 0
    assert int(run.history.snapshot_steps[0]) == 0


def test_learn_retrain_with_another_seed_shows_that_run():
    at = open_page(PAGE, learn="reverse")
    at.number_input(key="learn_seed").set_value(3).run()
    next(b for b in at.button if b.label.startswith("Train again")).click().run()
    no_exception(at)
    assert any("seed 3" in c.value for c in at.caption)
    assert at.session_state["learn_seed_reverse"] == 3


def test_learn_trained_source_step_by_step_shows_the_trained_layer():
    at = open_page("pages/step_by_step.py", src="trained", task="induction", layer="1")
    no_exception(at)
    assert not at.warning, [w.value for w in at.warning]
    run = load("induction")
    with torch.no_grad():
        out = run.model(run.history.example[None])
    weights = table(at.dataframe[7])
    expected = out.traces[1].weights[0, 0]  # (T, T) head 0 of layer 1: the induction head
    assert weights.shape == (24, 24)
    shown = torch.tensor([[number(v) for v in row] for row in weights.values.tolist()]).double()
    allowed = torch.tril(torch.ones(24, 24, dtype=torch.bool))
    assert_close(shown[allowed], expected[allowed].double(), atol=1e-4, rtol=0)
    assert (shown[~allowed] == 0).all()  # masked weights hold 0.0 (greyed on screen)


def number(cell) -> float:
    """A table cell as a number: printed text ('−0.1234', 'masked') or a float (NaN/None for a
    masked cell)."""
    if cell is None:
        return float("nan")
    if isinstance(cell, str):
        return float("nan") if "masked" in cell else float(cell.replace("−", "-"))
    return float(cell)


@pytest.mark.parametrize(
    ("params", "message"),
    [({"task": "sorting"}, "task=sorting"), ({"task": "reverse", "layer": "1"}, "layer=1")],
)
def test_learn_bad_trained_link_says_what_it_uses(params, message):
    at = open_page("pages/multi_head.py", src="trained", **params)
    no_exception(at)
    assert any(message in as_read(w.value) for w in at.warning)


def test_learn_training_room_trains_once_per_task_and_seed_and_one_at_a_time(monkeypatch):
    """A class pressing *Train again* together: one training per (task, seed), never two at
    once, every student gets the run."""
    running, most, calls = [0], [0], []
    lock = threading.Lock()

    def fake_train(name, *, seed, on_step):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            calls.append((name, seed))
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return (name, seed)

    monkeypatch.setattr(trained, "train", fake_train)
    monkeypatch.setattr(state, "POOL", state.Pool())  # the fake runs stay out of the server's
    room = trained.TrainingRoom()
    results = []
    students = [
        threading.Thread(target=lambda s=s: results.append(room.train("reverse", s % 2, print)))
        for s in range(12)
    ]
    for student in students:
        student.start()
    for student in students:
        student.join()
    assert sorted(calls) == [("reverse", 0), ("reverse", 1)]
    assert most[0] == 1
    assert sorted(results) == [("reverse", 0)] * 6 + [("reverse", 1)] * 6


def test_learn_missing_checkpoint_is_a_message_not_a_traceback(monkeypatch, tmp_path):
    trained.shipped.clear()
    monkeypatch.setattr(training, "CHECKPOINTS", tmp_path)
    try:
        at = open_page(PAGE, learn="reverse")
        no_exception(at)
        assert any("cannot be loaded" in e.value for e in at.error)
    finally:
        trained.shipped.clear()


def heatmap_cells(at) -> list[dict]:
    """Every heatmap's data (one row per cell: query, key, value, printed, masked), page order."""
    import pyarrow as pa

    elements = at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart")
    tables = [pa.ipc.open_stream(c.proto.data.data).read_all().to_pydict()
              for c in elements if c.proto.data.data]  # fmt: skip
    return [t for t in tables if "masked" in t]


@pytest.mark.parametrize("name", ["previous_token", "reverse"])
def test_learn_causal_heatmaps_mark_the_future_blocked(name):
    """Issue 17 item 9: a causal head's upper triangle is blocked (grey, crossed), not weight 0;
    a bidirectional head has no blocked cell."""
    at = open_page(PAGE, learn=name)
    no_exception(at)
    T = TASKS[name].seq_len
    future = torch.ones(T, T, dtype=torch.bool).triu(1).reshape(-1).tolist()
    cells = heatmap_cells(at)
    assert len(cells) == 5 * sum(TASKS[name].size.heads)
    for data in cells:
        expected = future if TASKS[name].causal else [False] * (T * T)
        assert data["masked"] == expected


def test_learn_gallery_shows_transformerlens_and_our_score_with_live_numbers():
    """Issue 17 item 4: the caption gives both scores; the expander says what each computes,
    with this model's numbers."""
    at = open_page(PAGE, learn="induction")
    no_exception(at)
    reports = {(r.layer, r.head): r for r in trained.reports("induction", 0)}
    induction = reports[(1, 0)]
    ours, tl = induction.row_scores["induction"], induction.scores["induction"]
    caption = f"**induction head**  \ninduction {ours:.2f} · TL {tl:.2f}"
    assert caption in [c.value for c in at.caption], [c.value for c in at.caption]
    prose = next(m.value for m in at.markdown if "TransformerLens's** score" in m.value)
    assert f"**{ours:.2f}** by ours and **{tl:.2f}** by TransformerLens's" in prose
    assert f"a perfect head would score {induction.ceilings['induction']:.2f}" in prose
    frame = next(d.value for d in at.dataframe if "TransformerLens at best" in d.value.columns)
    assert len(frame) == 3 * 6 and frame["TransformerLens"].max() <= 1


@pytest.mark.parametrize("name", ["previous_token", "reverse", "running_max"])
def test_learn_one_layer_knockout_sentence_says_why_one_head_barely_matters(name):
    """Issue 17 item 17: two redundant heads; the sentence is chosen by the knock-out numbers
    (each head alone, both) and gives them."""
    at = open_page(PAGE, learn=name)
    no_exception(at)
    run = load(name)
    full = evaluate(run.model, run.task)
    alone = [full - evaluate(run.model, run.task, ablate={(0, h)}) for h in (0, 1)]
    both = full - evaluate(run.model, run.task, ablate={(0, 0), (0, 1)})
    assert max(alone) < both / 2  # each head alone costs under half of what both cost
    sentence = next(m.value for m in at.markdown if "Why one knock-out" in m.value)
    assert f"{100 * alone[0]:.1f} and {100 * alone[1]:.1f} points" in sentence
    assert f"together {100 * both:.1f} points" in sentence
    label = trained.reports(name, 0)[0].label
    assert f"the same job (each is a {label})" in sentence


def test_learn_induction_knockout_sentence_names_the_head_that_carries_layer_0():
    at = open_page(PAGE, learn="induction")
    no_exception(at)
    run = load("induction")
    full = evaluate(run.model, run.task)
    alone = [full - evaluate(run.model, run.task, ablate={(0, h)}) for h in (0, 1)]
    carrier = max((0, 1), key=alone.__getitem__)
    sentence = next(m.value for m in at.markdown if "carries layer 0" in m.value)
    assert f"Head {carrier} (previous-token head) does most of the work" in sentence


@pytest.mark.parametrize("name", ["previous_token", "induction"])
def test_learn_before_training_is_the_initial_model_once_for_every_session(name):
    """Random vs trained: the "before" maps are the initial weights' (built under the run's
    seed) on the example, computed once and shared (they were rebuilt and run on every page's
    run); another seed has its own."""
    from attention.tiny import predict
    from dashboard.views.what_heads_learn import initial_prediction

    ids = load(name).history.example
    tokens = tuple(ids.flatten().tolist())
    for seed in (0, 3):
        fresh = predict(trained.initial(name, seed).model, ids).weights
        shared = initial_prediction(name, seed, tokens, _ids=ids)
        assert initial_prediction(name, seed, tokens, _ids=ids) is shared
        for got, want in zip(shared.weights, fresh, strict=True):
            assert_close(got, want)
    other = initial_prediction(name, 3, tokens, _ids=ids).weights[0]
    assert not torch.allclose(initial_prediction(name, 0, tokens, _ids=ids).weights[0], other)
    trained_weights = predict(load(name).model, ids).weights[0]
    assert not torch.allclose(initial_prediction(name, 0, tokens, _ids=ids).weights[0],
                              trained_weights)  # fmt: skip
