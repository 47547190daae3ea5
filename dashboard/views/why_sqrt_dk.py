"""Lesson 4's blocks: dot products growing with d_k, and the softmax saturating."""

from __future__ import annotations

from functools import partial

import nbformat
import numpy as np
import pandas as pd
import streamlit as st

from attention.drills import Drill
from attention.scaling import (
    ONE_HOT,
    random_scores,
    sample_dot_products,
    softmax_saturation,
    softmax_scale,
    why_sqrt_dk_questions,
)
from dashboard import controls, state
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.render import charts
from dashboard.render.blocks import SCREEN
from dashboard.render.elements import show_chart, show_once
from dashboard.render.presenter import Section
from dashboard.render.tables import format_number
from dashboard.spec import LessonSpec

# The page's d_k and temperature sliders (in the URL as dk and tau); presenter mode reads the same
D_KS, PAIRS, KEYS = (4, 16, 64, 256), 4000, 8  # head sizes compared; random pairs; keys
D_K_OPTIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
D_K_DEFAULT = 512  # wide enough that the unscaled softmax collapses on the default seed (tested)
TAU_OPTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
TAU_DEFAULT = 1.0
PRESENT_HISTOGRAM_WIDTH = 230  # px of plot: two side by side, axes and all, in 683 px
PRESENT_BARS_WIDTH = 200  # px, axes and title and all: three side by side in 683 px


@state.cached
def variance_frames(d_ks: tuple[int, ...], n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Histogram counts of the dot products, raw and scaled, per d_k (shared bins symmetric
    around 0), and their variances."""
    samples = [sample_dot_products(d_k, n, seed + d_k) for d_k in d_ks]
    long = {
        field: histogram_counts({f"d_k = {s.d_k}": pick(s).numpy() for s in samples}, field)
        for field, pick in (("q·k", lambda s: s.raw), ("q·k / √d_k", lambda s: s.scaled))
    }
    table = pd.DataFrame(
        {
            "d_k": [s.d_k for s in samples],
            "Var(q·k)": [s.raw_variance for s in samples],
            "Var(q·k / √d_k)": [s.scaled_variance for s in samples],
        }
    )
    return long, table


def histogram_counts(values: dict[str, np.ndarray], field: str, bins: int = 48) -> pd.DataFrame:
    """Counts per group over shared bins symmetric around 0 (0 is a bin edge), long form:
    (field = left edge, count, d_k); each group ends with its last edge, closing its outline."""
    edge = max(float(np.abs(v).max()) for v in values.values())
    edges = np.linspace(-edge, edge, bins + 1)
    frames = []
    for name, v in values.items():
        counts, _ = np.histogram(v, edges)
        counts = np.append(counts, counts[-1])  # the last step ends at the last edge
        frames.append(pd.DataFrame({field: edges, "count": counts, "d_k": name}))
    return pd.concat(frames, ignore_index=True)


def show_variance(
    d_ks: tuple[int, ...], n: int, seed: int, screen: tuple[int, int] | None = None
) -> None:
    """Histograms of q·k, raw and scaled, for several d_k; the variances measured, as a
    sentence and (on the page, not on a projector's `screen`) as a table."""
    long, table = variance_frames(d_ks, n, seed)
    raw, scaled = st.columns(2)
    height = None if screen is None else screen[1] - 80
    # On a projector, a width of their own: presenter mode lays the section out at several
    # widths while it fits it to the screen, and a chart as wide as its column was drawn again
    # at each (the Page Down to this section took 246 ms to repaint, median; 2026-11-26)
    width = None if screen is None else PRESENT_HISTOGRAM_WIDTH
    key = (d_ks, n, seed, height)  # everything the charts and the table show: each built once
    for column, x, title in (
        (raw, "q·k", "q·k (raw)"),
        (scaled, "q·k / √d_k", "q·k / √d_k (scaled)"),
    ):
        show_chart(("variance", x, *key), lambda x=x, title=title: sized(
            charts.histogram(long[x], x=x, group="d_k", title=title,
                             legend_columns=None if width is None else 2), height, width
        ), column, width="stretch" if width is None else "content")  # fmt: skip
    st.markdown(variance_words(table))
    if screen is None:
        show_once(("variance_table", *key), lambda dg: dg.dataframe(
            table, hide_index=True, column_config=number_columns(table, "%.2f")
        ))  # fmt: skip


def sized(chart, height: int | None, width: int | None = None):
    """The chart at `height` and `width` px (None: its own)."""
    sizes = {k: v for k, v in (("height", height), ("width", width)) if v is not None}
    return chart.properties(**sizes) if sizes else chart


def variance_words(table: pd.DataFrame) -> str:
    """What the variances measured say, from their table."""
    d_ks = ", ".join(str(d) for d in table["d_k"])
    raw = ", ".join(f"{v:.3g}" for v in table["Var(q·k)"])
    scaled = ", ".join(f"{v:.3g}" for v in table["Var(q·k / √d_k)"])
    return (
        f"Measured for d_k = {d_ks}: Var(q·k) = {raw}, growing with d_k; divided by √d_k, {scaled}."
    )


def number_columns(frame: pd.DataFrame, fmt: str) -> dict:
    """Column settings that print a frame's float columns with `fmt` (the numbers stay
    numbers: they sort as numbers and a CSV export keeps every digit)."""
    return {
        name: st.column_config.NumberColumn(format=fmt)
        for name, dtype in frame.dtypes.items()
        if pd.api.types.is_float_dtype(dtype)
    }


SCALE_GRID = tuple(10 ** (e / 8) for e in range(-24, 13))  # 0.001 ... ~31.6


@state.cached
def saturation_frames(t: int, d_k: int, temperature: float, seed: int):
    """Weights, summary and curves for one random row of scores (see attention.scaling)."""
    scores = random_scores(t, d_k, seed)
    cases = {
        "no scaling (× 1)": softmax_saturation(scores, 1.0),
        "× 1/√d_k": softmax_saturation(scores, softmax_scale(d_k)),
        f"× 1/(τ√d_k), τ = {temperature:g}": softmax_saturation(
            scores, softmax_scale(d_k, temperature)
        ),
    }
    keys = [f"k{j}" for j in range(t)]
    weights = pd.concat(
        [
            pd.DataFrame({"key": keys, "weight": s.weights.numpy(), "case": name})
            for name, s in cases.items()
        ],
        ignore_index=True,
    )
    summary = pd.DataFrame(
        {
            "softmax of scores": list(cases),
            "scale": [s.scale for s in cases.values()],
            "max weight": [s.max_weight for s in cases.values()],
            "entropy (nats)": [s.entropy for s in cases.values()],
            "gradient size ‖J‖": [s.gradient_norm for s in cases.values()],
        }
    )
    curve = [softmax_saturation(scores, scale) for scale in SCALE_GRID]
    curves = pd.concat(
        [
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.normalised_entropy for c in curve],
                    "quantity": f"entropy / log {t} ({t} keys; 1 = uniform)",
                }
            ),
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.max_weight for c in curve],
                    "quantity": "max weight (1 = one-hot)",
                }
            ),
            pd.DataFrame(
                {
                    "scale": SCALE_GRID,
                    "value": [c.gradient_norm for c in curve],
                    "quantity": "gradient size ‖J‖",
                }
            ),
        ],
        ignore_index=True,
    )
    return weights, summary, curves


def notebook_data(
    d_ks: tuple[int, ...], n: int, t: int, d_k: int, temperature: float, seed: int
) -> dict[str, object]:
    """What lesson 4's notebooks are given: this page's variances and softmax rows."""
    _, table = variance_frames(d_ks, n, seed)
    _, summary, _ = saturation_frames(t, d_k, temperature, seed)
    variances = [(int(d), float(raw), float(scaled)) for d, raw, scaled in table.to_numpy()]
    rows = summary[["scale", "max weight", "entropy (nats)", "gradient size ‖J‖"]].to_numpy()
    saturation = [tuple(float(value) for value in row) for row in rows]
    return notebooks.scaling_data(seed, n, variances, t, d_k, temperature, saturation)


def notebook(
    d_ks: tuple[int, ...], n: int, t: int, d_k: int, temperature: float, seed: int
) -> nbformat.NotebookNode:
    """Take it home: lesson 4's notebook, with this page's variances and softmax rows in it."""
    return notebooks.scaling_notebook(notebook_data(d_ks, n, t, d_k, temperature, seed))


def exercises(
    d_ks: tuple[int, ...],
    n: int,
    t: int,
    d_k: int,
    temperature: float,
    seed: int,
    solved: bool = False,
) -> nbformat.NotebookNode:
    """Take it home: lesson 4's exercises on this page's numbers (solved: the solution)."""
    data = notebook_data(d_ks, n, t, d_k, temperature, seed)
    return notebooks.scaling_exercise_notebook(data, solved)


def scale_marks(d_k: int, temperature: float) -> dict[str, float]:
    """The scales marked on the curves, with short labels (a label runs right from its rule,
    so a long one ran across the next): no scaling, 1/√d_k, and the chosen τ's 1/(τ√d_k)
    when τ ≠ 1 (mark_words says what each is)."""
    marks = {"× 1": 1.0, "× 1/√d_k": softmax_scale(d_k)}
    if temperature != 1.0:
        marks[f"τ = {temperature:g}"] = softmax_scale(d_k, temperature)
    return marks


def mark_words(d_k: int, temperature: float) -> str:
    """What the dashed rules on the across-scales chart are, with their scales."""
    standard = f"× 1/√d_k is the usual scale, {softmax_scale(d_k):.3g}"
    chosen = (
        ", which is also your τ = 1's 1/(τ√d_k)"
        if temperature == 1.0
        else f"; τ = {temperature:g} is your choice, 1/(τ√d_k) = "
        f"{softmax_scale(d_k, temperature):.3g}"
    )
    return f"Dashed rules: × 1 is no scaling; {standard}{chosen}."


def collapse_words(d_k: int, seed: int, t: int, summary: pd.DataFrame) -> str:
    """What the table above says about the unscaled softmax at this d_k (t keys), from its
    numbers: collapsed onto one key (largest weight >= ONE_HOT) or not yet."""
    raw, scaled = summary.iloc[0], summary.iloc[1]
    f = format_number
    top, gradient = raw["max weight"], raw["gradient size ‖J‖"]
    standard = scaled["gradient size ‖J‖"]
    if top >= ONE_HOT:
        return (
            f"At d_k = {d_k}, without scaling the largest weight is **{f(top)}**: the softmax has "
            f"collapsed onto one key, and its gradient size ‖J‖ is **{f(gradient)}** against "
            f"{f(standard)} with 1/√d_k."
        )
    return (
        f"At d_k = {d_k} (seed {seed}), without scaling the largest weight is {f(top)}: the "
        f"softmax has not collapsed onto one key yet (that takes {ONE_HOT:g} or more), and ‖J‖ "
        f"is {f(gradient)} against {f(standard)} with 1/√d_k. With only {t} keys "
        "two close scores can share the weight; a larger d_k spreads the scores further "
        "apart."
    )


def show_saturation(
    t: int, d_k: int, temperature: float, seed: int, screen: tuple[int, int] | None = None
) -> None:
    """Softmax of one row of scores at three scales, what the table says about the collapse,
    and entropy and gradient across scales. On a projector's `screen`, the three rows of
    weights and what they say."""
    weights, summary, curves = saturation_frames(t, d_k, temperature, seed)
    height = None if screen is None else screen[1] - 100
    width = None if screen is None else PRESENT_BARS_WIDTH  # as the histograms' (show_variance)
    key = (t, d_k, temperature, seed)  # everything below is built once per key
    if screen is None:
        show_once(("saturation_table", *key), lambda dg: dg.dataframe(
            summary, hide_index=True, column_config=number_columns(summary, "%.4f")
        ))  # fmt: skip
        st.markdown(collapse_words(d_k, seed, t, summary))
    columns = st.columns(3)
    bars, fill = bars_spec(height, width), "stretch" if width is None else "content"
    for column, (case, rows) in zip(columns, weights.groupby("case", sort=False), strict=True):
        # keyed on the case's own numbers: the case's name holds τ where its bars depend on τ
        shown = (case, t, d_k, seed, height, width)
        show_once(("saturation_bars", *shown), lambda dg, rows=rows, case=case: dg.vega_lite_chart(
            rows[["key", "weight"]].reset_index(drop=True), charts.with_data(bars, case),
            width=fill,
        ), column)  # fmt: skip
    if screen is not None:
        st.markdown(collapse_words(d_k, seed, t, summary))
        return
    lines = curves_spec(tuple(dict.fromkeys(curves["quantity"])))
    show_once(("saturation_curves", *key), lambda dg: dg.vega_lite_chart(charts.with_data(
        lines, f"Across scales (1/√d_k = {softmax_scale(d_k):.3f})",
        curves=curves, marks=charts.mark_rows(scale_marks(d_k, temperature)),
    ), width="stretch"))  # fmt: skip
    st.caption(mark_words(d_k, temperature))


# The saturation charts' specs, built once each (Altair took 17-34 ms for the curves and 4-5 ms
# a bar chart on every new d_k, τ or seed, 65 % of this page's script time; 2026-11-26): a
# setting's rows go apart, its title and marks in with charts.with_data.


@state.cached(keep=True)
def bars_spec(height: int | None, width: int | None) -> dict:
    """One softmax row's bars (key, weight), for any row and title."""
    chart = charts.bars(None, x="key", y="weight", title=charts.TITLE, y_domain=[0, 1])
    return charts.to_spec(sized(chart, height, width))


@state.cached(keep=True)
def curves_spec(groups: tuple[str, ...]) -> dict:
    """Entropy and gradient across scales, with labelled rules, for any curves of these groups
    (the dataset "curves": scale, value, quantity), any marks and title. The curves are a named
    dataset too: Streamlit's browser side puts a chart's unnamed data into its one named
    dataset when it has only one, here the marks (the curves were not drawn)."""
    chart = charts.lines(None, x="scale", y="value", group="quantity", log_x=True,
                         title=charts.TITLE, marks={"× 1": 1.0}, groups=list(groups),
                         whole_x=False)  # fmt: skip
    return charts.to_spec(chart) | {"data": {"name": "curves"}}


# --- presenter mode (?present=1): one section a screen ---------------------------------


def show_variance_formula() -> None:
    """Var(q · k) = d_k, and 1 once divided by √d_k (the page's formula, and a section)."""
    st.latex(
        r"\operatorname{Var}(q \cdot k) = d_k \qquad "
        r"\operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1"
    )
    st.markdown("q, k with independent entries of mean 0 and variance 1: d_k products, summed.")


def sections(d_ks: tuple[int, ...] = D_KS, pairs: int = PAIRS, keys: int = KEYS) -> list[Section]:
    """Lesson 4: the variance of q·k grows with d_k; large scores saturate the softmax."""
    seed = controls.current_settings().seed
    d_k = controls.lesson_value("dk", D_K_OPTIONS, D_K_DEFAULT)
    tau = controls.lesson_value("tau", TAU_OPTIONS, TAU_DEFAULT)
    return [
        Section("Var(q · k) = d_k", show_variance_formula,
                "Ask: if each product has variance 1, what is the variance of a sum of d_k?",
                key="variance_formula"),
        Section("Dot products grow with d_k", partial(show_variance, d_ks, pairs, seed, SCREEN),
                "Point at the widths of the raw histograms. Ask: what is Var(q·k) at d_k = 64?",
                key="variance"),
        Section(f"Large scores saturate the softmax (d_k = {d_k})",
                partial(show_saturation, keys, d_k, tau, seed, SCREEN),
                "Compare the unscaled bars with the scaled. Ask: what happens to the gradient?",
                key="saturation"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(seed: int, d_k: int) -> tuple[Drill, ...]:
    """The check-yourself questions at the sidebar's seed, about a d_k the page shows neither
    in its histograms (D_KS) nor at its slider (d_k)."""
    return why_sqrt_dk_questions(seed, (*D_KS, d_k))


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at the page's own d_k (D_K_DEFAULT, which they state) and
    the class's seed (dashboard/classroom/asking.py)."""
    return lesson_questions(s.seed, D_K_DEFAULT)


LESSON = LessonSpec(
    number=4,
    path="pages/why_sqrt_dk.py",
    title="4 · Why √d_k",
    heading="4 · Why divide by √d_k?",
    minutes=10,
    icon=":material/functions:",
    summary="Dot-product variance grows with d_k; scaling keeps the softmax from saturating.",
    uses=("seed",),
    objectives=(
        "give the spread of q · k for random q, k of size d_k (variance d_k, deviation √d_k)",
        "scale a score by 1/√d_k",
        "compute how far an unscaled softmax collapses onto one key",
    ),
    recap=(
        "dividing by √d_k keeps the scores' variance at 1, so the softmax stays soft and trainable."
    ),
    params=("dk", "tau"),
    sections=sections,
    class_questions=class_questions,
)
