"""Lesson 6's blocks: a trained tiny transformer's task, heads, training replay, probe,
knock-outs, and the same heads before training."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from attention.tiny import TASKS, Prediction, TrainedRun, predict
from attention.tiny.diagnostics import SCORES, HeadReport
from dashboard import trained
from dashboard.render import charts
from dashboard.render.blocks import show_heatmap
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import matrix_view, text_width
from dashboard.render.tables import unique_labels
from dashboard.text import plain


def task_picker() -> str:
    """The task whose model the lesson shows (in the URL as `learn`)."""
    names = list(TASKS)
    if "learn" in st.session_state and st.session_state["learn"] not in names:
        del st.session_state["learn"]
    if st.query_params.get("learn", names[0]) not in names:
        st.warning("The link's task is not one of this lesson's: showing the first.")
        del st.query_params["learn"]
    choice = st.segmented_control(
        "Task",
        names,
        default=names[0],
        key="learn",
        bind="query-params",  # the URL holds the option itself: no format_func
        help="Each task trains its own tiny transformer.",
    )
    return choice or names[0]


def current_run(name: str) -> TrainedRun:
    """The shipped run, or the one this student retrained (kept while the server has it); the
    page stops with the reason if the checkpoint cannot be read."""
    seed = st.session_state.get(f"learn_seed_{name}", None)
    try:
        return trained.shipped(name) if seed is None else trained.run_for(name, int(seed))
    except (ValueError, OSError, RuntimeError) as error:
        st.error(plain(f"The trained model cannot be loaded: {error}"), icon=":material/error:")
        st.stop()


def head_names(run: TrainedRun) -> list[tuple[int, int]]:
    return [(layer, head) for layer, n in enumerate(run.model.heads) for head in range(n)]


def head_title(layer: int, head: int) -> str:
    return f"layer {layer} · head {head}"


def show_task(run: TrainedRun) -> None:
    """What the model must do, its size, and its accuracy."""
    task, size = run.task, run.task.size
    st.markdown(f"**{task.title}.** {task.description}")
    cols = st.columns(5)
    cols[0].metric("vocabulary", len(task.vocab))
    cols[1].metric("T (tokens)", task.seq_len)
    cols[2].metric("d_model", size.d_model)
    cols[3].metric("heads per layer", " + ".join(map(str, size.heads)))
    cols[4].metric("held-out accuracy", f"{trained.accuracy(task.name, run.seed):.1%}")
    st.caption(
        f"{'Causal' if task.causal else 'Bidirectional'} attention-only transformer, "
        f"{sum(p.numel() for p in run.model.parameters()):,} parameters, trained for "
        f"{size.steps} steps of {size.batch} random sequences (seed {run.seed}). Accuracy counts "
        "only the positions that have an answer."
    )


def prediction_frame(run: TrainedRun, prediction: Prediction) -> pd.DataFrame:
    """Input, target and prediction per position; ✔/✘ on the positions that count."""
    decode = run.task.decode
    inputs = decode(prediction.ids)
    guesses = decode(prediction.predicted)
    rows = {"input": inputs}
    if prediction.targets is not None:
        targets, scored = decode(prediction.targets), prediction.scored.tolist()
        rows["target"] = [t if s else "·" for t, s in zip(targets, scored, strict=True)]
        rows["prediction"] = [
            f"{g} {'✔' if g == t else '✘'}" if s else g
            for g, t, s in zip(guesses, targets, scored, strict=True)
        ]
    else:
        rows["prediction"] = guesses
    columns = [str(i) for i in range(len(inputs))]
    return pd.DataFrame(rows.values(), index=list(rows), columns=columns)


def show_prediction(run: TrainedRun, prediction: Prediction) -> None:
    """Positions as columns for short sequences; as rows for long ones, so none is hidden."""
    frame = prediction_frame(run, prediction)
    if frame.shape[1] <= 12:  # columns as narrow as their letters: all 12 fit at 150 % zoom
        config = {
            "_index": st.column_config.TextColumn(width=text_width(len("prediction"))),
            **{
                # ✔ and ✘ are about two letters wide
                column: st.column_config.TextColumn(
                    width=text_width(max(len(column), *map(len, frame[column])) + 1)
                )
                for column in frame.columns
            },
        }
        st.dataframe(frame, column_config=config, width=natural_width(config, frame.shape[1]))
    else:
        st.dataframe(frame.T.rename_axis("position"), height=36 * (frame.shape[1] + 1) + 3)
    if prediction.scored is not None:
        scored = prediction.scored
        right = int(((prediction.predicted == prediction.targets) & scored).sum())
        st.caption(
            f"{right} of {int(scored.sum())} positions that count are right; a dot marks a "
            "position with no answer to predict."
        )


def example_prediction(run: TrainedRun, ablate=()) -> Prediction:
    ids = run.history.example
    targets, scored = trained.example_targets(run.task.name)
    return predict(run.model, ids, targets, scored, ablate)


def weights_view(weights: torch.Tensor, labels: list[str], title: str):
    return matrix_view(
        tuple(labels),
        tuple(labels),
        _matrix=weights,
        kind="weight",
        row_title="query",
        col_title="key",
        title=title,
    )


def show_patterns(weights: tuple[torch.Tensor, ...], labels: list[str], captions=None) -> None:
    """Every head's weights on one sequence, heatmaps in a row that wraps: as many a line as
    the page has room for, each square map keeping its cells."""
    heads = [(layer, head) for layer, w in enumerate(weights) for head in range(w.shape[0])]
    row = wrapping_row()
    for layer, head in heads:
        with row.container(width="content"):
            view = weights_view(weights[layer][head], labels, head_title(layer, head))
            show_heatmap(view)
            if captions:
                st.caption(captions[(layer, head)])


def report_caption(report: HeadReport) -> str:
    top = sorted(report.scores.items(), key=lambda item: -item[1])[:3]
    scores = ", ".join(f"{name.replace('_', '-')} {value:.2f}" for name, value in top)
    return f"**{report.label}**  \n{scores}"  # two short lines: no wider than the map above


def labels_of(run: TrainedRun, ids: torch.Tensor) -> list[str]:
    return unique_labels([f"{i}:{t}" for i, t in enumerate(run.task.decode(ids))])


def show_gallery(run: TrainedRun) -> None:
    """Every head of every layer on the fixed example, with its scores and label."""
    reports = {(r.layer, r.head): r for r in trained.reports(run.task.name, run.seed)}
    prediction = example_prediction(run)
    show_patterns(
        prediction.weights,
        labels_of(run, prediction.ids),
        {key: report_caption(report) for key, report in reports.items()},
    )
    with st.expander("How the scores are measured"):
        st.markdown(
            "A head's score for a kind of head is the attention it puts where that kind of head "
            "attends, averaged over query rows (as TransformerLens's head detector does). "
            "Rows with only one allowed key are left out. Scores are measured on 256 held-out "
            "sequences; the induction score on a random segment repeated twice. A head is "
            f"labelled by its best score when that reaches {0.5}."
        )
        st.dataframe(
            pd.DataFrame([{"score": name, "head kind": kind} for name, kind in SCORES.items()]),
            hide_index=True,
        )


def show_training_replay(run: TrainedRun) -> None:
    """A slider over the training snapshots: the heads at that step, and the curves."""
    history = run.history
    steps = history.snapshot_steps.tolist()
    key = f"learn_step_{run.task.name}_{run.seed}"
    if st.session_state.get(key) not in steps:
        st.session_state[key] = steps[-1]
    step = st.select_slider("Training step", steps, key=key, persist_state="session")
    index = steps.index(step)
    weights = tuple(w[index] for w in history.snapshots)
    show_patterns(weights, labels_of(run, history.example))
    curves = trained.curves(run.task.name, run.seed)
    left, right = st.columns(2)
    for col, name in zip((left, right), ("loss", "accuracy"), strict=True):
        frame = curves[curves["curve"] == name]
        chart = charts.training_curve(
            frame, y=name, title=f"Training {name} (dashed: the step shown)", at_step=step
        )
        col.altair_chart(chart, width="stretch")


def show_retrain(run: TrainedRun) -> None:
    """Train the task again from scratch with another seed, shared by the class."""
    name = run.task.name
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    seed = left.number_input(
        "Seed", 0, 99_999, 1, key=f"learn_seed_pick_{name}", persist_state="session"
    )
    pressed = right.button(f"Train again with seed {seed}", icon=":material/replay:")
    room = trained.training_room()
    if pressed:
        if room.busy() and room.get(name, int(seed)) is None:
            st.info("Another training is running on this server; yours starts when it ends.")
        bar = st.progress(0.0, text="Training…")
        room.train(
            name,
            int(seed),
            on_step=lambda step, steps: (
                bar.progress(step / steps, text=f"Training… step {step} of {steps}")
                if step % 25 == 0 or step == steps
                else None
            ),
        )
        bar.empty()
        st.session_state[f"learn_seed_{name}"] = int(seed)
        st.rerun()
    if run.seed != trained.shipped(name).seed:
        st.caption(f"Showing the model you trained with seed {run.seed}.")
        if st.button("Back to the shipped model", icon=":material/undo:"):
            st.session_state.pop(f"learn_seed_{name}", None)
            st.rerun()


def probe_tokens(run: TrainedRun) -> list[str] | None:
    """The sequence the student typed, as tokens, or None with a message shown."""
    task = run.task
    default = " ".join(task.decode(run.history.example))
    key = f"learn_probe_{task.name}"
    text = st.text_input(
        "Your sequence (tokens separated by spaces)",
        default,
        key=key,
        max_chars=400,
        persist_state="session",
        help=f"Tokens: {' '.join(task.vocab)}",
    )
    tokens = text.split()
    try:
        task.encode(tokens)
    except ValueError as error:
        st.error(plain(f"{error}."), icon=":material/error:")  # it echoes the typed tokens
        return None
    return tokens


def show_probe(run: TrainedRun) -> None:
    tokens = probe_tokens(run)
    if tokens is None:
        return
    prediction = trained.probe(run.task.name, run.seed, tuple(tokens))
    show_prediction(run, prediction)
    if prediction.targets is None:
        st.caption(
            "The induction task marks no answers on a typed sequence: repeat a segment "
            "and check that the prediction inside the second copy is the next token."
        )
    show_patterns(
        prediction.weights,
        labels_of(run, prediction.ids),
    )


def show_knockout(run: TrainedRun) -> None:
    """Switch heads off: held-out accuracy and the example's prediction change."""
    name = run.task.name
    heads = head_names(run)
    reports = {(r.layer, r.head): r for r in trained.reports(name, run.seed)}
    off = st.pills(
        "Heads switched off",
        heads,
        selection_mode="multi",
        key=f"learn_off_{name}",
        persist_state="session",
        format_func=lambda h: f"{head_title(*h)} ({reports[h].label})",
    )
    ablate = tuple(sorted(off or ()))
    full = trained.accuracy(name, run.seed)
    now = trained.accuracy(name, run.seed, ablate)
    st.metric(
        "held-out accuracy",
        f"{now:.1%}",
        delta=f"{(now - full) * 100:+.1f} points" if ablate else None,
    )
    show_prediction(run, example_prediction(run, ablate))


def show_random_vs_trained(run: TrainedRun) -> None:
    """The same input through the same architecture before and after training."""
    before = trained.initial(run.task.name, run.seed)
    ids = run.history.example
    labels = labels_of(run, ids)
    row = wrapping_row()
    with row.container(width="content"):
        st.markdown("**Before training** (the initial weights)")
        show_column_patterns(predict(before.model, ids).weights, labels)
    with row.container(width="content"):
        st.markdown("**After training**")
        show_column_patterns(example_prediction(run).weights, labels)


def show_column_patterns(weights: tuple[torch.Tensor, ...], labels: list[str]) -> None:
    for layer, w in enumerate(weights):
        for head in range(w.shape[0]):
            show_heatmap(weights_view(w[head], labels, head_title(layer, head)))


def show_other_lessons(run: TrainedRun) -> None:
    """Links that open the other lessons on this trained model's layers."""
    name = run.task.name
    cols = st.columns(run.model.n_layers * 2)
    for layer in range(run.model.n_layers):
        params = {"src": "trained", "task": name, "layer": str(layer)}
        cols[2 * layer].page_link(
            "pages/step_by_step.py", label=f"Step by step, layer {layer}",
            icon=":material/footprint:", query_params=params,
        )  # fmt: skip
        cols[2 * layer + 1].page_link(
            "pages/multi_head.py", label=f"Multi-head, layer {layer}",
            icon=":material/view_column:", query_params=params,
        )  # fmt: skip
