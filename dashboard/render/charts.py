"""Labelled data -> Altair chart. Pure: returns a chart, calls no st.*.

One colour scheme per kind of quantity, the same on every page:
- scores (raw, scaled, masked): diverging blue-orange centred at 0;
- weights: sequential blues on a fixed 0..1 scale;
- embeddings and projections (X, Q, K, V, heads, output): diverging purple-green centred at 0;
- masked cells: flat grey with a cross, never a huge negative number on the colour scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from dashboard.render.tables import COLUMN_ORDER, ROW_ORDER, SCALE_FIELD

SCHEMES = {"score": "blueorange", "weight": "blues", "projection": "purplegreen"}
MASKED_COLOUR = "#a3a3a3"
FONT_SIZE = 14  # legible on a screen
PRESENT_FONT = 20  # presenter mode: legible from the back of a room
INK = {"light": "#31333F", "dark": "#FAFAFA"}  # presenter mode's axis text, per theme
TEXT_LIMIT = 10  # numbers are printed in the cells when both axes have at most this many
MAX_HEIGHT = 560  # px of cells at most (axes and legend come on top)


def magnitude(values: np.ndarray, blocked: np.ndarray | None = None) -> float:
    """The largest |value| of the cells that are not masked (1 when there is none, or all are 0),
    the half-width of a symmetric diverging scale."""
    shown = values if blocked is None else values[~blocked]
    bound = float(np.abs(shown).max(initial=0.0))
    return bound if math.isfinite(bound) and bound > 0 else 1.0


EXTENT = "scale_extent"  # the chart's [min, max] of SCALE_FIELD (tables.long_form): [m, m]
DARK = {  # which cells need white numbers: darker than 60 % of the way to the scale's end
    "weight": "datum.value > 0.6",
    "diverging": f"abs(datum.value) > 0.6 * {EXTENT}[1]",
}


def colour_scale(kind: str) -> alt.Scale:
    """The colour scale of one kind of quantity. Diverging scales are symmetric around 0, their
    half-width read from the data's SCALE_FIELD (an extent param), so one spec serves every
    matrix and no fake cells are needed."""
    scheme = SCHEMES["projection" if kind == "embedding" else kind]
    if kind == "weight":
        return alt.Scale(scheme=scheme, domain=[0, 1])
    return alt.Scale(scheme=scheme, domain=alt.ExprRef(f"[-{EXTENT}[1], {EXTENT}[1]]"))


@dataclass(frozen=True)
class Layout:
    """What a heatmap's spec depends on besides its kind: few distinct values, so a handful of
    specs serve every matrix size."""

    step: int  # pixels per cell (square cells) or per row (wide matrices)
    square: bool  # square cells (every T x T map), else as wide as the page, under the table
    upright_x: bool  # column labels horizontal (short labels in wide cells) or turned
    text: bool  # small enough to print numbers in the cells
    cross: bool  # small enough to draw a cross on masked cells
    border: bool  # cells big enough for a white border (on small cells it would hide them)
    font: int = FONT_SIZE  # axis labels and titles, px
    ink: str | None = None  # axis text colour (None: the Streamlit theme's faint grey)
    image: bool = False  # too many cells to draw one by one: the cells are one picture
    col_step: int = 0  # pixels per column when wider than `step` (presenter mode's numbers)


IMAGE_CELLS = 2048  # grids with more cells are drawn as one image (see heatmap_image)
STEPS = (72, 56, 34, 28, 22, 16, 12, 10, 8, 6, 5)  # a few cell sizes, so a few specs
SQUARE_MAX = 336  # px: the widest grid of square cells (64 x 5), so it fits a projector's page
SQUARE_MAX_PRESENT = 560  # presenter mode: the sidebar is closed, the charts grow
# presenter mode: the cells' height, so a section fits 853 x 480 CSS px (1280 x 720 at 150 %)
# under its navigation row, title and formula line
MAX_HEIGHT_PRESENT = 200
NUMBER_STEP = 64  # presenter mode: a column wide enough for "-0.4286" at 16 px
LABEL_LIMIT = 80  # px: longer axis labels end in an ellipsis (the tooltip has them whole)
CHAR_PX = 8  # about one character of a 14 px label


def snap(step: int) -> int:
    """The largest of STEPS that is at most `step` (0 when even the smallest is too big)."""
    return next((s for s in STEPS if s <= step), 0)


def layout(
    n_rows: int,
    n_cols: int,
    cell: int = 34,
    col_chars: int = 3,
    present: str | None = None,
    numbers: bool = False,
) -> Layout:
    """Square cells whenever the grid fits SQUARE_MAX wide (every T x T map, T up to 64);
    wide matrices (C up to 256) go under their table, as wide as the page. Column labels stand
    upright only when the longest (col_chars characters) fits its cell. `present` (the theme,
    "light" or "dark") is presenter mode: larger grids, larger and darker axis text."""
    font = PRESENT_FONT if present else FONT_SIZE
    square_max = SQUARE_MAX_PRESENT if present else SQUARE_MAX
    max_height = MAX_HEIGHT_PRESENT if present else MAX_HEIGHT
    step = snap(min(cell, square_max // n_cols, max_height // n_rows))
    square = step > 0
    if not square:
        step = snap(max(STEPS[-1], min(cell, max_height // n_rows)))
    text = n_rows <= TEXT_LIMIT and n_cols <= TEXT_LIMIT
    # presenter mode: rows as high as the screen allows, columns wide enough for the numbers
    wide = present and numbers and text
    col_step = max(step, min(NUMBER_STEP, square_max // n_cols)) if wide else step
    return Layout(
        step=step, square=square, col_step=col_step,
        upright_x=square and col_chars * CHAR_PX * font / FONT_SIZE + 4 <= col_step,
        text=text,
        cross=n_rows * n_cols <= 40 * 40, border=square and step >= 12,
        font=font, ink=INK.get(present) if present else None,
        image=n_rows * n_cols > IMAGE_CELLS,
    )  # fmt: skip


def heatmap(
    *,
    kind: str,
    row_title: str,
    col_title: str,
    shape: Layout,
    title: str = "",
    numbers: bool = False,
    legend: str | None = None,
) -> alt.LayerChart:
    """A heatmap for long-form cells (row_title, col_title, value, printed, masked[, SCALE_FIELD])
    as made by tables.long_form with names=(row_title, col_title), which the caller passes as
    the chart's data.

    The chart holds no data and no size, only a step per cell, so one spec serves every matrix
    of the same kind and layout: rows run top to bottom and columns left to right, sorted by
    the row and column numbers the data carries; the tooltip names both and the printed value
    ('masked: …' for masked cells)."""
    if shape.image:
        return heatmap_image(kind=kind, row_title=row_title, col_title=col_title, shape=shape,
                             title=title, legend=legend)  # fmt: skip
    x, y = axes(shape, row_title, col_title)
    base = alt.Chart().encode(
        x=x,
        y=y,
        tooltip=[
            alt.Tooltip(f"{row_title}:N", title=row_title),
            alt.Tooltip(f"{col_title}:N", title=col_title),
            alt.Tooltip("printed:N", title="value"),
        ],
    )  # fmt: skip
    border = {"stroke": "white", "strokeWidth": 0.5} if shape.border else {}
    cells = base.mark_rect(**border).encode(
        color=alt.condition(
            "datum.masked",
            alt.value(MASKED_COLOUR),
            colour(kind, "value", legend, shape.font > FONT_SIZE),
        ),
    )
    if kind != "weight":
        cells = cells.transform_extent(SCALE_FIELD, EXTENT)
    layers = [cells]
    if shape.cross:
        layers.append(base.transform_filter("datum.masked").mark_text(text="×", color="white"))
    if numbers and shape.text:
        dark = DARK["weight" if kind == "weight" else "diverging"]
        layers.append(
            base.transform_filter("!datum.masked")
            .mark_text(fontSize=16 if shape.font > FONT_SIZE else FONT_SIZE - 2)
            .encode(
                text="printed:N",
                color=alt.condition(dark, alt.value("white"), alt.value("black")),
            )
        )
    return finish(alt.layer(*layers), shape, title)


def row_labels(step: int, font: int) -> tuple[int, bool | str]:
    """The font size of a heatmap's row labels in `step` px rows, and Vega's labelOverlap: a
    label smaller than its row fits it, so every one is drawn (Vega's "greedy" thinning counts
    a label's box with its line spacing: it dropped every other token at 20 px in 28 px rows);
    labels as large as their rows are thinned."""
    size = min(font, max(8, step - 1))
    return size, (False if size < step else "greedy")


def refit_labels(spec: dict, step: int) -> dict:
    """A heatmap's spec redrawn with `step` px cells (presenter mode fits maps to the screen):
    its axis labels sized and thinned for those cells, as `axes` does for the layout's."""
    size, overlap = row_labels(
        step, spec.get("config", {}).get("axis", {}).get("labelFontSize", FONT_SIZE)
    )
    layers = []
    for layer in spec.get("layer", []):
        encoding = dict(layer.get("encoding", {}))
        for channel in ("x", "y"):
            if "axis" in encoding.get(channel, {}):
                axis = encoding[channel]["axis"]
                upright = channel == "x" and axis.get("labelAngle") == 0  # its width unknown here
                axis = axis | {
                    "labelFontSize": size,
                    "labelOverlap": "greedy" if upright else overlap,
                }
                encoding[channel] = encoding[channel] | {"axis": axis}
        layers.append(layer | {"encoding": encoding})
    return spec | {"layer": layers} if layers else spec


def axes(shape: Layout, row_title: str, col_title: str) -> tuple[alt.X, alt.Y]:
    """A heatmap's axes: columns on top, rows down the side, in the order of the data's row
    and column numbers (tables.ROW_ORDER, COLUMN_ORDER), not the order the browser holds them;
    labels thinned where they would overprint and cut at a width (the tooltip and table have
    them)."""
    label_limit = round(LABEL_LIMIT * shape.font / FONT_SIZE)
    # cells smaller than the font: a smaller font, so every token keeps its label (T = 24)
    label_size, y_overlap = row_labels(shape.step, shape.font)
    # a wide matrix's columns share the page's width (C = 128: 6 px each), unknown here: thinned
    x_fits = shape.upright_x or (shape.square and label_size < (shape.col_step or shape.step))
    x_overlap = False if x_fits else "greedy"
    x = alt.X(f"{col_title}:N", sort=alt.EncodingSortField(COLUMN_ORDER, op="min"), title=col_title,
              axis=alt.Axis(labelAngle=0 if shape.upright_x else -90, orient="top",
                            labelOverlap=x_overlap, labelFlush=False, labelFontSize=label_size,
                            labelLimit=(shape.col_step or shape.step) if shape.upright_x
                            else label_limit))  # fmt: skip
    y = alt.Y(f"{row_title}:N", sort=alt.EncodingSortField(ROW_ORDER, op="min"), title=row_title,
              axis=alt.Axis(labelOverlap=y_overlap, labelFlush=False, labelBaseline="middle",
                            labelFontSize=label_size, labelLimit=label_limit))  # fmt: skip
    return x, y


def colour(kind: str, field: str, legend: str | None = None, beside: bool = False) -> alt.Color:
    """The colour encoding of a heatmap's numbers, with its legend under the chart (`beside`:
    to its right, presenter mode's screen being wider than high), titled `legend` (what the
    numbers are: "bug − correct"), or by the kind."""
    place = (
        alt.Legend(orient="right", direction="vertical", gradientLength=100)
        if beside
        else alt.Legend(orient="bottom", direction="horizontal", gradientLength=140)
    )
    return alt.Color(
        f"{field}:Q",
        scale=colour_scale(kind),
        title=legend or ("weight" if kind == "weight" else "value"),
        legend=place,
    )


def finish(chart: alt.LayerChart, shape: Layout, title: str) -> alt.LayerChart:
    """A heatmap's size and text. pad: the steps size the cells, axes and legend come on top
    (Streamlit's default "fit" would squeeze them all into the chart's size); fit-x: the width
    follows the column."""
    step = alt.Step(shape.step)
    if shape.square:
        width = alt.Step(shape.col_step or shape.step)
        sizes = dict(width=width, height=step, autosize=alt.AutoSizeParams(type="pad"))
    else:
        sizes = dict(width="container", height=step,
                     autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))  # fmt: skip
    chart = chart.properties(title=title, **sizes)
    ink = {"labelColor": shape.ink, "titleColor": shape.ink} if shape.ink else {}
    return chart.configure_axis(
        labelFontSize=shape.font, titleFontSize=shape.font, **ink
    ).configure_legend(labelFontSize=shape.font - 2, titleFontSize=shape.font - 2, **ink)


def heatmap_image(
    *,
    kind: str,
    row_title: str,
    col_title: str,
    shape: Layout,
    title: str = "",
    legend: str | None = None,
) -> alt.LayerChart:
    """A large heatmap (more than IMAGE_CELLS cells) for tables.image_form's data: the cells
    are one picture (a pixel per cell, or, when some are masked, a square of pixels per cell
    with a cross over the masked ones; scaled up without smoothing, so every cell stays a sharp
    square of its own colour), drawn once, instead of thousands of marks the browser would lay
    out and paint one by one on every slider move. Invisible bands carry the axes (the token
    and feature labels) and the colour legend, from the same scale as the small heatmaps. The
    price: no tooltip per cell (where a table is shown with the chart, it has every number;
    blocks.picture_note says so)."""
    picture = (
        alt.Chart()
        .transform_filter("isValid(datum.image)")
        .mark_image(aspect=False, smooth=False, align="left", baseline="top",
                    width=alt.ExprRef("width"), height=alt.ExprRef("height"))
        .encode(url="image:N", x=alt.value(0), y=alt.value(0))
    )  # fmt: skip
    x, y = axes(shape, row_title, col_title)
    columns = (
        alt.Chart()
        .transform_filter(f"isValid(datum[{col_title!r}])")
        .transform_calculate(legend="0")  # a number for the colour legend to hang on
        .mark_rect(opacity=0)
        .encode(x=x, color=colour(kind, "legend", legend, shape.font > FONT_SIZE))
    )
    if kind != "weight":
        columns = columns.transform_extent(SCALE_FIELD, EXTENT)
    rows = alt.Chart().transform_filter(f"isValid(datum[{row_title!r}])").mark_rect(opacity=0)
    return finish(alt.layer(picture, columns, rows.encode(y=y)), shape, title)


# Vega's colour schemes (vega-scale's continuous schemes, 11 stops each, interpolated linearly
# in RGB): the picture's colours are the colours Vega would have painted, and its legend shows.
SCHEME_STOPS = {
    "blueorange": "134b852f78b35da2cb9dcae1d2e5eff2f0ebfce0bafbbf74e8932fc5690d994a07",
    "blues": "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
    "purplegreen": "5b1667834792a67fb6c9aed3e6d6e8eff0efd9efd5aedda971bb75368e490e5e29",
}


def scheme_colours(kind: str, t: np.ndarray) -> np.ndarray:
    """RGB (uint8, shape t.shape + (3,)) of positions t in [0, 1] on kind's scheme, as Vega's
    piecewise RGB interpolation rounds them."""
    hex_stops = SCHEME_STOPS[SCHEMES["projection" if kind == "embedding" else kind]]
    stops = np.array([[int(hex_stops[i + c : i + c + 2], 16) for c in (0, 2, 4)]
                      for i in range(0, len(hex_stops), 6)], dtype=np.float64)  # fmt: skip
    at = np.linspace(0.0, 1.0, len(stops))
    t = np.clip(t, 0.0, 1.0)
    rgb = np.stack([np.interp(t, at, stops[:, c]) for c in range(3)], axis=-1)
    return np.floor(rgb + 0.5).astype(np.uint8)


def cell_colours(
    values: np.ndarray, kind: str, bound: float | None, masked: np.ndarray | None = None
) -> np.ndarray:
    """The (rows, cols, 3) RGB picture of a matrix: weights on 0..1, anything else on the
    symmetric scale [-bound, bound]; masked cells flat grey."""
    t = values if kind == "weight" else (values + bound) / (2 * bound)
    rgb = scheme_colours(kind, np.nan_to_num(t, nan=0.5))
    if masked is not None:
        rgb[masked] = [int(MASKED_COLOUR[i : i + 2], 16) for i in (1, 3, 5)]
    return rgb


def crossed_cells(picture: np.ndarray, masked: np.ndarray, size: int) -> np.ndarray:
    """The picture with every cell `size` x `size` pixels and a white cross over each masked
    cell, as the small heatmaps mark them (their "×"): drawn at the cell's size on screen, a
    picture's masked cells stay crossed out, not just grey. (rows, cols, 3) -> (rows * size,
    cols * size, 3)."""
    big = np.repeat(np.repeat(picture, size, axis=0), size, axis=1)
    diagonal = np.eye(size, dtype=bool)
    cross = diagonal | diagonal[:, ::-1]  # (size, size)
    big[np.kron(masked, cross).astype(bool)] = 255
    return big


# Okabe and Ito's colour-blind-safe palette (no black: it vanishes in the dark theme), and a dash
# pattern and point shape per series, so no series is told apart by colour alone.
SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7"]
SERIES_DASHES = [[1, 0], [8, 4], [2, 3], [10, 3, 2, 3]]
SERIES_SHAPES = ["circle", "square", "triangle-up", "diamond"]


def series_encodings(field: str, groups: list[str], legend: alt.Legend | None = None) -> dict:
    """Colour, dash (and shape) per group, from the fixed series styles, with one legend."""
    n = len(groups)
    legend = legend or alt.Legend()
    return {
        "color": alt.Color(f"{field}:N", title=field, sort=groups, legend=legend,
                           scale=alt.Scale(domain=groups, range=SERIES_COLOURS[:n])),
        "strokeDash": alt.StrokeDash(f"{field}:N", sort=groups, legend=legend, title=field,
                                     scale=alt.Scale(domain=groups, range=SERIES_DASHES[:n])),
    }  # fmt: skip


def histogram(
    counts: pd.DataFrame, *, x: str, group: str, title: str, legend_columns: int | None = None
) -> alt.Chart:
    """Histograms as step outlines, one colour and dash per group (lesson 4: q·k for several
    d_k), from precomputed counts (columns x = left bin edge, count, group; the last edge of a
    group closes its outline with the last count). The x axis is an ordinary number line, so
    its ticks fall on round values, 0 among them, not on bin edges. The legend is one row over
    the chart, or `legend_columns` groups a row (a narrow chart cuts a long row off)."""
    groups = list(dict.fromkeys(counts[group]))
    columns = {} if legend_columns is None else {"columns": legend_columns}
    edge = float(np.abs(counts[x]).max())
    return (
        alt.Chart(counts)
        .mark_line(interpolate="step-after", strokeWidth=2.5)
        .encode(
            x=alt.X(f"{x}:Q", title=title, scale=alt.Scale(domain=[-edge, edge], nice=True)),
            y=alt.Y("count:Q", title="count"),
            **series_encodings(
                group, groups, alt.Legend(orient="top", symbolStrokeWidth=2.5, **columns)
            ),
            tooltip=[
                alt.Tooltip(f"{group}:N"),
                alt.Tooltip(f"{x}:Q", format=".2f", title="bin from"),
                alt.Tooltip("count:Q"),
            ],
        )
        .properties(height=280, description=f"Histogram of {title}, one outline per {group}")
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
        .configure_legend(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE - 2)
    )


def bars(frame: pd.DataFrame | None, *, x: str, y: str, title: str, y_domain=None) -> alt.Chart:
    """Vertical bars of y per x category (a softmax row's weights, say), in the frame's order.
    With no frame, a spec for any data with those fields, in the data's own order (sent with
    the data apart: one spec serves every row, as the heatmaps' do)."""
    scale = alt.Scale(domain=list(y_domain)) if y_domain else alt.Undefined
    order = None if frame is None else list(frame[x])  # None: the data's order, unsorted
    return (
        (alt.Chart() if frame is None else alt.Chart(frame))
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X(f"{x}:O", sort=order, title=x, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{y}:Q", scale=scale, title=y),
            tooltip=[alt.Tooltip(f"{x}:N"), alt.Tooltip(f"{y}:Q", format=".4f")],
        )
        .properties(height=220, title=title, description=f"Bar chart: {title}, {y} per {x}")
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
    )


MARKS = "marks"  # the dataset of a line chart's labelled rules


TITLE = "{title}"  # the title of a spec built once for any title (`with_data` sets it)


def lines(
    frame: pd.DataFrame | None,
    *,
    x: str,
    y: str,
    group: str,
    title: str,
    log_x=False,
    marks: dict[str, float] | None = None,
    groups: list[str] | None = None,
    whole_x: bool | None = None,
    legend: str = "right",
) -> alt.LayerChart:
    """One line per group of y against x (lesson 4: entropy and gradient against the scale),
    with labelled vertical rules at `marks` ({label: x}). With no frame, a spec for any data
    with those fields (sent apart, as the heatmaps' is): `groups` and `whole_x` then say what
    the frame would have (the groups in order, whether x holds whole numbers). The legend is at
    the plot's right, or where `legend` says ("top": a narrow chart keeps its plot)."""
    # whole-number x (decode steps, training steps): whole-number ticks, never 0.2 of a step
    whole = pd.api.types.is_integer_dtype(frame[x]) if whole_x is None else whole_x
    groups = list(dict.fromkeys(frame[group])) if groups is None else groups
    layers = [group_lines(frame, x, y, group, groups, log_x=log_x, whole=whole, legend=legend)]
    if marks:
        layers += mark_layers()
    return (
        alt.layer(*layers)
        .properties(
            height=260,
            title=title,
            description=f"Line chart: {title}, {y} against {x}, one line per {group}",
            **({"datasets": {MARKS: mark_rows(marks)}} if marks else {}),
        )
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
        .configure_legend(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE - 2)
    )


def group_lines(
    frame: pd.DataFrame | None,
    x: str,
    y: str,
    group: str,
    groups: list[str],
    *,
    log_x: bool,
    whole: bool,
    legend: str,
) -> alt.Chart:
    """`lines`' curves: one line of y against x per group, each with its colour and shape."""
    x_scale = alt.Scale(type="log") if log_x else alt.Undefined
    x_axis = alt.Axis(tickMinStep=1, format="d") if whole else alt.Undefined
    # on top, one group a row: a row of them is cut off where a narrow plot ends
    rows = {"columns": 1} if legend == "top" else {}
    return (
        (alt.Chart() if frame is None else alt.Chart(frame))
        .mark_line(point=alt.OverlayMarkDef(size=36), strokeWidth=2.5)
        .encode(
            x=alt.X(f"{x}:Q", scale=x_scale, title=x, axis=x_axis),
            y=alt.Y(f"{y}:Q", title=y),
            **series_encodings(group, groups, alt.Legend(orient=legend, labelLimit=320,
                                                         symbolStrokeWidth=2.5, **rows)),
            shape=alt.Shape(f"{group}:N", sort=groups, title=group,
                            scale=alt.Scale(domain=groups, range=SERIES_SHAPES[: len(groups)]),
                            legend=alt.Legend(orient=legend, labelLimit=320, **rows)),
            tooltip=[
                alt.Tooltip(f"{group}:N"),
                alt.Tooltip(f"{x}:Q", format=".3g"),
                alt.Tooltip(f"{y}:Q", format=".4f"),
            ],
        )
    )  # fmt: skip


def mark_layers() -> list[alt.Chart]:
    """`lines`' labelled vertical rules, their rows in the spec's dataset MARKS (mark_rows).
    The labels are above the plot, one line each, so they cross neither each other nor a curve
    (inside the plot they ran over the lines: issue 17 item 17): `above` is each label's height
    in pixels (no scale). Two layers for every mark (a pair of layers per mark, each on a
    DataFrame, was 55 ms of a new lesson 4 spec), which `with_data` fills in a spec built
    once."""
    base = alt.Chart(alt.NamedData(MARKS)).encode(x=alt.X("at:Q"))
    return [
        base.mark_rule(strokeDash=[4, 4], color="gray", strokeWidth=1.5),
        base.mark_text(align="left", dx=4, baseline="bottom",
                       color="gray", fontSize=FONT_SIZE - 2)
        .encode(text="mark:N", y=alt.Y("above:Q", scale=None, axis=None)),
    ]  # fmt: skip


def mark_rows(marks: dict[str, float]) -> list[dict]:
    """The rules' rows of `lines`: where each is and its label's height above the plot."""
    return [
        {"at": at, "mark": label, "above": -4 - 16 * (len(marks) - 1 - row)}
        for row, (label, at) in enumerate(marks.items())
    ]


def with_data(spec: dict, title: str | None = None, **datasets: list[dict] | pd.DataFrame) -> dict:
    """A spec built once (and kept) with a setting's own `title` (for TITLE, in its
    description too) and rows in its named `datasets`: a copy of the top level only, the rest
    shared, so a setting costs a few dict entries instead of an Altair build (lesson 4's
    curves: 17-34 ms)."""
    top = {}
    if title is not None:
        top = {"title": title, "description": spec["description"].replace(TITLE, title)}
    if datasets:
        top["datasets"] = spec.get("datasets", {}) | datasets
    return spec | top


def to_spec(chart: alt.TopLevelMixin, validate: bool = False) -> dict:
    """The chart's Vega-Lite spec with its data inline (a 64 x 256 matrix has 16,384 cells, over
    Altair's default 5,000-row guard, which Streamlit lifts only inside st.altair_chart).
    Altair's schema validation is half the cost of a new spec on a student's rerun; the tests
    validate every layout instead (validate=True)."""
    with alt.data_transformers.disable_max_rows():
        spec = chart.to_dict(validate=validate)
    # Canvas, not SVG: a 64 x 64 heatmap is 4,096 SVG nodes for the browser to rebuild on every
    # slider move. vega-embed reads its options from usermeta.embedOptions.
    spec.setdefault("usermeta", {})["embedOptions"] = {"renderer": "canvas"}
    datasets = spec.get("datasets", {})
    if datasets.get("empty") == [{}]:  # a chart built without data: the caller's data frame
        del datasets["empty"]  # becomes the top-level data every layer inherits
        if not datasets:
            del spec["datasets"]
        for layer in spec.get("layer", []):
            if layer.get("data") == {"name": "empty"}:
                del layer["data"]
        if spec.get("data") == {"name": "empty"}:
            del spec["data"]
    return spec


CURVE_COLOUR, RULE_COLOUR = "#0072B2", "#D55E00"  # Okabe-Ito blue and vermillion


def training_curve(frame: pd.DataFrame, *, y: str, title: str, at_step: int) -> alt.LayerChart:
    """One training curve (loss or accuracy against step) with a rule at the step shown."""
    curve = (
        alt.Chart(frame)
        .mark_line(color=CURVE_COLOUR, point=alt.OverlayMarkDef(size=12))
        .encode(
            x=alt.X("step:Q", title="training step"),
            y=alt.Y("value:Q", title=y),
            tooltip=[alt.Tooltip("step:Q"), alt.Tooltip("value:Q", title=y, format=".3f")],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"step": [at_step]}))
        .mark_rule(color=RULE_COLOUR, strokeWidth=2, strokeDash=[4, 3])
        .encode(x="step:Q", tooltip=[alt.Tooltip("step:Q", title="step shown")])
    )
    return (
        alt.layer(curve, rule)
        .properties(
            height=220, title=title, description=f"Line chart: {title}, {y} against training step"
        )
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
    )


PUSH_COLOURS = {"up": "#0072B2", "down": "#D55E00"}  # Okabe-Ito blue and vermillion


def pushes(
    frame: pd.DataFrame,
    *,
    part: str,
    value: str,
    title: str,
    step: int = 24,
    legend: str = "bottom",
) -> alt.Chart:
    """Horizontal bars of a signed `value` per `part`, in the frame's order, coloured by sign
    (up blue, down vermillion, named in the legend too: not colour alone), a rule at 0; a band
    of `step` px a part, the legend at `legend` (under the bars: a phone keeps their width)."""
    data = frame.assign(direction=["up" if v >= 0 else "down" for v in frame[value]])
    order = list(frame[part])
    bars_ = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y(f"{part}:N", sort=order, title=part,
                    axis=alt.Axis(labelLimit=260, labelOverlap=False)),
            x=alt.X(f"{value}:Q", title=value),
            color=alt.Color(
                "direction:N", title="pushes",
                scale=alt.Scale(domain=list(PUSH_COLOURS), range=list(PUSH_COLOURS.values())),
                legend=alt.Legend(orient=legend, direction="horizontal"),
            ),
            tooltip=[alt.Tooltip(f"{part}:N"), alt.Tooltip(f"{value}:Q", format="+.4f")],
        )
    )  # fmt: skip
    rule = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="#7a7a7a").encode(x="zero:Q")
    return (
        alt.layer(bars_, rule)
        .properties(
            height=alt.Step(step), title=title,
            description=f"Bar chart: {title}, {value} per {part}",
        )
        .configure_axis(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE)
        .configure_legend(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE - 2)
    )  # fmt: skip


def points(frame: pd.DataFrame, *, x: str, y: str, title: str) -> alt.Chart:
    """One dot per row, y against x (an activation's output against its input)."""
    return (
        alt.Chart(frame)
        .mark_circle(size=28, color=CURVE_COLOUR, opacity=0.7)
        .encode(
            x=alt.X(f"{x}:Q", title=x),
            y=alt.Y(f"{y}:Q", title=y),
            tooltip=[alt.Tooltip(f"{x}:Q", format=".4f"), alt.Tooltip(f"{y}:Q", format=".4f")],
        )
        .properties(height=260, title=title, description=f"Scatter plot: {title}, {y} against {x}")
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
    )
