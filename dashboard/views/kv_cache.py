"""Lesson 10's blocks: generation one token at a time with a KV cache, grouped-query and
multi-query attention's smaller cache, and the sliding window's rolling cache."""

from __future__ import annotations

from functools import partial

import nbformat
import pandas as pd
import streamlit as st
import torch

from attention.drills import Drill
from attention.kv_cache import (
    LLAMA_2_70B,
    Generation,
    GroupedDecode,
    ModelShape,
    cache_bytes_per_token,
    decode_grouped,
    full_pass,
    full_pass_difference,
    generate_with_cache,
    kv_cache_questions,
)
from attention.layer import MultiHeadSelfAttention
from dashboard import controls, lessons, state
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.lessons import Computed
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap, show_matrix
from dashboard.render.elements import show_frame, show_once
from dashboard.render.layout import bounded_slider
from dashboard.render.matrices import matrix_view
from dashboard.render.presenter import Section
from dashboard.render.tables import feature_labels, format_number
from dashboard.spec import LessonSpec

WINDOW_DEFAULT = 3  # the sliding window's keys, at most T


def decoding_lesson() -> Computed:
    """The lesson at the sidebar's settings under the causal mask: decoding is causal."""
    return lessons.computed_at(controls.current_settings(), causal=True)


@state.per_lesson  # every step's K/V caches: megabytes at the maxima, bounded by bytes
def generation(lesson: Computed, window: int | None) -> tuple[Generation, float]:
    """Decode the lesson's X with the cache; and how far it is from the full pass."""
    x, layer = lesson.embedded.x, lesson.layer
    with torch.inference_mode():
        result = generate_with_cache(layer, x, window=window)
    return result, full_pass_difference(layer, x, result.outputs, window=window)


def notebook_section(lesson: Computed) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's decoding section, checked against this page's decoding."""
    result, _ = generation(lesson, None)
    return notebooks.decode_cells(result.outputs)


def step_picker(T: int) -> int:
    help_text = "The token being generated; the cache holds keys 0 .. t."
    return bounded_slider(st, "Decoding step t", T - 1, "decode_step", help=help_text)


def show_cache(
    lesson: Computed, t: int, window: int | None = None, screen: tuple[int, int] | None = None
) -> None:
    """The cache after step t (head 0), and the one query row this step computes. On a
    projector's `screen`, the K and V caches' heatmaps side by side, without their tables."""
    result, gap = generation(lesson, window)
    step = result.steps[t]
    d_head = step.k_cache.shape[-1]
    first = t + 1 - step.k_cache.shape[1]  # the oldest cached position (rolling cache)
    rows = tuple(lesson.labels[first : t + 1])
    # on the page one under the other: each is a table beside its heatmap, too wide for half
    row = st.container(horizontal=screen is not None, gap="small")
    for name, cache in (("K", step.k_cache), ("V", step.v_cache)):
        view = matrix_view(
            rows,
            tuple(feature_labels(d_head)),
            _matrix=cache[0],
            kind="projection",
            row_title="cached token",
            col_title="feature",
        )
        title = f"{name} cache, head 0: {len(rows)} row{'s' * (len(rows) != 1)}"
        fitted = None if screen is None else (screen[0] // 2 - 16, screen[1])
        with row.container(width="content" if screen else "stretch", gap=None):
            show_matrix(view, f"{name}-cache", title, name=f"{name} cache, head 0",
                        screen=fitted)  # fmt: skip
    if screen is None:
        weights = pd.DataFrame({"key": list(rows), "weight": step.weights[0].tolist()})
        spec = row_bars_spec(f"Query row {t} over the cache (head 0)")
        show_once(("kv_row", lesson.key, window, t),
                  lambda dg: dg.vega_lite_chart(weights, spec, width="stretch"))  # fmt: skip
    else:  # the bars' numbers, in one line: no room for a chart under the caches
        weights = zip(rows, step.weights[0].tolist(), strict=True)
        st.caption(f"Query row {t} over the cache (head 0): "
                   + ", ".join(f"{label} {w:.2f}" for label, w in weights) + ".")  # fmt: skip
    st.markdown(
        f"Step {t} computed **one** query row and appended one key and one value. "
        f"Outputs of all steps against the full {'causal' if window is None else 'sliding-window'}"
        f" pass: largest difference **{format_number(gap)}**."
    )


@state.cached(keep=True)  # one spec per title: at most 64 decoding steps
def row_bars_spec(title: str) -> dict:
    """The spec of a query row's weights over the cache, for any row (its data sent apart)."""
    return charts.to_spec(charts.bars(None, x="key", y="weight", title=title, y_domain=(0, 1)))


DECODINGS = ("with the cache", "recomputing all")  # the work chart's two lines, in order
# Presenter mode's step charts, in px with their axes, title and legend (Streamlit fits a chart
# of a given size, all of it, in that size): two side by side in 683 px, as tall as each other
PRESENT_STEPS_WIDTH, PRESENT_STEPS_HEIGHT = 300, 300  # 320 scrolled 853 x 480 by 12 px


@state.cached(keep=True)  # three on the page, two in presenter mode: the data goes apart
def steps_spec(
    y: str, group: str, title: str, groups: tuple[str, ...], width: int | None = None
) -> dict:
    """A line chart's spec of y per decoding step, one line per group, for any steps; with a
    `width` (px), that wide and PRESENT_STEPS_HEIGHT high, its legend on top (presenter mode)."""
    chart = charts.lines(None, x="step", y=y, group=group, title=title, groups=list(groups),
                         whole_x=True, legend="right" if width is None else "top")  # fmt: skip
    if width is not None:
        chart = chart.properties(width=width, height=PRESENT_STEPS_HEIGHT)
    return charts.to_spec(chart)


def work_frame(result: Generation) -> pd.DataFrame:
    rows = []
    for step in result.steps:
        for decoding, macs in zip(DECODINGS, (step.macs_cached, step.macs_uncached), strict=True):
            rows.append({"step": step.t, "multiply-adds": macs, "decoding": decoding})
    return pd.DataFrame(rows)


def show_work(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    """Multiply-adds and the cache's bytes per decoding step, side by side. On a projector's
    `screen`, each chart a width of its own with its legend on top: presenter mode lays the
    section out at several widths while it fits it to the screen, and charts as wide as their
    column were drawn again at each, their legends cut off at the right edge (2026-11-26)."""
    result, _ = generation(lesson, None)
    left, right = st.columns(2)
    width = None if screen is None else PRESENT_STEPS_WIDTH
    fill = "stretch" if width is None else "content"
    # keyed on the numbers drawn, which only the sizes decide: a new seed redraws neither
    work = tuple((s.macs_cached, s.macs_uncached) for s in result.steps)
    spec = steps_spec("multiply-adds", "decoding", "Multiply-adds per step", DECODINGS, width)
    show_once(
        ("kv_work", work, width),
        lambda dg: dg.vega_lite_chart(work_frame(result), spec, width=fill),
        left,
    )
    sizes = tuple(s.cache_bytes for s in result.steps)
    memory = {
        "step": [s.t for s in result.steps],
        "bytes": list(sizes),
        "cache": ["K and V"] * len(result.steps),
    }
    spec = steps_spec("bytes", "cache", "Cache size (bytes)", ("K and V",), width)
    show_once(
        ("kv_memory", sizes, width),
        lambda dg: dg.vega_lite_chart(pd.DataFrame(memory), spec, width=fill),
        right,
    )
    st.caption(
        "With the cache a step costs the new token's projections plus one row of attention "
        "(grows linearly); without it every step re-runs the layer on all tokens so far "
        "(grows quadratically). The cache trades that work for memory: 2 · T · C numbers."
    )


def kind_of(n_kv: int, H: int) -> str:
    """What attention with n_kv K/V heads for H query heads is called."""
    if n_kv == H:
        return "multi-head (MHA)"
    return "multi-query (MQA)" if n_kv == 1 else "grouped-query (GQA)"


@state.per_lesson
def grouped(lesson: Computed, n_kv: int) -> GroupedDecode:
    """The lesson's layer with its K/V heads pooled to n_kv, decoded with its cache."""
    return decode_grouped(lesson.layer, lesson.embedded.x, n_kv)


def kv_heads_picker(H: int) -> int:
    """K/V heads for the layer's H query heads: a divisor of H, by default the largest one
    below H, so the comparison starts from a layer that shares."""
    options = kv_head_options(H)
    default = kv_heads_default(H)
    if len(options) == 1:  # a select_slider needs two options to slide between
        return options[0]
    raw = controls.linked("kv_heads")
    # in the URL; a count that does not divide this H (another head count's) gives the default
    asked = st.select_slider(
        "K/V heads", options, value=layout.remember_default("kv_heads", default), key="kv_heads",
        bind="query-params",
        persist_state="session", help="H = multi-head; fewer = grouped-query; 1 = multi-query.",
    )  # fmt: skip
    used = asked if asked in options else default
    valid = f"a divisor of H = {H} ({', '.join(map(str, options))})"
    controls.link_note("kv_heads", raw, used, valid)
    return used


def kv_head_options(H: int) -> list[int]:
    return [g for g in range(1, H + 1) if H % g == 0]


def kv_heads_default(H: int) -> int:
    """The largest divisor below H, so the comparison starts from a layer that shares."""
    options = kv_head_options(H)
    return options[-2] if len(options) > 1 else options[0]


def show_grouped(lesson: Computed, t: int, screen: tuple[int, int] | None = None) -> None:
    """Which query heads share which K/V head; this layer pooled to fewer K/V heads and decoded
    (its cache at step t, measured, against the multi-head layer's); a published model's. On a
    projector's `screen`, the caches and what they say, without the sharing table and the
    published model."""
    layer: MultiHeadSelfAttention = lesson.layer
    H = layer.n_heads
    kv = kv_heads_picker(H)
    if H == 1:
        st.info(
            "With one query head there is nothing to share: multi-head, grouped-query and "
            "multi-query attention are the same layer."
        )
    elif kv == H:
        st.info(f"With {H} K/V heads for {H} query heads nothing is shared: pick fewer.")
    group = H // kv
    if screen is None:
        show_frame(("kv_groups", H, group), lambda: pd.DataFrame(
            {"query head": range(H), "uses K/V head": [h // group for h in range(H)]}
        ), hide_index=True)  # fmt: skip
    plain, _ = generation(lesson, None)
    if kv == H:
        show_cache_table([cache_row(kind_of(H, H), plain, t, 0.0)], screen)
    else:
        pooled = grouped(lesson, kv)
        name = kind_of(kv, H)
        show_cache_table([
            cache_row(kind_of(H, H), plain, t, 0.0),
            cache_row(name, pooled.generation, t, pooled.output_change),
        ], screen)  # fmt: skip
        saved = plain.steps[t].cache_bytes / pooled.generation.steps[t].cache_bytes
        st.markdown(
            f"Measured while decoding: the {name.split(' (')[0]} cache holds **{saved:g}x** "
            f"fewer bytes than the multi-head one at step {t}. Its layer is this one with each "
            "group's key and value heads averaged into one (as the GQA paper turns a multi-head "
            "checkpoint into a grouped one): another layer, so the outputs move by up to "
            f"**{format_number(pooled.output_change)}**; a model is trained (or uptrained) "
            "that way. Decoded with its cache it equals its own full pass: max |difference| "
            f"**{format_number(pooled.full_pass_gap)}**."
        )
    if screen is None:
        show_published(LLAMA_2_70B)


def cache_row(name: str, result: Generation, t: int, change: float) -> dict:
    """One decoding's cache after step t, and how far its outputs are from multi-head's."""
    step = result.steps[t]
    return {
        "attention": name, "K/V heads": step.k_cache.shape[0],
        f"K cache after step {t}": str(tuple(step.k_cache.shape)),
        f"K and V cache bytes after step {t}": step.cache_bytes,
        "outputs: max |difference| from multi-head": format_number(change),
    }  # fmt: skip


def show_cache_table(rows: list[dict], screen: tuple[int, int] | None = None) -> None:
    """Short headers (the long names stay the columns' names, in the CSV), so the table fits
    a projector's main column; on a projector's `screen`, an HTML table, scaled with the
    section (presenter.FIT)."""
    frame = pd.DataFrame(rows)
    short = {
        "attention": "attention", "K/V heads": "K/V heads",
        **{c: "K cache shape" for c in frame.columns if c.startswith("K cache after")},
        **{c: "cache bytes" for c in frame.columns if c.startswith("K and V cache bytes")},
        "outputs: max |difference| from multi-head": "output change",
    }  # fmt: skip
    config = {c: st.column_config.Column(label) for c, label in short.items() if c in frame}
    if screen is None:
        key = ("cache_table", tuple(tuple(row.items()) for row in rows))
        show_frame(key, lambda: frame, hide_index=True, column_config=config)
    else:
        st.table(frame.rename(columns=short), hide_index=True)
    step = next((c.rsplit(" ", 1)[-1] for c in frame.columns if c.startswith("K cache after")), "")
    st.caption(
        f"K cache shape and cache bytes (K and V) after step {step}; output change: the largest "
        "|difference| of the outputs from multi-head attention's."
    )


def show_published(model: ModelShape) -> None:
    """MHA, GQA and MQA cache sizes per token for a published model's attention shape."""
    mha = cache_bytes_per_token(model.n_heads, model.d_head, model.bytes_per_number,
                                model.n_layers)  # fmt: skip
    rows = []
    for n_kv in (model.n_heads, model.n_kv_heads, 1):
        size = cache_bytes_per_token(n_kv, model.d_head, model.bytes_per_number, model.n_layers)
        rows.append({
            "attention": kind_of(n_kv, model.n_heads)
            + (" (as shipped)" if n_kv == model.n_kv_heads else ""),
            "K/V heads": n_kv, "cache bytes per token, all layers": size,
            "vs multi-head": f"{mha / size:g}x smaller" if size < mha else "1x",
        })  # fmt: skip
    st.markdown(f"**{model.name}**: {model.n_heads} query heads of d_k {model.d_head}, "
                f"{model.n_layers} layers, {8 * model.bytes_per_number}-bit numbers")  # fmt: skip
    show_frame(
        ("published", model),
        lambda: pd.DataFrame(rows),
        hide_index=True,
        column_config={
            "cache bytes per token, all layers": st.column_config.NumberColumn(
                "bytes per token", format="localized"
            )
        },
    )
    st.caption(
        "Bytes per token (all layers) = 2 · K/V heads · d_k · bytes per number · layers. The "
        "query heads of a group all read the same keys and values "
        "(`F.scaled_dot_product_attention(..., enable_gqa=True)`)."
    )


@state.per_lesson
def window_trace(lesson: Computed, window: int):
    """The full pass under the sliding-window mask: its weights and its allowed cells."""
    return full_pass(lesson.layer, lesson.embedded.x, window=window)


def show_window(lesson: Computed, t: int, screen: tuple[int, int] | None = None) -> None:
    """The weights under the window (blocked cells grey) and the rolling cache at step t. On a
    projector's `screen`, the weights at the window the page's slider set (in the link)."""
    T = len(lesson.labels)
    if screen is None:
        window = bounded_slider(st, "Window", T, "window", low=1, default=WINDOW_DEFAULT)
    else:
        window = controls.lesson_value("window", range(1, T + 1), min(WINDOW_DEFAULT, T))
    trace = window_trace(lesson, window)
    allowed = trace.allowed.expand_as(trace.weights)[0]  # (T, T), head 0
    view = matrix_view(tuple(lesson.labels), tuple(lesson.labels),
                       _matrix=trace.weights[0], _blocked=~allowed, kind="weight",
                       row_title="query", col_title="key", mark_table=True)  # fmt: skip
    name = f"Attention weights under a window of {window}, head 0"
    with st.container(width="content"):  # the caption as wide as the map
        if screen is None:
            show_heatmap(view, name)
        else:
            blocks.show_fitted(view, name, *screen)
        st.caption(
            f"{name}. Query i sees keys i − {window - 1} … i; grey cells are blocked "
            f"(the mask). Step {t} below is row {t}."
            if screen is None
            else f"{name}. Query i sees keys i − {window - 1} … i; grey cells are blocked "
            f"(the mask): the cache keeps {window} rows."
        )
    if screen is None:
        show_cache(lesson, t, window)


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 10: decode steps, work per step, grouped-query and sliding-window caches."""
    lesson = decoding_lesson()
    blocks.require_lesson(lesson)
    T = len(lesson.labels)
    first, last = 0, T - 1
    screen = (blocks.SCREEN[0], 240)
    return [
        Section(f"Decode step {first}", partial(show_cache, lesson, first, None, screen),
                "The first token: a one-row cache. Ask: what does the query attend to?",
                key="first_step"),
        Section(f"Decode step {last}", partial(show_cache, lesson, last, None, screen),
                "The last token: the whole cache. Ask: what was computed at this step only?",
                key="last_step"),
        Section("Work and memory per step", partial(show_work, lesson, screen),
                "Ask: how does the work per token grow with and without the cache?", key="work"),
        Section("Grouped-query attention", partial(show_grouped, lesson, last, screen),
                "Ask: how much smaller is the cache with one K/V head per group?", key="grouped"),
        Section("Sliding-window attention", partial(show_window, lesson, last, screen),
                "Ask: what can the last token no longer see, and what did we save?", key="window"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(settings: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at the sidebar's settings (their seed: a trained model's
    lesson keeps its own), on the lesson as it decodes, under the causal mask."""
    lesson = lessons.computed_at(settings, causal=True)
    return kv_cache_questions(lesson.trace, settings.seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(s)


LESSON = LessonSpec(
    number=10,
    path="pages/kv_cache.py",
    title="10 · KV cache",
    heading="10 · Generation and the KV cache",
    minutes=9,
    icon=":material/fast_forward:",
    summary="Generation one token at a time; grouped-query, multi-query and sliding-window caches.",
    uses=("src", "T", "d_model", "heads", "seed"),
    objectives=(
        "compute the K and V cache's size after t tokens",
        "compute how much grouped-query attention shrinks it",
    ),
    recap=(
        "a cache keeps each token's keys and values once; grouped-query heads share them to "
        "shrink it."
    ),
    params=("decode_step", "kv_heads", "window"),
    sections=sections,
    class_questions=class_questions,
)
