"""Lesson 6's blocks: a trained tiny transformer's task, heads, training replay, probe,
knock-outs, and the same heads before training."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st
import torch

from attention.drills import Drill
from attention.tiny import TASKS, Prediction, TrainedRun, predict
from attention.tiny.diagnostics import (
    KNOCKOUT_SHARE,
    LABEL_THRESHOLD,
    SCORES,
    HeadReport,
    LayerKnockout,
)
from attention.tiny.questions import what_heads_learn_questions
from dashboard import controls, state, trained
from dashboard.controls import SEED_RANGE, Settings
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import show_chart, show_once
from dashboard.render.layout import natural_width, wrapping_row
from dashboard.render.matrices import digest, text_width, weights_view
from dashboard.render.presenter import Section
from dashboard.spec import LessonSpec
from dashboard.text import plain, unique_labels


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
        default=layout.remember_default("learn", names[0]),
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
    with st.container(horizontal=True, gap="large"):  # wraps rather than cutting a label
        st.metric("vocabulary", len(task.vocab), width="content")
        st.metric("T (tokens)", task.seq_len, width="content")
        st.metric("d_model", size.d_model, width="content")
        st.metric("heads per layer", " + ".join(map(str, size.heads)), width="content")
        accuracy = f"{trained.accuracy(task.name, run.seed):.1%}"
        st.metric("held-out accuracy", accuracy, width="content")
    st.caption(
        f"{'Causal' if task.causal else 'Bidirectional'} attention-only transformer, "
        f"{run.model.n_parameters:,} parameters, trained for "
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
    """Positions as columns for short sequences; as rows for long ones, so none is hidden.
    Marshalled once for every session, keyed on the task and the numbers it shows."""
    p = prediction
    given = (p.targets is not None, p.scored is not None)  # digest counts None as nothing
    key = ("prediction", run.task.name, given, digest(p.ids, p.targets, p.scored, p.predicted))
    show_once(key, lambda dg: draw_prediction(dg, prediction_frame(run, prediction)))
    if prediction.counted is not None:
        st.caption(
            f"{prediction.right} of {prediction.counted} positions that count are right; a dot "
            "marks a position with no answer to predict."
        )


def draw_prediction(dg, frame: pd.DataFrame) -> None:
    """The prediction table, in `dg`."""
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
        dg.dataframe(frame, column_config=config, width=natural_width(config, frame.shape[1]))
    else:
        dg.dataframe(frame.T.rename_axis("position"), height=36 * (frame.shape[1] + 1) + 3)


def example_prediction(run: TrainedRun, ablate=()) -> Prediction:
    """The trained run (shipped or retrained) on the task's fixed example, heads in `ablate`
    knocked out: one forward per run and choice, shared by every session (asked five times a
    rerun). A run the server no longer keeps under its seed (a retrained one, evicted) is run
    uncached: the key must name the run it holds."""
    if trained.run_for(run.task.name, run.seed) is not run:
        return run_on_example(run, tuple(ablate))
    return cached_prediction(run.task.name, run.seed, tuple(ablate), _run=run)


@state.cached
def cached_prediction(name: str, seed: int, ablate: tuple, _run: TrainedRun) -> Prediction:
    return run_on_example(_run, ablate)


def run_on_example(run: TrainedRun, ablate: tuple) -> Prediction:
    targets, scored = trained.example_targets(run.task.name)
    return predict(run.model, run.history.example, targets, scored, ablate)


def blocked_cells(run: TrainedRun, labels: list[str]) -> torch.Tensor | None:
    """The cells a query may not attend to in this model (None when it sees every key)."""
    return run.model.blocked(len(labels))


def show_patterns(
    run: TrainedRun,
    weights: tuple[torch.Tensor, ...],
    labels: list[str],
    captions=None,
    screen: tuple[int, int] | None = None,
) -> None:
    """Every head's weights on one sequence, heatmaps in a row that wraps: as many a line as
    the page has room for, each square map keeping its cells; on a projector's `screen`, four
    a line at most, all sized to fit it."""
    heads = [(layer, head) for layer, w in enumerate(weights) for head in range(w.shape[0])]
    blocked = blocked_cells(run, labels)
    per_row = min(len(heads), 4)
    lines = -(-len(heads) // per_row)
    row = wrapping_row() if screen is None else st.container(horizontal=True, gap="small")
    for layer, head in heads:
        title = head_title(layer, head)
        view = weights_view(weights[layer][head], labels, title, blocked)
        with row.container(width="content", gap=None if screen else "small"):
            if screen is None:
                show_heatmap(view, note=view.picture)  # no placeholder: see show_column_patterns
            else:
                blocks.show_fitted(view, title, screen[0] // per_row - 16, screen[1] // lines)
            if captions:
                st.caption(captions[(layer, head)])


def score_name(name: str) -> str:
    return name.replace("_", "-").replace("max-token", "largest-token")


def report_caption(report: HeadReport) -> str:
    """The label, and its kind's two scores (ours, then TransformerLens's); a head with no
    clear role shows its best row score."""
    kind = report.kind or max(report.row_scores, key=report.row_scores.get)
    scores = f"{score_name(kind)} {report.row_scores[kind]:.2f} · TL {report.scores[kind]:.2f}"
    return f"**{report.label}**  \n{scores}"  # two short lines: no wider than the map above


TWO_DECIMALS = st.column_config.NumberColumn(format="%.2f")
SCORE_COLUMNS = ("ours (rows with a reference)", "TransformerLens", "TransformerLens at best")


def scores_frame(reports: list[HeadReport]) -> pd.DataFrame:
    """Every head's two scores for every kind, and the best TransformerLens score possible."""
    rows = []
    for r in reports:
        for name, kind in SCORES.items():
            values = (r.row_scores[name], r.scores[name], r.ceilings[name])
            rows.append({"head": head_title(r.layer, r.head), "kind of head": kind}
                        | dict(zip(SCORE_COLUMNS, values, strict=True)))  # fmt: skip
    return pd.DataFrame(rows)


def scores_sentence(reports: list[HeadReport]) -> str:
    """What the two scores compute, with this model's own numbers: its labelled head with the
    highest row score."""
    named = [r for r in reports if r.kind is not None]
    if not named:
        return f"No head of this model reaches a row score of {LABEL_THRESHOLD} for any kind."
    r = max(named, key=lambda r: r.row_scores[r.kind])
    kind = score_name(r.kind)
    return (
        f"Here {head_title(r.layer, r.head)}, the {r.label}, scores "
        f"**{r.row_scores[r.kind]:.2f}** by ours and **{r.scores[r.kind]:.2f}** by "
        f"TransformerLens's: {r.ceilings[r.kind]:.0%} of the query rows have a {kind} "
        f"reference, so a perfect head would score {r.ceilings[r.kind]:.2f} there."
    )


def labels_of(run: TrainedRun, ids: torch.Tensor) -> list[str]:
    return unique_labels([f"{i}:{t}" for i, t in enumerate(run.task.decode(ids))])


def show_gallery(run: TrainedRun, screen: tuple[int, int] | None = None) -> None:
    """Every head of every layer on the fixed example, with its scores and label (on a
    projector's `screen`, the maps alone)."""
    reports = {(r.layer, r.head): r for r in trained.reports(run.task.name, run.seed)}
    prediction = example_prediction(run)
    captions = {key: report_caption(report) for key, report in reports.items()}
    show_patterns(
        run,
        prediction.weights,
        labels_of(run, prediction.ids),
        captions if screen is None else None,
        screen,
    )
    if screen is not None:
        return
    with layout.going_further("how the scores are measured, ours and TransformerLens's") as further:
        if further.open:
            st.markdown(
                "Each kind of head has a reference pattern: where that kind of head attends (the "
                "previous token, the first, the token after an earlier copy, ...). "
                "**TransformerLens's** score (TL, its head detector `detect_head` with its "
                "defaults, error measure `mul`) is the attention a head puts on the reference "
                "divided by all its attention, over every query row, so rows with nothing to find "
                "count as 0. **Ours**, which labels the head (when it reaches "
                f"{LABEL_THRESHOLD}), averages the same attention over only the rows that have a "
                "reference and more than one key to choose from. "
                + scores_sentence(list(reports.values()))
            )
            st.caption(
                "Measured on 256 held-out sequences; the induction scores on a segment of "
                "distinct tokens repeated twice, then random filler: every token of the second "
                "copy has an earlier occurrence to find, and so does a filler token that repeats "
                "one of the segment's (the ceiling counts those rows too)."
            )
            st.dataframe(
                scores_frame(list(reports.values())),
                hide_index=True,
                column_config=dict.fromkeys(SCORE_COLUMNS, TWO_DECIMALS),
            )


def step_picker(run: TrainedRun) -> int:
    """A slider over the training snapshots, in the URL as learn_step: the snapshot's index."""
    steps = run.history.snapshot_steps.tolist()
    raw = controls.linked("learn_step")
    # a step this run did not snapshot (another task's) gives the last one
    step = st.select_slider(
        "Training step", steps, layout.remember_default("learn_step", steps[-1]),
        key="learn_step", bind="query-params",
        persist_state="session",
    )  # fmt: skip
    step = step if step in steps else steps[-1]
    controls.link_note(
        "learn_step", raw, step, "a step this run kept (" + ", ".join(map(str, steps)) + ")"
    )
    return steps.index(step)


def show_training_replay(run: TrainedRun, screen: tuple[int, int] | None = None) -> None:
    """A slider over the training snapshots: the heads at that step, and the curves (on a
    projector's `screen`, the heads alone)."""
    history = run.history
    index = step_picker(run)
    step = history.snapshot_steps.tolist()[index]
    weights = tuple(w[index] for w in history.snapshots)
    show_patterns(run, weights, labels_of(run, history.example), screen=screen)
    if screen is not None:
        return
    curves = trained.curves(run.task.name, run.seed)
    left, right = st.columns(2)
    for col, name in zip((left, right), ("loss", "accuracy"), strict=True):
        show_chart(  # the curve's rows picked only when the chart is new
            ("training_curve", run.task.name, run.seed, name, step),
            lambda name=name: charts.training_curve(
                curves[curves["curve"] == name], y=name,
                title=f"Training {name} (dashed: the step shown)", at_step=step,
            ),
            col,
        )  # fmt: skip


def show_retrain(run: TrainedRun) -> None:
    """Train the task again from scratch with another seed, shared by the class; a fragment, so
    the click starts training at once instead of redrawing the page above first."""
    retrain_controls(run.task.name, run.seed)


@st.fragment
def retrain_controls(name: str, seed_shown: int) -> None:
    """The seed, the button, and the training's progress beside the button."""
    left, middle, right = st.columns([1, 1.4, 1.6], vertical_alignment="bottom")
    with left:
        raw = controls.linked("learn_seed")
        seed = st.number_input(
            "Seed",
            *SEED_RANGE,
            layout.remember_default("learn_seed", 1),
            key="learn_seed",
            bind="query-params",
            persist_state="session",
        )
        controls.link_note(
            "learn_seed", raw, seed, f"a whole number from {SEED_RANGE[0]} to {SEED_RANGE[1]}"
        )
    pressed = middle.button(f"Train again with seed {seed}", icon=":material/replay:")
    progress = right.empty()  # the training's progress, beside the button
    room = trained.training_room()
    if pressed:
        if room.busy() and room.get(name, int(seed)) is None:
            st.info("Another training is running on this server; yours starts when it ends.")
        progress.progress(0.0, text="Starting the training…")
        room.train(name, int(seed), on_step=lambda step, steps: show_step(progress, step, steps))
        progress.progress(1.0, text="Trained: drawing the new model…")
        st.session_state[f"learn_seed_{name}"] = int(seed)
        st.rerun(scope="app")
    if seed_shown != trained.shipped(name).seed:
        st.caption(f"Showing the model you trained with seed {seed_shown}.")
        if st.button("Back to the shipped model", icon=":material/undo:"):
            st.session_state.pop(f"learn_seed_{name}", None)
            st.rerun(scope="app")


def show_step(progress, step: int, steps: int) -> None:
    """The progress bar at this training step: 10 updates a run, a few tenths of a second
    apart (each update costs the browser about 40 ms of CPU, on the cores training uses)."""
    if step % max(1, steps // 10) == 0 or step == steps:
        progress.progress(step / steps, text=f"Training: step {step} of {steps}")


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
    show_patterns(run, prediction.weights, labels_of(run, prediction.ids))


def show_knockout(run: TrainedRun, screen: tuple[int, int] | None = None) -> None:
    """Switch heads off: held-out accuracy, what each head's loss costs, and the example's
    prediction (on a projector's `screen`, the accuracy and the costs)."""
    name = run.task.name
    reports = {(r.layer, r.head): r for r in trained.reports(name, run.seed)}
    off = knockout_picker(run)
    ablate = tuple(sorted(off or ()))
    full = trained.accuracy(name, run.seed)
    now = trained.accuracy(name, run.seed, ablate)
    st.metric(
        "held-out accuracy",
        f"{now:.1%}",
        delta=f"{(now - full) * 100:+.1f} points" if ablate else None,
    )
    for knockout in trained.knockouts(name, run.seed):
        st.markdown(knockout_sentence(knockout, reports))
    if screen is None:
        show_prediction(run, example_prediction(run, ablate))


def knockout_picker(run: TrainedRun) -> list[tuple[int, int]]:
    """The heads switched off: a button per head, named with its role ("layer 1 · head 0
    (induction head)"), in the URL under learn_off as so named."""
    heads = head_names(run)
    reports = {(r.layer, r.head): r for r in trained.reports(run.task.name, run.seed)}
    raw = controls.linked("learn_off")

    def titled(h: tuple[int, int]) -> str:
        return f"{head_title(*h)} ({reports[h].label})"

    off = st.pills(
        "Heads switched off",
        heads,
        selection_mode="multi",
        default=layout.remember_default("learn_off", []),
        key="learn_off",
        # the link holds each head's label as shown: learn_off=layer 1 · head 0 (induction head)
        bind="query-params",
        persist_state="session",
        format_func=titled,
    )
    off = [h for h in off or () if h in heads]
    controls.link_note("learn_off", raw, [titled(h) for h in off], "heads of this model")
    return off


def points(costs) -> str:
    """'0.5 and 1.6 points', '0.5, 1.6 and 3.0 points'."""
    texts = [f"{cost:.1f}" for cost in costs]
    return (", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 1 else texts[0]) + " points"


def knockout_sentence(knockout: LayerKnockout, reports: dict) -> str:
    """Why knocking out one head of a layer costs what it does, chosen by the knock-out numbers
    (LayerKnockout.verdict) of each head alone and of the whole layer."""
    layer, costs = knockout.layer, knockout.alone_cost
    heads = [reports[(layer, h)] for h in range(len(costs))]
    two = len(costs) == 2
    alone = (
        f"knocking out each head of layer {layer} alone costs {points(costs)} of held-out "
        f"accuracy, {'both' if two else 'all of them'} together {knockout.whole_cost:.1f} points"
    )
    if knockout.verdict == "redundant":
        labels = {h.label for h in heads}
        job = (
            f"the heads learned the same job (each is a {heads[0].label})"
            if len(labels) == 1 and "no clear role" not in labels
            else "the heads overlap"
        )
        return (
            f"**Why one knock-out costs so little:** {alone}. No head alone costs even "
            f"{KNOCKOUT_SHARE:.0%} of what the layer costs: {job}, so "
            f"{'the other covers' if two else 'the others cover'} for it, and only switching "
            f"{'both' if two else 'all of them'} off shows what they do."
        )
    if knockout.verdict == "carried":
        carrier = max(range(len(costs)), key=costs.__getitem__)
        return (
            f"**One head carries layer {layer}:** {alone}. Head {carrier} "
            f"({heads[carrier].label}) does most of the work; the others barely matter alone."
        )
    if knockout.verdict == "shared":
        return (
            f"**The heads of layer {layer} share the work:** {alone}. Several heads each cost at "
            f"least {KNOCKOUT_SHARE:.0%} of what the layer costs: each is needed."
        )
    return f"**Layer {layer} is barely used:** {alone}."


def show_random_vs_trained(run: TrainedRun) -> None:
    """The same input through the same architecture before and after training."""
    ids = run.history.example
    labels = labels_of(run, ids)
    row = wrapping_row()
    with row.container(width="content"):
        st.markdown("**Before training** (the initial weights)")
        before = initial_prediction(
            run.task.name, run.seed, tuple(ids.flatten().tolist()), _ids=ids
        )
        show_column_patterns(run, before.weights, labels)
    with row.container(width="content"):
        st.markdown("**After training**")
        show_column_patterns(run, example_prediction(run).weights, labels)


@state.cached
def initial_prediction(name: str, seed: int, tokens: tuple, _ids: torch.Tensor) -> Prediction:
    """The architecture before training (its initial weights under `seed`) on `_ids` (whose
    `tokens` key it): built and run once for every session, not on every page's run (issue
    53: a twentieth of the server's CPU while sixty opened lesson 6)."""
    return predict(trained.initial(name, seed).model, _ids)


def show_column_patterns(
    run: TrainedRun, weights: tuple[torch.Tensor, ...], labels: list[str]
) -> None:
    blocked = blocked_cells(run, labels)
    for layer, w in enumerate(weights):
        for head in range(w.shape[0]):
            view = weights_view(w[head], labels, head_title(layer, head), blocked)
            # the picture note's placeholder keeps later elements in place when a slider turns
            # a map into a picture; here none can (a task's sequence, at most its seq_len
            # tokens, is far below IMAGE_CELLS): an element less a map (issue 53)
            show_heatmap(view, note=view.picture)


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


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 6: the answer, the head gallery, the training replay, the knock-out."""
    names = list(TASKS)
    name = st.session_state.get("learn") or st.query_params.get("learn") or names[0]
    run = current_run(name if name in names else names[0])
    prediction = example_prediction(run)
    return [
        Section("The task and the model's answer",
                partial(show_prediction, run, prediction),
                "Read one row aloud. Ask: what rule must the model have learned?", key="task"),
        Section("Head gallery", partial(show_gallery, run, blocks.SCREEN),
                "Point at the strongest diagonal. Ask: which head does the task need most?",
                key="gallery"),
        Section("Watch it learn", partial(show_training_replay, run, (blocks.SCREEN[0], 160)),
                "Slide from step 0. Ask: when does the pattern appear, and what does the loss do?",
                key="replay"),
        Section("Knock out heads", partial(show_knockout, run, blocks.SCREEN),
                "Switch off the head the class picked. Ask: was it the one that mattered?",
                key="knockout"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(run: TrainedRun) -> tuple[Drill, ...]:
    """The check-yourself questions on the run's layer 0, read on the task's example."""
    weights = example_prediction(run).weights[0]  # layer 0, (H, T, T)
    return what_heads_learn_questions(weights, run.seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions on the page's own model, the shipped run of its first
    task (its numbers are in the questions), whatever the sidebar (asking.py)."""
    return lesson_questions(trained.shipped(next(iter(TASKS))))


LESSON = LessonSpec(
    number=6,
    path="pages/what_heads_learn.py",
    title="6 · What heads learn",
    minutes=10,
    icon=":material/school:",
    summary="Tiny transformers trained on synthetic tasks: heads forming, probed and knocked out.",
    uses=(),
    objectives=(
        "predict which key an induction head attends to in a repeated sequence",
        "compute a head's previous-token score from its weights",
    ),
    recap=(
        "trained heads take on roles, previous-token and induction, that a score against a "
        "reference pattern measures and a knock-out confirms."
    ),
    params=("learn", "learn_step", "learn_seed", "learn_off"),
    sections=sections,
    class_questions=class_questions,
)
