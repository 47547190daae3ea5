"""Lesson 7's blocks: one bug explained, its stages beside the correct ones, the live checks, the
mystery bug, and the bugs that still train."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import partial
from urllib.parse import urlencode, urlparse

import pandas as pd
import streamlit as st
import torch

from attention.bugs import (
    BUGS,
    CHECKS,
    CORRECT,
    CURVE_TASKS,
    REACHED,
    SILENT_BUGS,
    Bug,
    CheckResult,
    Curve,
    differing_stages,
    load_curves,
    run_buggy,
    run_checks,
    source,
    source_diff,
    stage_difference,
)
from attention.bugs.questions import bug_hunt_questions
from attention.drills import Drill
from attention.trace import AttentionTrace
from dashboard import controls, lessons, state
from dashboard.classroom.asking import ClassQuestion
from dashboard.classroom.store import CHOICE_CHARS, MAX_CHOICES
from dashboard.controls import SEED_RANGE, Settings
from dashboard.lessons import Computed
from dashboard.links import shorten
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import show_once
from dashboard.render.layout import wrapping_row
from dashboard.render.matrices import (
    STAGE_BY_NAME,
    cached_stage_view,
    matrix_view,
    stage_matrix,
    stage_view,
)
from dashboard.render.presenter import Section, presenter_theme
from dashboard.spec import LessonSpec
from dashboard.text import plain

MODES = {"explore": "Explore a bug", "mystery": "Mystery bug"}
SHOWN_ALWAYS = "output"  # every bug's last affected stage; the first one is picked


@dataclass(frozen=True, eq=False)
class BugRun:
    """One bug on one lesson's layer and input: its trace (or PyTorch's error)."""

    name: str
    trace: AttentionTrace | None
    error: str | None  # "RuntimeError: ..." for a loud bug
    stages: tuple[str, ...]  # the stages whose numbers the bug changed
    lesson: Computed | None  # the lesson with the buggy trace, for the stage views


def lesson_mask(lesson: Computed) -> str | None:
    return "causal" if lesson.settings.causal else None


@state.per_lesson  # a buggy trace is as large as the lesson's: bounded by bytes
def bug_run(lesson: Computed, name: str) -> BugRun:
    """The bug `name` on the lesson, one forward, computed once per setting."""
    layer, x, mask = lesson.layer, lesson.embedded.x, lesson_mask(lesson)
    generator = torch.Generator().manual_seed(lesson.settings.seed)
    try:
        with torch.inference_mode():
            trace = run_buggy(name, layer, x, mask, generator=generator)
    except RuntimeError as error:
        return BugRun(name, None, f"RuntimeError: {str(error).splitlines()[0]}", (), None)
    stages = differing_stages(trace, lesson.trace)
    buggy_lesson = replace(lesson, trace=trace, key=(*lesson.key, "bug", name))
    return BugRun(name, trace, None, stages, buggy_lesson)


@state.per_lesson  # a few numbers per bug and setting
def bug_checks(lesson: Computed, name: str | None) -> tuple[CheckResult, ...]:
    """The live checks with the bug `name` (None: the correct layer): a few more forwards."""
    layer, x, mask = lesson.layer, lesson.embedded.x, lesson_mask(lesson)
    with torch.inference_mode():
        return run_checks(name, layer, x, mask, seed=lesson.settings.seed)


def mystery_candidates(lesson: Computed) -> tuple[str, ...]:
    """The silent bugs that change the output at these settings (some need H > 1 or W_o)."""
    runs = [bug_run(lesson, name) for name in SILENT_BUGS]
    return tuple(run.name for run in runs if "output" in run.stages)


def mystery_bug(lesson: Computed, seed: int) -> str | None:
    """The bug a mystery number stands for at these settings (the same link, the same bug)."""
    candidates = mystery_candidates(lesson)
    return random.Random(seed).choice(candidates) if candidates else None


def check_link_params() -> None:
    """A message for this lesson's link parameters that cannot be used (Streamlit then falls
    back to the defaults); the values are shown as text, as the sidebar's link messages are."""
    params = st.query_params
    problems = []
    if "bug" in params and params["bug"] not in BUGS:
        problems.append(f"bug={shorten(params['bug'])} is not a bug of this lesson")
    if "mode" in params and params["mode"] not in MODES:
        problems.append(f"mode={shorten(params['mode'])} must be explore or mystery")
    if "mystery" in params:
        raw = params["mystery"]
        low, high = SEED_RANGE
        if not (raw.isdigit() and low <= int(raw) <= high):
            problems.append(f"mystery={shorten(raw)} is not a whole number from {low} to {high}")
    for problem in problems:
        st.warning(plain(problem + ": using the default."), icon=":material/link_off:")


def mode_picker() -> str:
    """Explore one bug, or diagnose a mystery one (in the URL, so a teacher can share it)."""
    # defaults only through the widgets' own arguments: a value put in the session first would
    # override the link's (bind="query-params")
    choice = st.segmented_control(
        "Mode",
        list(MODES),
        default=layout.remember_default("mode", "explore"),
        key="mode",
        bind="query-params",  # the link carries the option itself: mode=mystery
        help="Explore: pick a bug and see it break. Mystery: the page picks one; you diagnose it.",
    )
    return choice or "explore"


def bug_picker() -> str:
    names = list(BUGS)
    # the options are the package's names (a link reads bug=mask_inverted); titles follow below
    first = layout.remember_default("bug", names[0])
    return st.selectbox("Pick a bug", names, names.index(first), key="bug", bind="query-params")


def show_description(bug: Bug) -> None:
    """The layer's step against the student's as the diff of their sources (the code that runs),
    what it does, where it was seen."""
    st.markdown(
        f"**One step written wrong:** the layer's `{bug.replaces}` (`{bug.plain.__module__}`), "
        f"− its lines, + those of the student's `{bug.mistake.__name__}` "
        f"(`{bug.mistake.__module__}`), which runs in its place."
    )
    st.code(source_diff(bug), language="diff")
    st.markdown(f"**What it does.** {bug.symptom}")
    if bug.seen_in:
        links = ", ".join(f"[{report_name(url)}]({url})" for url in bug.seen_in)
        st.markdown(f"**Seen in** {links}.")
    else:
        st.markdown("**Seen in** no public report we could point to; it is a classic all the same.")


def report_name(url: str) -> str:
    """github.com/owner/repo/issues/12 -> owner/repo#12."""
    parts = urlparse(url).path.strip("/").split("/")
    return f"{parts[0]}/{parts[1]}#{parts[-1]}" if len(parts) >= 4 else url


def show_error(run: BugRun) -> None:
    """What PyTorch raised: the loud bug's whole output."""
    st.markdown(":red[**PyTorch raises**] (nothing is computed, so there is nothing to plot):")
    st.code(run.error, language=None, wrap_lines=True)


def reset_stage() -> str | None:
    """The stage Reset this lesson writes: the first that the first bug changes, the bug Reset
    returns to (None: that bug changes none before the output). The stage shown by default
    follows the bug; Reset from another bug kept that bug's first, which a fresh page does not
    show (tests/dashboard/test_lesson_urls.py)."""
    lesson = lessons.computed(controls.current_settings())
    stages = [s for s in bug_run(lesson, next(iter(BUGS))).stages if s != SHOWN_ALWAYS]
    return stages[0] if stages else None


def stage_picker(run: BugRun) -> str | None:
    """Which affected stage to show beside the output (the first one the bug changes)."""
    earlier = [s for s in run.stages if s != SHOWN_ALWAYS]
    if not earlier:
        return None
    raw = controls.linked("bug_stage")
    choice = st.segmented_control(
        "Affected stage shown",
        earlier,
        default=layout.remember_default("bug_stage", earlier[0], reset_to=reset_stage()),
        key="bug_stage",
        bind="query-params",  # the link holds the stage's title
        persist_state="session",
        format_func=lambda s: STAGE_BY_NAME[s].title,
        help="Every stage whose numbers the bug changes; the first is where it happens.",
    )
    stage = choice if choice in earlier else earlier[0]
    titles = ", ".join(STAGE_BY_NAME[s].title for s in earlier)
    controls.link_note(
        "bug_stage", raw, STAGE_BY_NAME[stage].title, f"a stage this bug changes ({titles})"
    )
    return stage


def show_side_by_side(
    lesson: Computed, run: BugRun, stage: str, head: int, screen: tuple[int, int] | None = None
) -> None:
    """One stage: with the bug, correct, and the difference, as heatmaps on the same rows. On a
    projector's `screen`, the first two sized to fit it, without numbers in the cells: the
    class says what differs before the difference is shown."""
    info = STAGE_BY_NAME[stage]
    head_note = f" (head {head})" if info.per_head and lesson.trace.n_heads > 1 else ""
    if screen is None:
        buggy, correct = stage_view(run.lesson, stage, head), stage_view(lesson, stage, head)
        shown = (("With the bug", buggy), ("Correct", correct))
        shown += (("Difference", difference_view(lesson, run, stage, head)),)
        st.markdown(f"#### {info.title}{head_note}  \nShape {correct.shape}")
        row = wrapping_row(gap="small")  # three 6 x 6 maps fit one line at 1280 x 720
    else:
        present = presenter_theme()
        buggy = cached_stage_view(run.lesson, stage, head, None, False, present)
        correct = cached_stage_view(lesson, stage, head, None, False, present)
        shown = (("With the bug", buggy), ("Correct", correct))
        row = st.container(horizontal=True, gap="small")
    for words, view in shown:
        with row.container(width="content", gap=None if screen else "small"):
            name = f"{info.title}, {words.lower()}"
            if screen is None:
                st.markdown(f"**{words}**")
                show_heatmap(view, name)
            else:
                st.markdown(f"**{words}**: {info.title.lower()}{head_note}")
                blocks.show_fitted(view, name, screen[0] // 2 - 16, screen[1])


def difference_view(lesson: Computed, run: BugRun, stage: str, head: int):
    """buggy − correct for one stage of one head (attention.bugs.stage_difference); cells where
    it means nothing (a masked −∞ on either side) are shown as masked."""
    _, rows, cols, row_title, col_title = stage_matrix(lesson, stage, head)
    diff, unusable = stage_difference(run.trace, lesson.trace, stage, head)
    return matrix_view(
        tuple(rows),
        tuple(cols),
        _matrix=diff,
        _blocked=unusable,
        kind="score",
        row_title=row_title,
        col_title=col_title,
        legend="bug − correct",
    )


def show_checks(lesson: Computed, name: str) -> None:
    """The live checks on the correct layer and with the bug; red where the bug breaks them."""
    bug = BUGS[name]
    # a static table wraps its cells, so all three columns fit any width (a grid of 400 + 200 +
    # 200 px hid "with the bug" behind a scroll bar at 150 % zoom); marshalled once for every
    # session (the Styler was a quarter of the page's first run)
    show_once(
        ("bug_checks", lesson.key, name),
        lambda dg: dg.table(
            checks_table(bug_checks(lesson, None), bug_checks(lesson, name)), hide_index=True
        ),
    )
    st.markdown(f"**Caught by** {bug.caught_by} The test that would have caught it:")
    st.code(source(bug.test), language="python")


def checks_table(correct: tuple[CheckResult, ...], buggy: tuple[CheckResult, ...]):
    """The checks side by side, a broken one in red (a styled table). st.table renders its cells
    as markdown: every cell is plain text (an exception's message may hold anything)."""
    frame = pd.DataFrame(
        [
            {
                "check": plain(CHECKS[good.key]),
                "correct layer": plain(cell(good)),
                "with the bug": plain(cell(bad)),
            }
            for good, bad in zip(correct, buggy, strict=True)
        ]
    )
    red = "color: #d62728; font-weight: bold"
    return frame.style.set_uuid("bug_checks").map(
        lambda text: red if text.startswith("✘") else "", subset=frame.columns[1:]
    )


def cell(result: CheckResult) -> str:
    if result.passed is None:
        return f"– {result.detail}"
    return f"{'✔' if result.passed else '✘'} {result.detail}"


def mark(result: CheckResult) -> str:
    if result.passed is None:
        return f"– ({result.detail})"
    if result.passed:
        return f":green[✔] {result.detail}"
    return f":red[**✘ {result.detail}**]"


def show_failing_checks(lesson: Computed, name: str) -> None:
    """The checks the mystery bug fails, in red, and the ones it passes (clues either way)."""
    lines = []
    for result in bug_checks(lesson, name):
        if result.key == "raises" or result.passed is None:
            continue
        words = f"{CHECKS[result.key]} ({result.detail})"
        lines.append(f":green[✔] {words}" if result.passed else f":red[**✘ {words}**]")
    st.markdown("  \n".join(lines))


def show_unchanged(lesson: Computed) -> None:
    s = lesson.settings
    st.info(
        f"At these settings (H = {s.n_heads}, causal mask {'on' if s.causal else 'off'}) this bug "
        "changes nothing: the line is wrong all the same. Try more heads or the causal mask in "
        "the sidebar.",
        icon=":material/info:",
    )


def record_guess(seed: int, guess: str, truth: str) -> bool:
    """Remember the first diagnosis per mystery number in this session; True when right."""
    answers = st.session_state.setdefault("mystery_answers", {})
    answers.setdefault(seed, guess == truth)
    return guess == truth


def mystery_score() -> tuple[int, int]:
    answers = st.session_state.get("mystery_answers", {})
    return sum(answers.values()), len(answers)


def next_mystery() -> None:
    """Button callback: the next mystery number (wraps at the top of the range)."""
    low, high = SEED_RANGE
    current = st.session_state.get("mystery", low)
    st.session_state["mystery"] = low if current >= high else current + 1


def mystery_seed() -> int:
    low, high = SEED_RANGE
    return int(
        st.number_input(
            "Mystery number",
            low,
            high,
            layout.remember_default("mystery", low),
            key="mystery",
            bind="query-params",
            help="The same number and sidebar settings give the same bug: share the link.",
        )
    )


def show_guess(lesson: Computed, seed: int, truth: str, candidates: tuple[str, ...]) -> None:
    """The student's diagnosis from a list, then right or wrong with the explanation."""
    options = [name for name in SILENT_BUGS if name in candidates]
    guess = st.radio(
        "Which bug is it?",
        options,
        index=None,
        key=f"guess_{seed}",
        persist_state="session",
        format_func=lambda name: BUGS[name].title,
    )
    if not st.button("Check my diagnosis", key=f"check_{seed}", disabled=guess is None):
        return
    bug = BUGS[truth]
    if record_guess(seed, guess, truth):
        st.success(f"Right: {bug.title}.", icon=":material/check_circle:")
    else:
        st.error(f"Not this one: it was {bug.title}.", icon=":material/cancel:")
    show_description(bug)


def curve_frame(curves: dict[tuple[str, str], Curve], task: str, bug: str) -> pd.DataFrame:
    rows = []
    for name, label in ((CORRECT, "correct layer"), (bug, BUGS[bug].title)):
        curve = curves[task, name]
        for step, loss, accuracy in zip(curve.steps, curve.loss, curve.accuracy, strict=True):
            rows.append({"step": step, "loss": loss, "accuracy": accuracy, "layer": label})
    return pd.DataFrame(rows)


@state.cached(keep=True)  # read once per server
def shipped_curves() -> dict[tuple[str, str], Curve]:
    return load_curves()


@state.cached(keep=True)  # two specs per task and bug, built once per server
def curve_charts(task: str, bug: str) -> tuple[dict, dict]:
    """The accuracy and loss charts of one bug against the correct layer (built once)."""
    frame = curve_frame(shipped_curves(), task, bug)
    accuracy = charts.lines(frame, x="step", y="accuracy", group="layer", title="Batch accuracy")
    loss = charts.lines(frame, x="step", y="loss", group="layer", title="Training loss")
    return charts.to_spec(accuracy), charts.to_spec(loss)


def verdict(curve: Curve, correct: Curve) -> str:
    if curve.held_out < correct.held_out - 0.02:
        return "learns worse"
    if curve.reached is not None and correct.reached is not None:
        if curve.reached < 0.5 * correct.reached:
            return "suspiciously fast: it sees the future"
        if curve.reached > 1.2 * correct.reached:
            return "learns slower"
    return "about the same"


def show_training(bug_name: str, screen: tuple[int, int] | None = None) -> None:
    """The bug trained on a tiny task beside the correct layer, and every bug's result. On a
    projector's `screen`, the loss curves and the verdict, on the task the page's control set
    (in the link)."""
    curves = shipped_curves()
    if screen is None:
        raw = controls.linked("bug_task")
        task = st.segmented_control(
            "Task", CURVE_TASKS, default=layout.remember_default("bug_task", CURVE_TASKS[0]),
            key="bug_task", bind="query-params",
            persist_state="session",
        )  # fmt: skip
        task = task if task in CURVE_TASKS else CURVE_TASKS[0]
        controls.link_note("bug_task", raw, task, "one of " + ", ".join(CURVE_TASKS))
    else:
        task = controls.lesson_value("bug_task", CURVE_TASKS, CURVE_TASKS[0])
    name = bug_name if bug_name in SILENT_BUGS else "softmax_over_queries"
    if name != bug_name:
        st.caption("This bug raises, so it cannot train; shown instead: " + BUGS[name].title + ".")
    correct, buggy = curves[task, CORRECT], curves[task, name]
    accuracy, loss = curve_charts(task, name)
    if screen is None:  # each marshalled once for every session
        left, right = st.columns(2)
        show_once(("bug_accuracy", task, name),
                  lambda dg: dg.vega_lite_chart(accuracy, width="stretch"), left)  # fmt: skip
        show_once(("bug_loss", task, name),
                  lambda dg: dg.vega_lite_chart(loss, width="stretch"), right)  # fmt: skip
    else:
        st.vega_lite_chart(loss | {"height": screen[1] - 80}, width="stretch")
    st.markdown(
        f"Held-out accuracy ({task}): correct layer **{correct.held_out:.3f}**, with the bug "
        f"**{buggy.held_out:.3f}** ({verdict(buggy, correct)})."
    )
    if screen is not None:
        return
    with st.expander(f"Every silent bug on {task}"):
        show_once(("bug_every", task),
                  lambda dg: dg.dataframe(every_bug(task), hide_index=True))  # fmt: skip


def every_bug(task: str) -> pd.DataFrame:
    """Every silent bug's held-out accuracy, steps to REACHED and verdict on `task`, under the
    correct layer's."""
    curves = shipped_curves()
    correct = curves[task, CORRECT]
    table = pd.DataFrame(
        [
            {
                "bug": BUGS[b].title,
                "held-out accuracy": f"{curves[task, b].held_out:.3f}",
                f"steps to {REACHED:.0%} batch accuracy": reached_text(curves[task, b]),
                "verdict": verdict(curves[task, b], correct),
            }
            for b in SILENT_BUGS
        ]
    )
    correct_row = {
        "bug": "(none: the correct layer)",
        "held-out accuracy": f"{correct.held_out:.3f}",
        f"steps to {REACHED:.0%} batch accuracy": reached_text(correct),
        "verdict": "",
    }
    return pd.concat([pd.DataFrame([correct_row]), table], ignore_index=True)


def reached_text(curve: Curve) -> str:
    return "never" if curve.reached is None else str(curve.reached)


# --- presenter mode (?present=1): one section a screen ---------------------------------


SHOWN_BUGS = ("softmax_over_queries", "mask_inverted")  # one silent, one on the mask


def bug_section(lesson: Computed, name: str) -> Section:
    bug = BUGS[name]

    def draw() -> None:
        st.caption(f"**What it does.** {bug.symptom}")
        show_side_by_side(lesson, bug_run(lesson, name), "weights", 0, (blocks.SCREEN[0], 250))

    return Section(bug.title, draw, "Ask before showing the difference: which check fails?",
                   key=name)  # fmt: skip


def sections() -> list[Section]:
    """Lesson 7: two classic bugs side by side with the correct layer, and one that trains."""
    lesson = blocks.current_lesson()
    return [
        *(bug_section(lesson, name) for name in SHOWN_BUGS),
        Section("Bugs that still train", partial(show_training, SHOWN_BUGS[0], blocks.SCREEN),
                "The loss falls either way. Ask: how would you notice this bug in a real run?",
                key="still_train"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(lesson: Computed) -> tuple[Drill, ...]:
    """The check-yourself questions: a weight through two of the classic bugs."""
    return bug_hunt_questions(lesson.trace, lesson.labels, lesson.settings.seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(lessons.computed_at(s))


def class_extras(
    settings: Settings, asked: int, query: dict[str, str]
) -> tuple[ClassQuestion, ...]:
    """Class mode's mystery (dashboard/classroom/teacher.py): the mystery numbered by how many
    questions the class has been asked, at these settings: which of the silent bugs that change
    the output is it? Sent with the mystery's page, so the class sees what to diagnose.
    ValueError where these settings give no mystery with two bugs to choose from."""
    lesson = lessons.computed(settings)
    if lesson.trace is None:
        raise ValueError(lesson.error or "These settings give the bug hunt nothing to compute.")
    candidates = mystery_candidates(lesson)
    truth = mystery_bug(lesson, asked)
    if truth is None or len(candidates) < 2:
        raise ValueError("At these settings no mystery has two bugs to choose from.")
    titles = tuple(BUGS[name].title[:CHOICE_CHARS] for name in candidates)[:MAX_CHOICES]
    bug = BUGS[truth]
    link = urlencode({**query, "mode": "mystery", "mystery": str(asked)})
    return (
        ClassQuestion(
            label=f"7 · Bug hunt, mystery {asked}: which bug is this?",
            prompt=f"7 · Bug hunt, mystery {asked}: look at the mystery on your screen (the "
            "checks that fail, the weights and the output). Which bug is this?",
            choices=titles,
            answer=bug.title[:CHOICE_CHARS],
            working=(f"It was {bug.title}.", bug.symptom, f"Caught by: {bug.caught_by}"),
            view=f"/bug_hunt?{link}",
        ),
    )


LESSON = LessonSpec(
    number=7,
    path="pages/bug_hunt.py",
    title="7 · Bug hunt",
    minutes=8,
    icon=":material/bug_report:",
    summary=(
        "The classic from-scratch mistakes, shown breaking and training; diagnose a mystery bug."
    ),
    objectives=(
        "compute what a weight becomes when the 1/√d_k is forgotten",
        "compute a weight through a broken mask, and say which step the bug changed",
    ),
    recap=(
        "each classic mistake is one wrong step; most raise nothing, so a check has to catch them."
    ),
    params=("bug", "mode", "mystery", "bug_stage", "bug_head", "bug_task"),
    sections=sections,
    class_questions=class_questions,
    class_extras=class_extras,
)
