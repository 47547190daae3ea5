"""Each lesson's sections for presenter mode (?present=1): its natural steps, one per screen,
each drawn by the lesson's own view functions, with a note for the teacher.

A page hands its function to `presenter.present`, which calls it only in presenter mode.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from attention import STAGES, as_additive, as_blocked
from attention.bugs import BUGS
from attention.explain import allowed_matrix, largest_magnitude
from dashboard import controls, lessons, trained
from dashboard.lessons import Lesson
from dashboard.render import blocks, charts, layout, tables
from dashboard.render.matrices import STAGE_BY_NAME, StageView, cached_stage_view, stage_view
from dashboard.render.presenter import Section, presenter_theme
from dashboard.views import (
    at_scale,
    bug_hunt,
    drills,
    kv_cache,
    masking,
    position,
    what_heads_learn,
    why_sqrt_dk,
    worked_example,
)

STAGE_NOTES = {
    "x": "Point at one row: one token's vector. Ask: what changes for a longer sentence?",
    "q": "Each row is what a token is looking for. Ask: why does every head get its own W_q?",
    "k": "Each row is what a token offers to be found by. Ask: could K equal Q here?",
    "v": "Each row is what a token hands over once chosen. Ask: why a third projection, V?",
    "scores": "Point at row i, column j: q_i · k_j. Ask: which key does the first query like most?",
    "scaled": "Same pattern, smaller numbers. Ask: what would the softmax do with the raw ones?",
    "masked": "The crossed cells are the future. Ask: why must token 2 not see token 3?",
    "weights": "Every row sums to 1. Ask: which token does the last query attend to, and why?",
    "heads": "A weighted average of V's rows. Ask: which row of V dominates the first output?",
    "concat": "The heads side by side again. Ask: what shape comes back, and why that one?",
    "output": "W_o mixes what the heads found. Ask: what is lost if we drop W_o?",
}


def current_lesson(settings: controls.Settings | None = None) -> Lesson:
    """The lesson of the sidebar's settings (stops the page with the reason if there is none)."""
    lesson = lessons.lesson(settings or controls.current_settings())
    blocks.require_lesson(lesson)
    return lesson


def stage_section(lesson: Lesson, name: str, head: int = 0, numbers: bool = False) -> Section:
    stage = STAGE_BY_NAME[name]
    draw = partial(show_stage_compact, lesson, name, head, numbers=numbers)
    return Section(stage.title, draw, STAGE_NOTES[name])


def show_stage_compact(
    lesson: Lesson, name: str, head: int = 0, numbers: bool = False, spare: int = 0
) -> None:
    """A stage on one screen: its formula and shape on one line, the heatmap (the numbers in
    its cells when the matrix is small: matrices.stage_view), one sentence. No table beside
    it: both do not fit a projector's 853 x 480."""
    view = stage_view(lesson, name, head, numbers=numbers)
    head_note = f" (head {head})" if view.stage.per_head and lesson.trace.n_heads > 1 else ""
    st.markdown(f"${view.stage.formula}$ &emsp; Shape **{view.shape}**{head_note}.")
    # the rows' height: what the formula (a two-line case split) and sentence leave
    budget = charts.MAX_HEIGHT_PRESENT - spare - 40 * ("\\" in view.stage.formula)
    budget -= 24 * (len(view.stage.explain) > 70)
    rows = view.values.shape[0]
    step = charts.snap(min(view.spec["height"]["step"], budget // rows)) or charts.STEPS[-1]
    spec = view.spec | {"height": {"step": step}, "description": f"{view.name}: {view.grid}"}
    fixed = layout.fixed_size(view)
    st.vega_lite_chart(view.cells, spec, width="content" if fixed else "stretch")
    if blocks.is_picture(view):
        st.caption(blocks.PICTURE_NOTE)
    st.markdown(view.stage.explain)


SCREEN = (630, 300)  # CSS px a section's charts may fill on 683 x 512 and 853 x 480
AXES = (150, 70)  # px of a small heatmap's axes and legend beside and above its cells


def show_fitted(view: StageView, name: str, width: int, height: int) -> None:
    """A heatmap whose square cells are sized to fit width x height px (axes included)."""
    rows, cols = view.values.shape
    # presenter-styled maps have their legend beside; the others' legend and turned labels
    # take more height
    present = (
        view.spec.get("config", {}).get("axis", {}).get("labelFontSize") == charts.PRESENT_FONT
    )
    tall = AXES[1] if present else 180
    step = max(charts.STEPS[-1], min((width - AXES[0]) // cols, (height - tall) // rows, 34))
    spec = view.spec | {"description": f"{name}: {view.grid}"}
    if layout.fixed_size(view):
        spec = charts.refit_labels(spec | {"width": {"step": step}, "height": {"step": step}}, step)
    st.vega_lite_chart(view.cells, spec, width="content" if layout.fixed_size(view) else "stretch")


def show_heads_fitted(lesson: Lesson, name: str) -> None:
    """Every head's heatmap on one shared colour scale, without numbers, all on one screen."""
    trace = lesson.trace
    stage = STAGE_BY_NAME[name]
    bound = largest_magnitude(trace, name)
    domain = None if stage.kind == "weight" else (-bound, bound)
    H = trace.n_heads
    per_row = min(H, 4)
    lines = -(-H // per_row)
    width, height = SCREEN[0] // per_row - 16, SCREEN[1] // lines - 24
    present = presenter_theme()
    row = st.container(horizontal=True, gap="small")
    for head in range(H):
        view = cached_stage_view(lesson.key, name, head, domain, False, present, _lesson=lesson)
        with row.container(width="content", gap=None):
            st.markdown(f"**head {head}**")
            show_fitted(view, f"{view.name}, head {head}", width, height)


def show_split_compact(lesson: Lesson) -> None:
    """Which columns belong to which head, as one line, and Q with every head side by side."""
    trace = lesson.trace
    H, d_head = trace.n_heads, trace.d_head
    parts = [f"head {h}: d{h * d_head} … d{(h + 1) * d_head - 1}" for h in range(H)]
    st.markdown(f"C = {H * d_head} columns, d_k = {d_head} per head. " + "; ".join(parts) + ".")
    show_stage_compact(lesson, "q", spare=48)


def show_shape_summary_compact(lesson: Lesson) -> None:
    """Every stage's named and actual shape, in rows low enough for one screen."""
    rows = [
        {
            "stage": s.title,
            "shape": f"({', '.join(s.dims)}) = {tuple(lesson.trace.stage(s.name).shape)}",
        }
        for s in STAGES
    ]
    # the header is taller than a 28 px row: sized as one row, the last row hid behind a scroll
    st.dataframe(
        pd.DataFrame(rows), hide_index=True, row_height=28, height=tables.grid_height(len(rows), 28)
    )


def step_by_step_sections() -> list[Section]:
    """Lesson 1: the stages, X to the layer's output."""
    lesson = current_lesson()
    head = controls.lesson_value("head", range(lesson.trace.n_heads), 0)
    return [stage_section(lesson, stage.name, head) for stage in STAGES]


def multi_head_sections() -> list[Section]:
    """Lesson 2: the split, every head's scores and weights, the merge, every shape."""
    lesson = current_lesson()
    return [
        Section("Splitting C columns into H heads", partial(show_split_compact, lesson),
                "Point at the column ranges. Ask: how many columns does each head get?"),
        Section("Scaled scores per head", partial(show_heads_fitted, lesson, "scaled"),
                "One colour scale for all heads. Ask: do two heads look at the same keys?"),
        Section("Attention weights per head", partial(show_heads_fitted, lesson, "weights"),
                "Ask: which head is most focused, and which spreads its weight?"),
        stage_section(lesson, "concat"),
        stage_section(lesson, "output"),
        Section("Every shape at a glance", partial(show_shape_summary_compact, lesson),
                "Cover the shape column. Ask: what is the shape of the scores?"),
    ]  # fmt: skip


def masking_sections() -> list[Section]:
    """Lesson 3: one mask in three conventions, the mask at work, a fully masked row."""
    settings = controls.current_settings()
    T = len(current_lesson(settings).labels)
    n_padding = controls.lesson_value("pad", range(T), 0)
    padded = lessons.lesson(settings, lessons.Variant(n_padding=n_padding))
    empty = {"n_padding": n_padding, "empty_last_row": True}
    with_inf = lessons.lesson(settings, lessons.Variant(**empty, mask_value=float("-inf")))
    with_big = lessons.lesson(settings, lessons.Variant(**empty, mask_value=-1e9))
    return [
        Section("One mask, three conventions", partial(show_mask_conventions_compact, padded),
                "Point at one cell in all three. Ask: what goes wrong if you pass the wrong one?"),
        stage_section(padded, "masked"),
        stage_section(padded, "weights"),
        Section("−∞ or −1e9? A fully masked row",
                partial(masking.show_fill_comparison, with_inf, with_big),
                "Every key of the last query is blocked. Ask: which row would you rather debug?"),
    ]  # fmt: skip


def show_variance_formula() -> None:
    st.latex(
        r"\operatorname{Var}(q \cdot k) = d_k \qquad "
        r"\operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1"
    )
    st.markdown("q, k with independent entries of mean 0 and variance 1: d_k products, summed.")


def why_sqrt_dk_sections(d_ks: tuple[int, ...], pairs: int, keys: int) -> list[Section]:
    """Lesson 4: the variance of q·k grows with d_k; large scores saturate the softmax."""
    seed = controls.current_settings().seed
    d_k = controls.lesson_value("dk", why_sqrt_dk.D_K_OPTIONS, why_sqrt_dk.D_K_DEFAULT)
    tau = controls.lesson_value("tau", why_sqrt_dk.TAU_OPTIONS, why_sqrt_dk.TAU_DEFAULT)
    return [
        Section("Var(q · k) = d_k", show_variance_formula,
                "Ask: if each product has variance 1, what is the variance of a sum of d_k?"),
        Section("Dot products grow with d_k", partial(show_variance_compact, d_ks, pairs, seed),
                "Point at the widths of the raw histograms. Ask: what is Var(q·k) at d_k = 64?"),
        Section(f"Large scores saturate the softmax (d_k = {d_k})",
                partial(show_saturation_compact, keys, d_k, tau, seed),
                "Compare the unscaled bars with the scaled. Ask: what happens to the gradient?"),
    ]  # fmt: skip


def worked_example_sections() -> list[Section]:
    """Lesson 5: the classic example's steps, every number in its cell."""
    causal = controls.current_settings().causal
    lesson = current_lesson(controls.Settings(source="worked", causal=causal))
    names = ["x", "q", "k", "v", "scores", "scaled", "masked", "weights", "heads"]
    weights = Section("The weights (fixed by the seed)",
                      partial(worked_example.show_weight_matrices, lesson),
                      "torch.manual_seed fixes them. Ask: which one turns X into Q?")  # fmt: skip
    stages = [stage_section(lesson, name, numbers=True) for name in names]
    return [stages[0], weights, *stages[1:]]


def what_heads_learn_sections() -> list[Section]:
    """Lesson 6: the answer, the head gallery, the training replay, the knock-out."""
    names = list(what_heads_learn.TASKS)
    name = st.session_state.get("learn") or st.query_params.get("learn") or names[0]
    run = what_heads_learn.current_run(name if name in names else names[0])
    prediction = what_heads_learn.example_prediction(run)
    return [
        Section("The task and the model's answer",
                partial(what_heads_learn.show_prediction, run, prediction),
                "Read one row aloud. Ask: what rule must the model have learned?"),
        Section("Head gallery", partial(show_gallery_compact, run),
                "Point at the strongest diagonal. Ask: which head does the task need most?"),
        Section("Watch it learn", partial(show_replay_compact, run),
                "Slide from step 0. Ask: when does the pattern appear, and what does the loss do?"),
        Section("Knock out heads", partial(show_knockout_compact, run),
                "Switch off the head the class picked. Ask: was it the one that mattered?"),
    ]  # fmt: skip


SHOWN_BUGS = ("softmax_over_queries", "mask_inverted")  # one silent, one on the mask


def bug_section(lesson: Lesson, name: str) -> Section:
    bug = BUGS[name]

    def draw() -> None:
        run = bug_hunt.bug_run(lesson.key, name, _lesson=lesson)
        st.caption(f"**What it does.** {bug.symptom}")
        present = presenter_theme()
        row = st.container(horizontal=True, gap="small")
        for words, shown in (("With the bug", run.lesson), ("Correct", lesson)):
            view = cached_stage_view(shown.key, "weights", 0, None, False, present, _lesson=shown)
            with row.container(width="content", gap=None):
                st.markdown(f"**{words}**: attention weights, head 0")
                show_fitted(view, f"Attention weights, {words.lower()}", SCREEN[0] // 2 - 16, 250)

    return Section(bug.title, draw, "Ask before showing the difference: which check fails?")


def bug_hunt_sections() -> list[Section]:
    """Lesson 7: two classic bugs side by side with the correct layer, and one that trains."""
    lesson = current_lesson()
    return [
        *(bug_section(lesson, name) for name in SHOWN_BUGS),
        Section("Bugs that still train", partial(show_bug_training, SHOWN_BUGS[0]),
                "The loss falls either way. Ask: how would you notice this bug in a real run?"),
    ]  # fmt: skip


def drills_sections() -> list[Section]:
    """Lesson 8: each drill of the current exercise set."""
    lesson = current_lesson()
    low, high = controls.SEED_RANGE
    number = controls.lesson_value("drill_set", range(low, high + 1), low)
    shown = drills.drills(lesson.key, number, _lesson=lesson)
    key = (lesson.key, number)
    return [
        Section(f"Drill {index}", partial(show_drill_compact, index, drill, key),
                "Give the class a minute with pencil and paper, then type the best answer.")
        for index, drill in enumerate(shown, start=1)
    ]  # fmt: skip


def position_sections() -> list[Section]:
    """Lesson 9: order blindness, sinusoidal positions, RoPE."""
    settings = controls.current_settings()
    lesson = current_lesson(settings)
    return [
        Section("Shuffle the tokens", partial(show_permutation_compact, lesson, settings.seed),
                "Point at the matching rows. Ask: so where could word order come from?"),
        Section("Under the sidebar's mask",
                partial(show_mask_shuffle_compact, lesson, settings.seed),
                "Ask: why does the causal mask make the shuffled outputs differ?"),
        Section("Sinusoidal positions, added to X", partial(show_sinusoidal_compact, lesson),
                "Point at the fast and the slow columns. Ask: why several frequencies?"),
        Section("RoPE: rotate q and k", partial(show_rope_compact, lesson),
                "Ask: why does a score now depend only on how far apart two tokens are?"),
    ]  # fmt: skip


def kv_cache_sections() -> list[Section]:
    """Lesson 10: decode steps, work per step, grouped-query and sliding-window caches."""
    settings = controls.Settings(**{**controls.current_settings().__dict__, "causal": True})
    lesson = current_lesson(settings)
    T = len(lesson.labels)
    first, last = 0, T - 1
    return [
        Section(f"Decode step {first}", partial(show_cache_compact, lesson, first),
                "The first token: a one-row cache. Ask: what does the query attend to?"),
        Section(f"Decode step {last}", partial(show_cache_compact, lesson, last),
                "The last token: the whole cache. Ask: what was computed at this step only?"),
        Section("Work and memory per step", partial(show_work_compact, lesson),
                "Ask: how does the work per token grow with and without the cache?"),
        Section("Grouped-query attention", partial(show_grouped_compact, lesson, last),
                "Ask: how much smaller is the cache with one K/V head per group?"),
        Section("Sliding-window attention", partial(show_window_compact, lesson, last),
                "Ask: what can the last token no longer see, and what did we save?"),
    ]  # fmt: skip


def at_scale_sections() -> list[Section]:
    """Lesson 11: the cost of T², then FlashAttention's tiles."""
    lesson = current_lesson()
    return [
        Section("The cost of T², measured", show_cost_compact,
                "Point at the slope of the naive line. Ask: what does doubling T cost?"),
        Section("FlashAttention, tile by tile", partial(show_tiling_compact, lesson),
                "Step one tile. Ask: why must O be rescaled when the running max grows?"),
        Section("One tile's memory against T × T", partial(show_tile_memory, lesson),
                "Ask: how large may T grow before the full matrix no longer fits?"),
    ]  # fmt: skip


def block_sizes(lesson: Lesson) -> tuple[int, int]:
    """The page's query and key block sizes B_r, B_c (1..T, by default 2)."""
    T = len(lesson.labels)
    sizes = range(1, T + 1)
    return tuple(controls.lesson_value(key, sizes, min(2, T)) for key in ("block_q", "block_k"))


def show_tile_memory(lesson: Lesson) -> None:
    """The bytes one tile's scores and weights take against the full T × T, as tiled."""
    block_q, block_k = block_sizes(lesson)
    T = len(lesson.labels)
    result, _ = at_scale.tiles(lesson.key, block_q, block_k, lesson.settings.causal,
                               _lesson=lesson)  # fmt: skip
    st.metric("One tile's scores and weights", f"{result.tile_bytes:,} bytes")
    st.metric(f"The full {T} × {T} scores and weights", f"{result.full_bytes:,} bytes")


def show_bug_training(bug_name: str) -> None:
    """The bug's training loss beside the correct layer's, on the lesson's task, one sentence."""
    task = controls.lesson_value("bug_task", bug_hunt.CURVE_TASKS, bug_hunt.CURVE_TASKS[0])
    curves = bug_hunt.shipped_curves()
    correct, buggy = curves[task, bug_hunt.CORRECT], curves[task, bug_name]
    _, loss = bug_hunt.curve_charts(task, bug_name)
    st.vega_lite_chart(loss | {"height": 220}, width="stretch")
    st.markdown(
        f"Held-out accuracy ({task}): correct **{correct.held_out:.3f}**, with the bug "
        f"**{buggy.held_out:.3f}** ({bug_hunt.verdict(buggy, correct)})."
    )


def show_patterns_fitted(run, weights, labels, height: int = SCREEN[1]) -> None:
    """Every head's weights on one sequence, sized so all of them fit one screen."""
    heads = [(layer, head) for layer, w in enumerate(weights) for head in range(w.shape[0])]
    blocked = what_heads_learn.blocked_cells(run, labels)
    per_row = min(len(heads), 4)
    lines = -(-len(heads) // per_row)
    width, height = SCREEN[0] // per_row - 16, height // lines
    row = st.container(horizontal=True, gap="small")
    for layer, head in heads:
        title = what_heads_learn.head_title(layer, head)
        view = what_heads_learn.weights_view(weights[layer][head], labels, title, blocked)
        with row.container(width="content", gap=None):
            show_fitted(view, title, width, height)


def show_gallery_compact(run) -> None:
    prediction = what_heads_learn.example_prediction(run)
    labels = what_heads_learn.labels_of(run, prediction.ids)
    show_patterns_fitted(run, prediction.weights, labels)


def show_mask_conventions_compact(lesson: Lesson) -> None:
    """The same mask written three ways, as three small blocks of text side by side."""
    allowed = allowed_matrix(lesson.trace, 0)
    additive = [["0" if v == 0 else "−∞" for v in row] for row in as_additive(allowed).tolist()]
    conventions = (
        ("True = may attend", "PyTorch SDPA", masking.mask_text(allowed, short=True)),
        (
            "True = blocked",
            "nn.MultiheadAttention",
            masking.mask_text(as_blocked(allowed), short=True),
        ),
        ("Additive float", "Hugging Face", additive),
    )
    row = st.container(horizontal=True, gap="small")
    for title, used_by, values in conventions:
        width = max(len(str(v)) for line in values for v in line)
        text = "\n".join(" ".join(str(v).rjust(width) for v in line) for line in values)
        with row.container(width=max(9 * len(text.split("\n")[0]) + 48, 180), gap=None):
            st.markdown(f"**{title}**  \n{used_by}")
            st.code(text, language=None)
    st.markdown("One mask, three spellings: pass the one your function expects.")


def show_variance_compact(d_ks: tuple[int, ...], n: int, seed: int) -> None:
    """The raw and the scaled histograms side by side, one sentence."""
    long, _ = why_sqrt_dk.variance_frames(d_ks, n, seed)
    raw, scaled = st.columns(2)
    for column, x, title in (
        (raw, "q·k", "q·k (raw)"),
        (scaled, "q·k / √d_k", "q·k / √d_k (scaled)"),
    ):
        chart = charts.histogram(long[x], x=x, group="d_k", title=title).properties(height=220)
        column.altair_chart(chart, width="stretch")
    st.markdown("Raw q·k spreads wider as d_k grows; divided by √d_k, every d_k has variance 1.")


def show_saturation_compact(t: int, d_k: int, temperature: float, seed: int) -> None:
    """The softmax of one row of scores at three scales, side by side, and one sentence."""
    weights, summary, _ = why_sqrt_dk.saturation_frames(t, d_k, temperature, seed)
    columns = st.columns(3)
    for column, (case, rows) in zip(columns, weights.groupby("case", sort=False), strict=True):
        chart = charts.bars(
            rows.reset_index(drop=True), x="key", y="weight", title=case, y_domain=[0, 1]
        )
        column.altair_chart(chart.properties(height=200), width="stretch")
    st.markdown(why_sqrt_dk.collapse_words(d_k, seed, t, summary))


def show_cache_compact(lesson: Lesson, t: int, window: int | None = None) -> None:
    """The K and V caches after step t (head 0) side by side, and the query row's weights in
    one sentence."""
    result, _ = kv_cache.generation(lesson.key, window, _lesson=lesson)
    step = result.steps[t]
    d_head = step.k_cache.shape[-1]
    first = t + 1 - step.k_cache.shape[1]
    rows = tuple(lesson.labels[first : t + 1])
    row = st.container(horizontal=True, gap="small")
    for name, cache in (("K", step.k_cache), ("V", step.v_cache)):
        view = kv_cache.matrix_view(rows, tuple(kv_cache.feature_labels(d_head)), _matrix=cache[0],
                                    kind="projection", row_title="cached token",
                                    col_title="feature")  # fmt: skip
        with row.container(width="content", gap=None):
            st.markdown(f"**{name} cache, head 0**: {len(rows)} row{'s' * (len(rows) != 1)}")
            show_fitted(view, f"{name} cache, head 0", SCREEN[0] // 2 - 16, SCREEN[1])
    weights = ", ".join(
        f"{label} {w:.2f}" for label, w in zip(rows, step.weights[0].tolist(), strict=True)
    )
    st.caption(f"Step {t} computed **one** query row; its weights over the cache: {weights}.")


def show_work_compact(lesson: Lesson) -> None:
    """Multiply-adds per step, with and without the cache, and one sentence."""
    result, _ = kv_cache.generation(lesson.key, None, _lesson=lesson)
    chart = charts.lines(kv_cache.work_frame(result), x="step", y="multiply-adds",
                         group="decoding", title="Multiply-adds per step")  # fmt: skip
    st.altair_chart(chart.properties(height=220), width="stretch")
    st.markdown("With the cache a step's work grows linearly, without it quadratically.")


def show_window_compact(lesson: Lesson, t: int) -> None:
    """The weights under the window (blocked cells grey), at the window the lesson's slider set."""
    T = len(lesson.labels)
    window = controls.lesson_value("window", range(1, T + 1), min(3, T))
    trace = kv_cache.window_trace(lesson.key, window, _lesson=lesson)
    allowed = trace.allowed.expand_as(trace.weights)[0]
    view = kv_cache.matrix_view(tuple(lesson.labels), tuple(lesson.labels),
                                _matrix=trace.weights[0], _blocked=~allowed, kind="weight",
                                row_title="query", col_title="key")  # fmt: skip
    show_fitted(view, f"Attention weights under a window of {window}, head 0", SCREEN[0], 280)
    st.markdown(f"Query i sees keys i − {window - 1} … i: the cache keeps {window} rows.")


def show_permutation_compact(lesson: Lesson, seed: int) -> None:
    """Attn(X) and Attn(P X) side by side, and the shuffle in one sentence."""
    shuffle = position.shuffled(lesson.key, seed, _lesson=lesson)["open"]
    labels = lesson.labels
    perm = shuffle.perm.tolist()
    columns = tuple(position.feature_labels(shuffle.outputs.shape[-1]))
    row = st.container(horizontal=True, gap="small")
    for title, rows, matrix in (
        ("Attn(X)", tuple(labels), shuffle.outputs),
        ("Attn(P X)", tuple(labels[p] for p in perm), shuffle.permuted_outputs),
    ):
        view = position.matrix_view(rows, columns, _matrix=matrix, kind="projection",
                                    row_title="token", col_title="feature")  # fmt: skip
        with row.container(width="content", gap=None):
            st.markdown(f"**{title}**")
            show_fitted(view, title, SCREEN[0] // 2 - 16, 250)
    gap = position.format_number(shuffle.gap)
    st.markdown(f"Shuffled order {', '.join(labels[p] for p in perm)}: the same rows, moved "
                f"(largest difference **{gap}**).")  # fmt: skip


def show_mask_shuffle_compact(lesson: Lesson, seed: int) -> None:
    """How much each output row changed under the sidebar's mask, and one sentence."""
    causal = lesson.settings.causal
    shuffle = position.shuffled(lesson.key, seed, _lesson=lesson)["causal" if causal else "open"]
    gaps = shuffle.row_gaps.tolist()
    column = "max |Attn(P X) − P Attn(X)|"
    frame = pd.DataFrame({"new position": range(len(gaps)), column: gaps})
    mask = "the causal mask" if causal else "no mask"
    chart = charts.bars(frame, x="new position", y=column, title=f"Each output row, under {mask}")
    st.altair_chart(chart.properties(height=200), width="stretch")
    moved = position.changed_rows(shuffle)
    st.markdown(f"{len(moved)} of {len(gaps)} rows changed under {mask}.")


def show_sinusoidal_compact(lesson: Lesson) -> None:
    T, C = lesson.embedded.x.shape
    pe = position.sinusoidal_positions(T, C)
    view = position.matrix_view(tuple(lesson.labels), tuple(position.feature_labels(C)),
                                _matrix=pe, kind="embedding", row_title="token",
                                col_title="feature")  # fmt: skip
    show_fitted(view, "PE (T, C), added to X", SCREEN[0], 290)
    st.markdown("Column pairs oscillate at falling frequencies: each position its own pattern.")


def show_rope_compact(lesson: Lesson) -> None:
    scores = position.first_token_rope(lesson)
    if scores is None:
        st.info("RoPE rotates pairs of features: pick an even head size d_k = d_model / H.")
        return
    labels = tuple(f"pos {i}" for i in range(scores.shape[0]))
    view = position.matrix_view(labels, labels, _matrix=scores, kind="score",
                                row_title="query position", col_title="key position")  # fmt: skip
    show_fitted(view, "RoPE score of one token against itself", SCREEN[0], 290)
    st.markdown("Every diagonal is one colour: the score depends only on m − n.")


def show_drill_compact(number: int, drill, key: tuple) -> None:
    """One drill on one screen: the question, its numbers' heatmap (or their table), the
    answer box and the verdict."""
    st.markdown(f"**{drills.TITLES[drill.kind]}.** {drill.prompt}")
    given = drill.given
    if given is not None:
        rows = [(name, values) for name, values in given.rows if drills.number_row(values)]
        labels = [(name, values) for name, values in given.rows if not drills.number_row(values)]
        if rows and drill.kind in drills.KIND_OF_ROW:
            view = drills.numbers_view(given, rows, drill.kind)
            show_fitted(view, "The drill's numbers", SCREEN[0], 170)
        elif labels:
            st.dataframe(drills.label_table(labels, given.columns), hide_index=True,
                         width="content", row_height=28)  # fmt: skip
    box = f"drill_{drill.kind}_{key[-1]}_{drills.zlib.crc32(repr(key[0]).encode())}"
    typed = st.text_input(f"Your answer ({number})", key=box, persist_state="session",
                          max_chars=60, label_visibility="collapsed",
                          placeholder="Your answer")  # fmt: skip
    if typed.strip():
        verdict = drills.grade(drill, typed)
        mark = {"right": "✔ ", "wrong": "✘ "}.get(verdict.status, "")
        st.caption(mark + drills.plain(verdict.message))


def show_cost_compact() -> None:
    """The time of one head against T, log-log, and one sentence."""
    measured = at_scale.costs()
    frame = pd.DataFrame(
        [{"T": c.T, "seconds": c.naive_best, "method": at_scale.NAIVE} for c in measured]
        + [{"T": c.T, "seconds": c.fused_best, "method": at_scale.FUSED} for c in measured]
    )
    spec = at_scale.log_chart(frame, "seconds", "Time of one head (d_k = 64), log-log")
    st.vega_lite_chart(spec | {"height": 240}, width="stretch")
    st.markdown("Doubling T quadruples the naive path's work: the T × T matrix.")


def show_tiling_compact(lesson: Lesson) -> None:
    """The tile walk at one step: its slider, the tile map, the tile in one line."""
    block_q, block_k = block_sizes(lesson)
    result, _ = at_scale.tiles(lesson.key, block_q, block_k, lesson.settings.causal,
                               _lesson=lesson)  # fmt: skip
    last = len(result.steps) - 1
    index = layout.bounded_slider(st, "Tile step", last, "tile_step", single="one tile")
    step = result.steps[index]
    blocked = ~allowed_matrix(lesson.trace, 0)
    view = at_scale.matrix_view(tuple(lesson.labels), tuple(lesson.labels),
                                _matrix=at_scale.tile_shades(result, index), _blocked=blocked,
                                kind="weight", row_title="query", col_title="key")  # fmt: skip
    show_fitted(at_scale.tile_legend(view), "FlashAttention's tiles", SCREEN[0], 250)
    st.markdown(
        f"Tile {index + 1} of {len(result.steps)}: queries {step.rows.start}–"
        f"{step.rows.stop - 1}, keys {step.cols.start}–{step.cols.stop - 1}"
        + (" — wholly in the future: skipped." if step.skipped else ".")
    )


def show_replay_compact(run) -> None:
    """A slider over the training snapshots and the heads at that step."""
    history = run.history
    index = what_heads_learn.step_picker(run)
    weights = tuple(w[index] for w in history.snapshots)
    show_patterns_fitted(run, weights, what_heads_learn.labels_of(run, history.example), 160)


def show_knockout_compact(run) -> None:
    """Switch heads off: the held-out accuracy, and what each head's loss costs."""
    name = run.task.name
    ablate = tuple(sorted(what_heads_learn.knockout_picker(run)))
    full = trained.accuracy(name, run.seed)
    now = trained.accuracy(name, run.seed, ablate)
    delta = f"{(now - full) * 100:+.1f} points" if ablate else None
    st.metric("held-out accuracy", f"{now:.1%}", delta=delta)


def show_grouped_compact(lesson: Lesson, t: int) -> None:
    """The K/V heads picker, the caches of multi-head and grouped attention, one sentence."""
    H = lesson.layer.n_heads
    kv = kv_cache.kv_heads_picker(H)
    plain, _ = kv_cache.generation(lesson.key, None, _lesson=lesson)
    rows = [kv_cache.cache_row(kv_cache.kind_of(H, H), plain, t, 0.0)]
    if kv < H:
        pooled = kv_cache.grouped(lesson.key, kv, _lesson=lesson)
        rows.append(kv_cache.cache_row(kv_cache.kind_of(kv, H), pooled.generation, t,
                                       pooled.output_change))  # fmt: skip
        saved = plain.steps[t].cache_bytes / pooled.generation.steps[t].cache_bytes
        words = f"Query head h uses K/V head h // {H // kv}: the cache is **{saved:g}x** smaller."
    else:
        words = f"{H} K/V heads for {H} query heads: nothing shared; pick fewer."
    frame = pd.DataFrame(rows)
    frame.columns = ["attention", "K/V heads", "K cache shape", "cache bytes", "output change"]
    st.dataframe(frame, hide_index=True, row_height=28)
    st.markdown(words)
