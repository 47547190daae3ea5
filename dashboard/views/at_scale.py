"""Lesson 11's blocks: the cost of T², timed and profiled, and FlashAttention's tiles, replayed."""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from functools import partial

import nbformat
import pandas as pd
import streamlit as st
import torch

from attention.cost import Cost, log_slope, measure_costs
from attention.drills import Drill
from attention.explain import allowed_matrix
from attention.flash import (
    CURRENT,
    DONE,
    TO_COME,
    TiledResult,
    TileStep,
    accumulator_progress,
    at_scale_questions,
    sdpa_difference,
    tile_progress,
    tiled_attention,
)
from dashboard import controls, lessons, state
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.lessons import Computed
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap, show_matrix
from dashboard.render.elements import show_once
from dashboard.render.layout import bounded_slider, wrapping_row
from dashboard.render.matrices import StageView, matrix_view
from dashboard.render.presenter import Section
from dashboard.render.tables import feature_labels, format_number
from dashboard.spec import LessonSpec

LENGTHS = (64, 128, 256, 512, 1024, 2048)  # bounded: the largest takes ~0.02-0.06 s per run
REPEATS = 5  # timed runs per point; the table gives their median and range
SAME = 1.1  # best runs within 10 % of each other: neither is called faster
BLOCK_DEFAULT = 2  # FlashAttention's query and key block sizes B_r, B_c, at most T
FIT = 3  # the slopes are fitted to the last FIT lengths, where T² dominates fixed costs
STATE_WIDTH = 340  # px: the tile's m and ℓ table (297) and its formulas; beside the map if room
TILE_SHADES = {TO_COME: 0.0, DONE: 0.45, CURRENT: 1.0}  # a tile's state on the weights' 0..1
TILE_NAMES = {TO_COME: "to come", DONE: "done", CURRENT: "current"}
PLAYING = "tile_playing"  # session state: the tile walk is playing
TICK_S = 1.0  # seconds between two frames of the walk
TICKS = 32  # a whole walk plays in at most this many frames (a 32 x 32 walk: 32 tiles a frame)
MIB = 2**20
NAIVE, FUSED = "naive (T × T held)", "fused SDPA"


@state.cached(keep=True)
def costs() -> tuple[Cost, ...]:
    """Measured once per server and shared by the class: sixty students do not time it sixty
    times (the cache computes one key once; the others wait for it)."""
    return tuple(measure_costs(LENGTHS, repeats=REPEATS))


@state.cached(keep=True)
def cost_frames() -> tuple[tuple[Cost, ...], pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """The costs measured, their table, time and memory against T per method, and each path's
    fitted slopes: once per server, not once a rerun (a fifth of this lesson's rerun was
    building them again; 2026-11-26)."""
    measured = costs()
    time_frame = pd.DataFrame(
        [{"T": c.T, "seconds": c.naive_best, "method": NAIVE} for c in measured]
        + [{"T": c.T, "seconds": c.fused_best, "method": FUSED} for c in measured]
    )
    memory_frame = pd.DataFrame(
        [{"T": c.T, "peak MiB": c.naive.peak_bytes / MIB, "method": NAIVE} for c in measured]
        + [{"T": c.T, "peak MiB": c.fused.peak_bytes / MIB, "method": FUSED} for c in measured]
    )
    fits = {
        name: fitted_slopes(measured, path) for name, path in ((NAIVE, "naive"), (FUSED, "fused"))
    }
    return measured, cost_table(measured), time_frame, memory_frame, fits


def cost_table(measured: tuple[Cost, ...]) -> pd.DataFrame:
    """Time and measured peak memory of both paths, side by side, one row per T."""

    def spread(runs: tuple[float, ...]) -> str:
        return f"{min(runs) * 1e3:.2f}–{max(runs) * 1e3:.2f}"

    return pd.DataFrame([{
        "T": cost.T,
        "naive ms (best)": round(cost.naive_best * 1e3, 3),
        "naive ms (range)": spread(cost.naive_runs),
        "fused ms (best)": round(cost.fused_best * 1e3, 3),
        "fused ms (range)": spread(cost.fused_runs),
        "naive peak MiB": round(cost.naive.peak_bytes / MIB, 3),
        "fused peak MiB": round(cost.fused.peak_bytes / MIB, 3),
        "S + P MiB (counted)": round(cost.matrix_bytes / MIB, 3),
    } for cost in measured])  # fmt: skip


def log_chart(frame: pd.DataFrame, y: str, title: str) -> dict:
    """Both paths' `y` against T, log-log."""
    spec = charts.lines(frame, x="T", y=y, group="method", title=title, log_x=True).to_dict()
    for layer in spec.get("layer", []):
        encoding = layer.get("encoding", {}).get("y")
        if isinstance(encoding, dict) and encoding.get("field") == y:
            encoding["scale"] = {"type": "log"}
        across = layer.get("encoding", {}).get("x")
        if isinstance(across, dict) and across.get("field") == "T":
            # a narrow plot (1024 x 768, the sidebar open) drew "10" and "10000" touching, read
            # as "1010000": labels closer than 8 px are dropped, each centred on its tick (a
            # flushed end label was moved inward after the overlap check)
            axis = across.get("axis") if isinstance(across.get("axis"), dict) else {}
            across["axis"] = axis | {
                "labelOverlap": "greedy",
                "labelSeparation": 8,
                "labelFlush": False,
            }
    return spec


def fitted_slopes(measured: list[Cost], path: str) -> tuple[float, float]:
    """The log-log slopes of a path's ("naive" or "fused") best time and peak memory against T,
    fitted to the last FIT lengths."""
    Ts = [c.T for c in measured[-FIT:]]
    return (
        log_slope(Ts, [getattr(c, f"{path}_best") for c in measured[-FIT:]]),
        log_slope(Ts, [getattr(c, path).peak_bytes for c in measured[-FIT:]]),
    )


def growth(slope: float) -> str:
    """'about like T²' for a fitted slope: the nearest whole power, in words."""
    words = {0: "hardly at all", 1: "about like T", 2: "about like T²", 3: "about like T³"}
    return words.get(round(slope), f"like T^{slope:.1f}")


def faster(cost: Cost) -> str:
    """Which path is faster at this T, on their best runs (a gap under SAME is no verdict)."""
    ratio = cost.naive_best / cost.fused_best
    if ratio >= SAME:
        return f"the fused kernel is {ratio:.1f}× faster than naive attention"
    if ratio <= 1 / SAME:
        return f"naive attention is {1 / ratio:.1f}× faster than the fused kernel"
    return f"the two take about the same time (within {SAME - 1:.0%})"


def kernels(measured: tuple[Cost, ...], path: str) -> str:
    """What the profiler saw `path` run, at every T (one name when it was the same at all)."""
    seen = {cost.T: getattr(cost, path).kernel for cost in measured}
    if len(set(seen.values())) == 1:
        return f"`{next(iter(seen.values()))}` at every T"
    return "; ".join(f"T = {T}: `{kernel}`" for T, kernel in seen.items())


def slope_words(fits: dict, largest) -> str:
    """How each path's time grows with T, from the slopes fitted to its measures."""
    return (
        " · ".join(f"**{name}**: time ∝ T^{fit[0]:.1f}" for name, fit in fits.items())
        + f" (slopes of the last {FIT} points). Time: naive grows {growth(fits[NAIVE][0])}, "
        f"fused {growth(fits[FUSED][0])}; at T = {largest.T} {faster(largest)}"
    )


COST_RANGES = ["naive ms (range)", "fused ms (range)"]  # the timed runs' spread, shown apart


def show_cost(screen: tuple[int, int] | None = None) -> None:
    """The time and memory of one head against T, measured here, what the measures say, and
    which kernels ran. On a projector's `screen`, the time chart and its slopes."""
    with st.spinner("Timing and profiling attention on this server (once for everyone)…"):
        measured, table, time_frame, memory_frame, fits = cost_frames()
    largest = measured[-1]
    if screen is not None:
        spec = log_chart(time_frame, "seconds", "Time of one head (d_k = 64), log-log")
        st.vega_lite_chart(spec | {"height": screen[1] - 60}, width="stretch")
        st.markdown(slope_words(fits, largest) + ".")
        return
    show_cost_charts(time_frame, memory_frame)
    show_cost_table(table)
    ratio = largest.naive.peak_bytes / largest.fused.peak_bytes
    less = f"{ratio:.0f}× less" if ratio >= 1 else f"{1 / ratio:.0f}× more"
    st.markdown(
        slope_words(fits, largest) + f". Both paths do the same 2·T²·d_k multiply-adds "
        f"({largest.macs:,} at T = {largest.T}); the fused kernel does them tile by tile, and "
        f"at T = {largest.T} it held {less} memory than naive at its peak."
    )
    with layout.going_further(
        "the timed runs' spread, the kernels that ran, the memory"
    ) as further:
        if further.open:
            show_cost_details(measured, table)


def show_cost_charts(time_frame: pd.DataFrame, memory_frame: pd.DataFrame) -> None:
    """Time and peak memory against T, side by side; measured once per server, so the charts
    are marshalled once, for every session."""
    left, right = st.columns(2)
    show_once(("at_scale_cost", "seconds"), lambda dg: dg.vega_lite_chart(
        log_chart(time_frame, "seconds", "Time of one head (d_k = 64), log-log"), width="stretch"
    ), left)  # fmt: skip
    show_once(("at_scale_cost", "peak MiB"), lambda dg: dg.vega_lite_chart(
        log_chart(memory_frame, "peak MiB", "Peak memory, measured, log-log"), width="stretch"
    ), right)  # fmt: skip


def show_cost_table(table: pd.DataFrame) -> None:
    """Time and memory side by side, short headers so the table fits a projector's column (the
    spread of the timed runs is in its own table, show_cost_details)."""
    number = st.column_config.NumberColumn
    show_once(("at_scale_cost", "table"), lambda dg: dg.dataframe(
        table.drop(columns=COST_RANGES),
        hide_index=True,
        column_config={
            "T": number("T", format="%d", width=56),
            "naive ms (best)": number("naive ms", format="%.2f", width=80),
            "fused ms (best)": number("fused ms", format="%.2f", width=80),
            "naive peak MiB": number("naive MiB", format="%.3f", width=84),
            "fused peak MiB": number("fused MiB", format="%.3f", width=84),
            "S + P MiB (counted)": number("S + P MiB", format="%.3f", width=84),
        },
    ))  # fmt: skip


def show_cost_details(measured: tuple[Cost, ...], table: pd.DataFrame) -> None:
    """Going further: the timed runs' spread, the kernels that ran, what the memory did over
    the last doubling of T, and how it was all measured."""
    largest = measured[-1]
    st.caption(
        "ms: the best of the timed runs; MiB: the peak measured by PyTorch's profiler; S + "
        "P: the T × T scores and weights counted. The timed runs' spread:"
    )
    show_once(("at_scale_cost", "ranges"), lambda dg: dg.dataframe(
        table[["T", *COST_RANGES]], hide_index=True
    ))  # fmt: skip
    st.markdown(
        f"**Which kernels ran** (the profiler's events): naive — {kernels(measured, 'naive')}; "
        f"fused — {kernels(measured, 'fused')}. Ops that took a T × T tensor at T = "
        f"{largest.T}: naive {len(largest.naive.ops_reading(largest.T, largest.T))}, "
        f"fused {len(largest.fused.ops_reading(largest.T, largest.T))}."
    )
    st.markdown(memory_words(measured))
    st.caption(
        f"Measured on this server once, with one torch thread: {REPEATS} timed runs per "
        "point; the chart, the slopes and the verdict use each point's best run (the least "
        "disturbed by other work on the server), the table gives the range. q, k, v of "
        "shape (B, H, T, d_k) = (1, 1, T, 64), float32. Peak MiB is measured by PyTorch's "
        "profiler (profile_memory): the largest running total of the allocator's "
        "allocations minus frees during one call, the inputs not counted; S + P is the "
        "T × T scores and weights counted, 2 · T² · 4 bytes."
    )


def memory_words(measured: tuple[Cost, ...]) -> str:
    """What each path's peak memory did over the last doubling of T, and what the fused
    kernel held beyond its output."""
    before, largest = measured[-2:]  # the last doubling of T
    d_k = largest.macs // (2 * largest.T**2)
    beyond = [(c.fused.peak_bytes - c.T * d_k * 4) / MIB for c in measured[-2:]]  # past O
    return (
        f"Memory, from T = {before.T} to {largest.T}: naive's peak went from "
        f"{before.naive.peak_bytes / MIB:.2f} to {largest.naive.peak_bytes / MIB:.2f} MiB "
        f"(×{largest.naive.peak_bytes / before.naive.peak_bytes:.1f}: its T × T matrices), "
        f"fused's from {before.fused.peak_bytes / MIB:.2f} to "
        f"{largest.fused.peak_bytes / MIB:.2f} MiB "
        f"(×{largest.fused.peak_bytes / before.fused.peak_bytes:.1f}); beyond its output O "
        f"(T × d_k floats) the fused kernel held {beyond[0]:.2f} and {beyond[1]:.2f} MiB, "
        f"its working buffer, so at these lengths only O grows with T. FlashAttention's "
        "paper finds that on a GPU, reading and writing the T × T matrix is what costs the "
        "time, so there the memory saved is most of the speed-up (Dao et al., 2022)."
    )  # fmt: skip


@state.per_lesson
def tiles(lesson: Computed, block_q: int, block_k: int, causal: bool) -> tuple[TiledResult, float]:
    """Head 0 of the lesson walked in tiles; and how far it is from PyTorch's own attention."""
    trace = lesson.trace
    q, k, v = trace.q[0], trace.k[0], trace.v[0]  # (T, d_head): head 0
    result = tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    return result, sdpa_difference(q, k, v, result.output, causal=causal)


def tile_shades(result: TiledResult, index: int) -> torch.Tensor:
    """(T, T) float64 for the heatmap: each score's tile state at step `index`, as a shade."""
    shades = torch.tensor(
        [TILE_SHADES[state] for state in sorted(TILE_SHADES)], dtype=torch.float64
    )
    return shades[tile_progress(result, index).long()]  # look each state's shade up


def tile_legend(view: StageView) -> StageView:
    """The tile map with a legend that names what its colours are, a tile's state (the map is
    drawn on the weights' colour scale, whose legend would say "weight")."""
    labels = " : ".join(
        f"datum.value == {TILE_SHADES[state]} ? {TILE_NAMES[state]!r}" for state in TILE_SHADES
    )
    spec = copy.deepcopy(view.spec)  # shared by every map of this size: edit a copy
    nodes = [spec]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        colour = node.get("color")
        if isinstance(colour, dict) and colour.get("title") == "weight":
            colour["title"] = "tile"
            colour["legend"] = {
                **colour.get("legend", {}), "type": "symbol", "symbolType": "square",
                "values": sorted(TILE_SHADES.values()), "labelExpr": f"{labels} : ''",
            }  # fmt: skip
        if node.get("field") == "printed" and node.get("title") == "value":
            node["title"] = (
                "tile ("
                + ", ".join(f"{TILE_SHADES[state]:g} {TILE_NAMES[state]}" for state in TILE_SHADES)
                + ")"
            )
        nodes.extend(node.values())
    return replace(view, spec=spec, token=f"{view.token} tiles")


def toggle_play(last: int) -> None:
    """Play starts the walk (from the first tile if it stands at the last), Pause stops it."""
    playing = not st.session_state.get(PLAYING, False)
    st.session_state[PLAYING] = playing
    if playing and st.session_state.get("tile_step", 0) >= last:
        st.session_state["tile_step"] = 0


def show_tiling(lesson: Computed) -> tuple[int, int]:
    """Block-size sliders, the tile walk (a step slider with Play, the tiles, m, ℓ and O) and the
    check against PyTorch: the block sizes it used, (B_r, B_c)."""
    T = len(lesson.labels)
    causal = lesson.settings.causal
    if T == 1:
        st.caption("One token: one tile of 1 × 1 (lengthen the sequence in the sidebar).")
        block_q = block_k = 1
    else:
        left, right = st.columns(2)
        block_q = bounded_slider(
            left, "Query block B_r", T, "block_q", low=1, default=BLOCK_DEFAULT
        )
        block_k = bounded_slider(right, "Key block B_c", T, "block_k", low=1, default=BLOCK_DEFAULT)
    block_q, block_k = min(block_q, T), min(block_k, T)
    result, gap = tiles(lesson, block_q, block_k, causal)
    n = len(result.steps)
    stride = math.ceil(n / TICKS)
    playing = n > 1 and st.session_state.get(PLAYING, False)
    if n > 1:
        row = st.container(horizontal=True, vertical_alignment="center")
        icon = ":material/pause:" if playing else ":material/play_arrow:"
        row.button("Pause" if playing else "Play", key="tile_play", icon=icon,
                   on_click=toggle_play, args=(n - 1,))  # fmt: skip
        frames = math.ceil((n - 1) / stride)
        row.caption(
            f"Play walks the {n} tiles in {frames} frame{'s' * (frames != 1)}, one every "
            f"{TICK_S:g} s ({stride} tile{'s' * (stride != 1)} a frame); pause, or move the "
            "slider, to read one tile."
        )
    st.fragment(run_every=TICK_S if playing else None)(show_walk)(lesson, result, stride)
    st.markdown(
        f"After the last tile each row is O / ℓ. Against `F.scaled_dot_product_attention`: "
        f"largest difference **{format_number(gap)}**. Memory: one tile's scores and weights "
        f"take {result.tile_bytes:,} bytes; the full T × T scores and weights "
        f"{result.full_bytes:,}."
    )
    return block_q, block_k


def show_walk(
    lesson: Computed, result: TiledResult, stride: int, screen: tuple[int, int] | None = None
) -> None:
    """The walk at one tile: its step slider, the tile map, m and ℓ, and the accumulator O. A
    fragment: while it plays it reruns alone, every TICK_S, stepping `stride` tiles a frame.
    On a projector's `screen`: the slider, the tile map and the tile in words."""
    last = len(result.steps) - 1
    if st.session_state.get(PLAYING, False):
        at = min(int(st.session_state.get("tile_step", 0)) + stride, last)
        st.session_state["tile_step"] = at
        if at == last:  # the end: stop, and rerun the page so the fragment stops ticking
            st.session_state[PLAYING] = False
            st.rerun()
    index = bounded_slider(st, "Tile step", last, "tile_step", single="one tile")
    step = result.steps[index]
    blocked = ~allowed_matrix(lesson.trace, 0)  # (T, T): greyed where masked
    view = matrix_view(tuple(lesson.labels),
                       tuple(lesson.labels), _matrix=tile_shades(result, index), _blocked=blocked,
                       kind="weight", row_title="query", col_title="key")  # fmt: skip
    words = (
        f"Tile {index} of tiles 0–{len(result.steps) - 1}: queries {step.rows.start}–"
        f"{step.rows.stop - 1}, keys {step.cols.start}–{step.cols.stop - 1}"
        + (" — wholly in the future: skipped." if step.skipped else ".")
    )
    if screen is not None:
        blocks.show_fitted(tile_legend(view), "FlashAttention's tiles", *screen)
        st.markdown(words)
        return
    row = wrapping_row()
    with row.container(width="content"):
        show_heatmap(tile_legend(view), "FlashAttention's tiles: each tile's state")
        st.caption("Dark: the tile being computed; mid: tiles done; light: to come; grey ×: "
                   "masked.")  # fmt: skip
    with row.container(width=STATE_WIDTH):
        st.markdown(words)
        show_running_state(lesson, step)
    show_accumulator(lesson, result, index)


def show_running_state(lesson: Computed, step: TileStep) -> None:
    """The online softmax's update and each of the tile's query rows' m and ℓ, before and
    after the tile."""
    st.latex(
        r"\begin{gathered} m' = \max(m, \operatorname{rowmax} S) \\ "
        r"\ell' = e^{m - m'}\,\ell + \operatorname{rowsum} e^{S - m'} \\ "
        r"O' = e^{m - m'}\,O + e^{S - m'}\,V_j \end{gathered}"
    )
    rows = []
    for offset, query in enumerate(step.rows):
        rows.append({
            "query": lesson.labels[query],
            "m before": format_number(float(step.m_before[offset])),
            "m after": format_number(float(step.m_after[offset])),
            "ℓ before": format_number(float(step.l_before[offset])),
            "ℓ after": format_number(float(step.l_after[offset])),
        })  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def show_accumulator(lesson: Computed, result: TiledResult, index: int) -> None:
    """The accumulator O after tile `index`, unnormalised; rows still to come greyed."""
    step = result.steps[index]
    O, waiting = accumulator_progress(result, index)  # noqa: E741
    show_matrix(
        matrix_view(tuple(lesson.labels), tuple(feature_labels(O.shape[-1])), _matrix=O,
                    _blocked=waiting, kind="projection", row_title="query", col_title="feature",
                    mark_table=True),
        "tile-accumulator",
        f"The accumulator O after tile {index}: queries {step.rows.start}–"
        f"{step.rows.stop - 1} just updated",
        "Unnormalised, as the walk keeps it: a row's output is its O / ℓ once its last key tile "
        "is done. Rows of finished query blocks keep their last O; rows to come are grey (O "
        "starts at 0).",
        name="FlashAttention's accumulator O",
    )  # fmt: skip


def notebook_section(lesson: Computed, block_q: int, block_k: int) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's tiling section, checked against this page's tiles."""
    result, _ = tiles(lesson, block_q, block_k, lesson.settings.causal)
    return notebooks.tiling_cells(result.output, block_q, block_k)


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 11: the cost of T², then FlashAttention's tiles."""
    lesson = blocks.current_lesson()
    return [
        Section("The cost of T², measured", partial(show_cost, (blocks.SCREEN[0], 300)),
                "Point at the slope of the naive line. Ask: what does doubling T cost?",
                key="cost"),
        Section("FlashAttention, tile by tile", partial(show_tiles, lesson),
                "Step one tile. Ask: why must O be rescaled when the running max grows?",
                key="tiles"),
        Section("One tile's memory against T × T", partial(show_tile_memory, lesson),
                "Ask: how large may T grow before the full matrix no longer fits?",
                key="tile_memory"),
    ]  # fmt: skip


def block_sizes(lesson: Computed) -> tuple[int, int]:
    """The page's query and key block sizes B_r, B_c (1..T, by default 2)."""
    T = len(lesson.labels)
    sizes = range(1, T + 1)
    return tuple(
        controls.lesson_value(key, sizes, min(BLOCK_DEFAULT, T)) for key in ("block_q", "block_k")
    )


def show_tile_memory(lesson: Computed) -> None:
    """The bytes one tile's scores and weights take against the full T × T, as tiled."""
    block_q, block_k = block_sizes(lesson)
    T = len(lesson.labels)
    result, _ = tiles(lesson, block_q, block_k, lesson.settings.causal)  # fmt: skip
    st.metric("One tile's scores and weights", f"{result.tile_bytes:,} bytes")
    st.metric(f"The full {T} × {T} scores and weights", f"{result.full_bytes:,} bytes")


def show_tiles(lesson: Computed) -> None:
    """The tile walk at the block sizes of the page's sliders (in the link), on one screen."""
    result, _ = tiles(lesson, *block_sizes(lesson), lesson.settings.causal)
    show_walk(lesson, result, 1, (blocks.SCREEN[0], 250))


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


@state.per_lesson  # a tiled walk per question set: once per lesson and block sizes
def lesson_questions(lesson: Computed, block_q: int, block_k: int) -> tuple[Drill, ...]:
    """The check-yourself questions at the page's block sizes."""
    return at_scale_questions(
        lesson.trace, lesson.labels, lesson.settings.causal, (block_q, block_k),
        lesson.settings.seed,
    )  # fmt: skip


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at the page's own block sizes (BLOCK_DEFAULT, which they
    state) and the class's settings (dashboard/classroom/asking.py)."""
    lesson = lessons.computed_at(s)
    block = min(BLOCK_DEFAULT, len(lesson.labels))
    return lesson_questions(lesson, block, block)


LESSON = LessonSpec(
    number=11,
    path="pages/at_scale.py",
    title="11 · Attention at scale",
    minutes=10,
    icon=":material/speed:",
    summary="The cost of T², measured; FlashAttention's tiles with the online softmax.",
    objectives=(
        "count the tiles FlashAttention computes for block sizes and a causal mask",
        "follow a row's running max m and normaliser ℓ through two key tiles",
    ),
    recap=(
        "FlashAttention gives the same output tile by tile, keeping only m, ℓ and an accumulator "
        "per row."
    ),
    params=("block_q", "block_k", "tile_step"),
    sections=sections,
    class_questions=class_questions,
)
