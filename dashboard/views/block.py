"""Lesson 14's blocks: the block around attention, on lesson 12's Shakespeare GPT reading the
student's text (attention/lm/block.py): the residual stream and what each stage adds, the logit
lens, which head or MLP pushed a character's logit, LayerNorm on one row, the MLP's shape.
Every sentence about a number, a head or a layer is computed from the numbers shown."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import partial

import nbformat
import pandas as pd
import streamlit as st

from attention.drills import Drill
from attention.lm import block as maths
from attention.lm.block import Lens, Stream
from attention.lm.block_questions import SHOWN_FEATURES, block_questions
from attention.lm.corpus import GLYPHS, vocabulary
from attention.lm.model import parameter_groups
from attention.lm.training import SIZE
from dashboard import controls, state, trained
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import show_chart, show_frame
from dashboard.render.matrices import matrix_view
from dashboard.render.presenter import Section, presenter_theme
from dashboard.shakespeare import TEXT_DEFAULT, position_labels
from dashboard.spec import LessonSpec
from dashboard.text import plain

GUESS = "its final guess"  # the character picker's first option: the model's own top-1
STAGE_DEFAULT = "MLP 1"  # the stream the final LayerNorm and U read
LN_DEFAULT = "LN1 of layer 0"
POSITION_TEXT = "blk_pos_text"  # the text the position slider was last drawn for
PRESENT_ROWS = 24  # positions of the stream a projector's section shows


def glyph(char: int) -> str:
    c = vocabulary()[char]
    return GLYPHS.get(c, c)


def shown_glyph(char: int) -> str:
    """A character as markdown shows it exactly ('*' stays a star, not emphasis)."""
    return plain(glyph(char))


def percent(p: float) -> str:
    return f"{100 * p:.1f} %"


# --- the model on the text, cached ----------------------------------------------------------


@state.cached
def stream(text: str) -> Stream:
    """The model's forward on the text, written out (ValueError when it has nothing to read)."""
    state.one_torch_thread()
    return maths.stream_of(trained.language_model(), text)


@state.cached
def lens(text: str) -> Lens:
    return maths.logit_lens(trained.language_model(), stream(text))


@state.cached(keep=True)
def agreement() -> maths.Agreement:
    """How often each stage already has the final guess, on held-out text (once per server)."""
    state.one_torch_thread()
    model = trained.language_model()
    return maths.guess_agreement(model, maths.held_out_windows(length=model.context))


@dataclass(frozen=True, eq=False)
class Text:
    """The text the page reads: the student's, or the default when theirs cannot be read."""

    text: str
    stream: Stream


def text_box() -> str:
    """The student's text (bound to the URL as ?blk_text=)."""
    return st.text_area(
        f"Your text (one token per character; the model reads at most {SIZE.context})",
        layout.remember_default("blk_text", TEXT_DEFAULT),
        key="blk_text",
        bind="query-params",
        max_chars=controls.MAX_TEXT,
        height=90,
    )


def current_text(text: str | None = None, say: bool = True) -> Text:
    """The text read (the box's, or the link's where no box is drawn), with what the model
    dropped or cut said; the default text, with the reason, when it has nothing to read."""
    text = controls.lesson_value("blk_text", None, TEXT_DEFAULT) if text is None else text
    try:
        read = stream(text)
    except ValueError as error:
        if say:
            st.warning(plain(f"{error}."), icon=":material/edit_off:")
            st.caption("Showing the default text, Romeo's line, instead.")
        return Text(TEXT_DEFAULT, stream(TEXT_DEFAULT))
    notice = trained.read_text(text).notice
    if say and notice:
        st.info(plain(notice), icon=":material/info:")
    return Text(text, read)


def position_picker(read: Text) -> int:
    """The position read (?blk_pos=): a new text starts at its last."""
    T = read.stream.T
    last = stream(TEXT_DEFAULT).T - 1  # Reset's: the default text's last
    if st.session_state.get(POSITION_TEXT, read.text) != read.text:
        st.session_state["blk_pos"] = T - 1
    st.session_state[POSITION_TEXT] = read.text
    tokens = read.stream.tokens()
    raw = controls.linked("blk_pos")
    if T == 1:  # a slider of one value cannot move
        st.caption(plain(f"Position: 0, '{tokens[0]}' (the text has one character)."))
        controls.link_note("blk_pos", raw, 0, "a position of the text, 0 to 0")
        return 0
    position = st.select_slider(
        "Position: the model guesses the character after it",
        list(range(T)),
        value=layout.remember_default("blk_pos", T - 1, reset_to=last),
        key="blk_pos",
        bind="query-params",
    )
    controls.link_note("blk_pos", raw, position, f"a position of the text, 0 to {T - 1}")
    after = f"'{tokens[position + 1]}' follows it" if position + 1 < T else "the text ends there"
    st.caption(plain(f"Position {position} holds '{tokens[position]}'; {after}."))
    return position


def char_options() -> list[str]:
    return [GUESS, *(GLYPHS.get(c, c) for c in vocabulary())]


def char_picker() -> str:
    raw = controls.linked("blk_char")
    picked = st.selectbox(
        "Character to follow",
        char_options(),
        index=char_options().index(layout.remember_default("blk_char", GUESS)),
        key="blk_char",
        bind="query-params",
        help="Its probability at each stage, and who pushed its logit. By default the model's "
        "final guess at the position.",
    )
    valid = f"one of the model's {len(vocabulary())} characters (␣ a space, ⏎ a newline)"
    controls.link_note("blk_char", raw, picked, valid)
    return picked


def followed(read: Text, position: int, picked: str) -> int:
    """The character followed: the picked one, or the model's final guess."""
    if picked == GUESS or picked not in char_options():
        return lens(read.text).likeliest(-1, position)
    return maths.char_id(picked)


def current_choice() -> tuple[Text, int, int]:
    """Text, position and character where the page draws no controls (presenter mode)."""
    read = current_text(say=False)
    position = controls.lesson_value("blk_pos", range(read.stream.T), read.stream.T - 1)
    picked = controls.lesson_value("blk_char", char_options(), GUESS)
    return read, position, followed(read, position, picked)


# --- one block, written out --------------------------------------------------------------


def show_block(screen: tuple[int, int] | None = None) -> None:
    """The block's formula, with the model's sizes."""
    shape = maths.mlp_shape(trained.language_model())
    st.latex(
        r"\begin{aligned} x_{\text{mid}} &= x + \operatorname{MultiHead}(\operatorname{LN}_1(x))"
        r"\\ x_{\text{out}} &= x_{\text{mid}} + \operatorname{MLP}(\operatorname{LN}_2"
        r"(x_{\text{mid}})) \\ \operatorname{MLP}(h) &= \operatorname{GELU}(h W_{\text{in}} + "
        r"b_{\text{in}})\, W_{\text{out}} + b_{\text{out}} \end{aligned}"
    )
    st.markdown(
        f"This model stacks **{SIZE.n_layers} blocks**. The stream x is {SIZE.d_model} numbers a "
        f"position (C = {shape.d_model}); each block's attention has {SIZE.n_heads} heads, and "
        f"its MLP widens each position to {shape.hidden} numbers (4C), applies GELU and narrows "
        f"back to {shape.d_model}. Before the first block: x = E[character] + P[position]; "
        "after the last: logits = LN_f(x) Uᵀ, U the unembedding (one row a character)."
    )
    if screen is None:
        with st.expander("Show the code: one block, as this page runs it", icon=":material/code:"):
            st.code(inspect.getsource(maths.run_block), language="python")


# --- the residual stream -----------------------------------------------------------------


def stage_picker(read: Text) -> str:
    names = [s.name for s in read.stream.stages]
    chosen = st.segmented_control(
        "Show the stream after",
        names,
        default=layout.remember_default("blk_stage", STAGE_DEFAULT),
        key="blk_stage",
        bind="query-params",
    )
    return chosen if chosen in names else STAGE_DEFAULT


def sizes_frame(sizes: tuple[maths.StageSize, ...]) -> pd.DataFrame:
    return pd.DataFrame({
        "stage": [s.stage.title for s in sizes],
        "‖what it adds‖": [round(s.added, 2) for s in sizes],
        "‖stream after it‖": [round(s.stream, 2) for s in sizes],
    })  # fmt: skip


def sizes_words(sizes: tuple[maths.StageSize, ...], position: int) -> str:
    """Which stage adds the most at the position, and how the stream's size changes."""
    writers = sizes[1:]  # each attention and MLP (the first stage is the embedding itself)
    most = max(writers, key=lambda s: s.added)
    least = min(writers, key=lambda s: s.added)
    return (
        f"At position {position} the largest addition is {most.stage.title.removeprefix('after ')}"
        f"'s (size {most.added:.2f}), the smallest {least.stage.title.removeprefix('after ')}'s "
        f"({least.added:.2f}). The stream's size goes from {sizes[0].stream:.2f} after the "
        f"embedding to {sizes[-1].stream:.2f} at the end: each stage adds its part to what is "
        "there, and nothing replaces it."
    )


def show_stream(
    read: Text, position: int, stage: str, screen: tuple[int, int] | None = None
) -> None:
    """The stream after a stage as a T × C picture."""
    s = read.stream
    index = [x.name for x in s.stages].index(stage)
    title = s.stages[index].title
    name = f"The residual stream {title}: T × C = {s.T} × {SIZE.d_model}"
    # a projector shows the PRESENT_ROWS positions up to the one read: all 64 do not fit
    first = 0 if screen is None else max(0, position + 1 - PRESENT_ROWS)
    last = s.T if screen is None else max(position + 1, min(s.T, PRESENT_ROWS))
    labels = tuple(position_labels(s.tokens()))[first:last]
    features = tuple(str(c) for c in range(SIZE.d_model))
    view = matrix_view(labels, features, _matrix=s.resid()[index][first:last],
                       kind="projection", row_title="position", col_title="feature", title="",
                       present=presenter_theme())  # fmt: skip
    if screen is None:
        st.markdown(f"**{name}**")
        show_heatmap(view, name)
    else:
        st.caption(f"{name}; positions {first} to {last - 1} shown.")
        blocks.show_fitted(view, name, *screen)


def show_sizes(read: Text, position: int, screen: tuple[int, int] | None = None) -> None:
    """What each stage adds at the position, and the stream's size after it."""
    sizes = maths.stage_sizes(read.stream, position)
    if screen is None:
        show_frame(("block_sizes", read.text, position), lambda: sizes_frame(sizes),
                   hide_index=True)  # fmt: skip
    else:  # st.table pads every float to 4 decimals (2.6400 for 2.64): the 2 it is rounded to
        st.table(sizes_frame(sizes).style.format(precision=2), hide_index=True)
    st.markdown(sizes_words(sizes, position))


# --- the logit lens ----------------------------------------------------------------------


def lens_frame(shown: Lens, position: int, char: int) -> pd.DataFrame:
    rows = []
    for index, stage in enumerate(shown.stages):
        top = shown.top(index, position, 3)
        row = {"stage": stage.title}
        for rank, (c, p) in zip(("1st", "2nd", "3rd"), top, strict=True):
            row[rank] = f"'{GLYPHS.get(c, c)}' {percent(p)}"
        row[f"p('{glyph(char)}')"] = percent(shown.probability(index, position, char))
        rows.append(row)
    return pd.DataFrame(rows)


def lens_words(read: Text, shown: Lens, position: int, char: int) -> str:
    """Where the final guess forms, and the followed character's probability, from the lens."""
    last = len(shown.stages) - 1
    guess = shown.likeliest(last, position)
    first = shown.first_stage_guessing(position, guess)
    said = [
        f"The model's final guess after position {position} is **'{shown_glyph(guess)}'** "
        f"({percent(shown.probability(last, position, guess))})."
    ]
    if first == 0:
        said.append(
            "It is already the likeliest after the embedding alone, where the stream holds "
            "only the character and its position, and stays so at every stage."
        )
    else:
        before = "; ".join(
            f"'{shown_glyph(shown.likeliest(i, position))}' {shown.stages[i].title}"
            for i in range(first)
        )
        said.append(
            f"It is the likeliest from {shown.stages[first].title} on; before that, the lens's "
            f"likeliest was {before}."
        )
    if char != guess:
        ranks = [i for i in range(last + 1) if shown.likeliest(i, position) == char]
        where = (
            "it is the likeliest " + ", ".join(shown.stages[i].title for i in ranks)
            if ranks
            else "it is never the likeliest"
        )
        said.append(
            f"'{shown_glyph(char)}' goes from {percent(shown.probability(0, position, char))} "
            f"after the embedding to {percent(shown.probability(last, position, char))} at the "
            f"end: {where}."
        )
    if position + 1 < read.stream.T:
        nxt = int(read.stream.ids[position + 1])
        said.append(
            f"Your text has '{shown_glyph(nxt)}' next, which the model gives "
            f"{percent(shown.probability(last, position, nxt))}."
        )
    return " ".join(said)


def show_lens(read: Text, position: int, char: int, screen: tuple[int, int] | None = None) -> None:
    shown = lens(read.text)
    frame = lens_frame(shown, position, char)
    (st.table if screen else st.dataframe)(frame, hide_index=True)
    st.markdown(lens_words(read, shown, position, char))


def agreement_words(figures: maths.Agreement) -> str:
    shares = ", ".join(
        f"{stage.title} {percent(share)}"
        for stage, share in zip(figures.stages[:-1], figures.shares[:-1], strict=True)
    )
    return (
        f"On text the model never trained on ({figures.windows} windows of "
        f"{figures.positions // figures.windows} characters from the held-out last 10 % of tiny "
        "Shakespeare, each checked to appear nowhere in the 90 % it trained on), the lens's "
        f"likeliest character is already the model's final guess at this share of the "
        f"{figures.positions:,} positions: {shares}. At the other "
        f"{percent(1 - figures.shares[-2])} of them the last stage, "
        f"{figures.stages[-1].title.removeprefix('after ')}, changes the likeliest character."
    )


def show_agreement() -> None:
    st.markdown(agreement_words(agreement()))


# --- direct attribution ------------------------------------------------------------------


@state.cached
def attribution(text: str, position: int, char: int) -> maths.Attribution:
    return maths.direct_attribution(trained.language_model(), stream(text), position, char)


def parts_frame(split: maths.Attribution) -> pd.DataFrame:
    parts = sorted(split.parts, key=lambda p: -p.value)
    return pd.DataFrame(
        {"part": [p.name for p in parts], "push on the logit": [p.value for p in parts]}
    )


def bars_words(split: maths.Attribution, up: maths.Part, down: maths.Part) -> str:
    """The chart's largest bar up and down where an embedding or β outdoes every head and MLP
    (the sentence before names only heads and MLPs); empty where it does not."""
    ranked = sorted(split.parts, key=lambda p: -p.value)
    said = []
    if ranked[0].value > max(up.value, 0):
        said.append(f"the largest push up is the {ranked[0].name} ({ranked[0].value:+.3f})")
    if ranked[-1].value < min(down.value, 0):
        said.append(f"the largest push down is the {ranked[-1].name} ({ranked[-1].value:+.3f})")
    return f" Of all the bars, {' and '.join(said)}." if said else ""


def attribution_words(split: maths.Attribution, short: bool = False) -> str:
    """Which head or MLP pushed the logit up and down most, what the embeddings and β add, and
    that the parts add to the logit (`short`: the pushes alone, for a projector)."""
    movers = split.pushing()
    up, down = movers[0], movers[-1]
    embeddings = sum(p.value for p in split.parts if p.kind == "embedding")
    bias = next(p.value for p in split.parts if p.kind == "bias")
    down_words = (
        f"the largest push down is **{down.name}**'s ({down.value:+.3f})"
        if down.value < 0
        else f"no head or MLP pushes it down (the smallest push, {down.name}'s, is "
        f"{down.value:+.3f})"
    )
    up_words = (
        f"Of the heads and MLPs, the largest push up on '{shown_glyph(split.char)}' comes from "
        f"**{up.name}** "
        f"({up.value:+.3f}); "
        if up.value > 0
        else f"No head or MLP pushes '{shown_glyph(split.char)}' up (the largest, {up.name}'s, is "
        f"{up.value:+.3f}); "
    )
    if short:
        return f"{up_words}{down_words}.{bars_words(split, up, down)}"
    return (
        f"{up_words}{down_words}.{bars_words(split, up, down)} The two embeddings give "
        f"{embeddings:+.3f} and the final LayerNorm's β {bias:+.3f}. All {len(split.parts)} "
        f"parts add to {split.total:.3f}: the model's logit for '{shown_glyph(split.char)}' is "
        f"{split.logit:.3f}."
    )


PUSH_AXES = 130  # px: the pushes chart's title and x axis, the sentence's second line


def show_attribution(
    read: Text, position: int, char: int, screen: tuple[int, int] | None = None
) -> None:
    split = attribution(read.text, position, char)
    frame = parts_frame(split)
    title = f"Who pushed the logit of '{glyph(char)}' after position {position}"

    def build():
        if screen is None:
            return charts.pushes(frame, part="part", value="push on the logit", title=title)
        # the section's height for the bands, less the title and the x axis (PUSH_AXES px):
        # 12 px bands left labels touching and half a projector's screen empty
        step = max(12, (screen[1] - PUSH_AXES) // len(frame))
        chart = charts.pushes(frame, part="part", value="push on the logit", title=title,
                              step=step, legend="right")  # fmt: skip
        return chart.properties(width=screen[0] - 300)

    show_chart(("block_push", read.text, position, char, screen), build)
    st.markdown(attribution_words(split, short=screen is not None))
    if screen is None:
        with layout.going_further("every part's number, and the frozen scale") as further:
            if further.open:
                st.dataframe(frame, hide_index=True)
                st.caption(
                    f"Each part's push is (v − mean v) / σ · (γ_f ⊙ U['{shown_glyph(char)}']) for "
                    f"what it wrote into the stream, v, with σ = {split.scale:.3f}, the final "
                    "LayerNorm's "
                    "spread at the real forward, held fixed (as TransformerLens does): with σ "
                    "fixed the LayerNorm is linear, so the parts add up to the logit. β_f · U adds "
                    "the rest."
                )


# --- LayerNorm on one row, the MLP -------------------------------------------------------


def ln_picker() -> str:
    names = list(maths.layer_norms(trained.language_model()))
    raw = controls.linked("blk_ln")
    chosen = st.selectbox(
        "LayerNorm",
        names,
        index=names.index(layout.remember_default("blk_ln", LN_DEFAULT)),
        key="blk_ln",
        bind="query-params",
    )
    chosen = chosen if chosen in names else LN_DEFAULT
    controls.link_note("blk_ln", raw, chosen, f"one of the model's LayerNorms ({', '.join(names)})")
    return chosen


def ln_frame(done: maths.LayerNormRow, digits: int | None = None) -> pd.DataFrame:
    """The row's first SHOWN_FEATURES features through the LayerNorm, step by step (rounded to
    `digits` for a projector's HTML table)."""
    n = min(SHOWN_FEATURES, done.row.shape[0])

    def column(values) -> list[float]:
        shown = values[:n].tolist()
        return shown if digits is None else [round(v, digits) for v in shown]

    return pd.DataFrame({
        "feature": list(range(n)),
        "x": column(done.row),
        "x − mean": column(done.centred),
        "normalised": column(done.normalised),
        "γ": column(done.gamma),
        "β": column(done.beta),
        "output": column(done.output),
    })  # fmt: skip


def ln_words(done: maths.LayerNormRow, name: str, position: int) -> str:
    gamma, beta = done.gamma.tolist(), done.beta.tolist()
    return (
        f"{name} at position {position} reads a row of {done.row.shape[0]} numbers with mean "
        f"**{done.mean:.3f}** and variance {done.variance:.3f}, so its spread is "
        f"√({done.variance:.3f} + {done.eps:g}) = **{done.std:.3f}**. Subtracting the mean and "
        "dividing by the spread gives a row of mean 0 and spread 1; then each feature is "
        f"multiplied by its own γ (here from {min(gamma):.2f} to {max(gamma):.2f}) and shifted by "
        f"its own β (from {min(beta):.2f} to {max(beta):.2f}), both learned."
    )


def show_layer_norm(
    read: Text, position: int, name: str, screen: tuple[int, int] | None = None
) -> None:
    model = trained.language_model()
    ln = maths.layer_norms(model)[name]
    done = maths.layer_norm_row(ln, maths.layer_norm_input(read.stream, name)[position])
    st.markdown(ln_words(done, name, position))
    if screen is not None:
        # st.table pads every float to 4 decimals (0.2200 for 0.22): the 3 it is rounded to
        st.table(ln_frame(done, 3).style.format(precision=3), hide_index=True)
        return
    frame = ln_frame(done)
    show_frame(("block_ln_table", read.text, position, name), lambda: frame, hide_index=True,
               column_config={c: st.column_config.NumberColumn(format="%.4f")
                              for c in frame.columns[1:]})  # fmt: skip
    st.caption(f"The first {len(frame)} of its {done.row.shape[0]} features; the chart has all.")
    long = pd.DataFrame({
        "feature": list(range(done.row.shape[0])) * 2,
        "value": done.row.tolist() + done.output.tolist(),
        "row": ["x, as it comes"] * done.row.shape[0] + ["LN(x)"] * done.row.shape[0],
    })  # fmt: skip
    title = f"{name} at position {position}: the row before and after"
    show_chart(("block_ln", read.text, position, name),
               lambda: charts.lines(long, x="feature", y="value", group="row",
                                    title=title))  # fmt: skip


def mlp_picker() -> int:
    layer = st.segmented_control(
        "MLP of layer",
        list(range(SIZE.n_layers)),
        default=layout.remember_default("blk_mlp", 0),
        key="blk_mlp",
        bind="query-params",
    )
    return 0 if layer is None else layer


def mlp_words(row: maths.MLPRow, position: int) -> str:
    model = trained.language_model()
    shape = maths.mlp_shape(model, row.layer)
    all_mlp = parameter_groups(model)["mlp"]
    hidden = row.pre.shape[0]
    return (
        f"Layer {row.layer}'s MLP at position {position}: the {shape.d_model} numbers LN2 gives "
        f"it become **{hidden}** (W_in: {shape.d_model} × {shape.hidden} weights and "
        f"{shape.hidden} biases); GELU passes {row.passed} of them (a positive output) and "
        f"squeezes the other {hidden - row.passed} towards 0 (its lowest output here: "
        f"{row.lowest:.3f}); W_out ({shape.hidden} × {shape.d_model} and {shape.d_model} "
        f"biases) brings them back to **{shape.d_model}**, which are added to the stream. "
        f"{shape.parameters:,} parameters an MLP, {all_mlp:,} in the "
        f"{SIZE.n_layers} of them: attention moves information between positions, the MLP "
        "computes on each position alone."
    )


def show_mlp(read: Text, position: int, layer: int, screen: tuple[int, int] | None = None) -> None:
    row = maths.mlp_row(read.stream, layer, position)
    st.markdown(mlp_words(row, position))
    frame = pd.DataFrame({"before GELU": row.pre.tolist(), "after GELU": row.post.tolist()})
    title = f"Layer {layer}'s {row.pre.shape[0]} hidden units at position {position}"

    def build():
        chart = charts.points(frame, x="before GELU", y="after GELU", title=title)
        return chart if screen is None else chart.properties(width=screen[0] - 120)

    show_chart(("block_mlp", read.text, position, layer, screen), build)


# --- take it home ------------------------------------------------------------------------

EXERCISE_WORDS = (
    "A notebook with this page's numbers at your position: what the embeddings, each attention "
    "and each MLP wrote, the final LayerNorm and U. You add up the residual stream stage by "
    "stage and read it with the logit lens; a check under each compares yours with this page. "
    "Runs on your computer, never here."
)


def exercises(text: str, position: int, solved: bool = False) -> nbformat.NotebookNode:
    """Take it home: lesson 14's exercises at this text and position (solved: written)."""
    read = current_text(text, say=False)
    position = min(position, read.stream.T - 1)
    data = notebooks.block_data(trained.language_model(), read.stream, lens(read.text), position)
    return notebooks.block_exercise_notebook(data, solved)


# --- check yourself ----------------------------------------------------------------------


def lesson_questions(read: Text, position: int, char: int) -> tuple[Drill, ...]:
    return block_questions(trained.language_model(), read.stream, position, char)


def class_questions(settings: Settings) -> tuple[Drill, ...]:
    """The questions at the lesson's own text, its last position and the model's guess there
    (the lesson ignores the sidebar; each prompt carries every number it needs)."""
    read = Text(TEXT_DEFAULT, stream(TEXT_DEFAULT))
    position = read.stream.T - 1
    return lesson_questions(read, position, followed(read, position, GUESS))


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 14: the block, the stream, the lens, the pushes, LayerNorm, the MLP."""
    read, position, char = current_choice()
    stage = controls.lesson_value("blk_stage", [s.name for s in read.stream.stages], STAGE_DEFAULT)
    names = list(maths.layer_norms(trained.language_model()))
    ln_name = controls.lesson_value("blk_ln", names, LN_DEFAULT)
    layer = controls.lesson_value("blk_mlp", range(SIZE.n_layers), 0)
    screen = blocks.SCREEN
    return [
        Section("One block", partial(show_block, screen),
                "Ask: what would the model lose without the two + signs?", key="block"),
        Section("The residual stream", partial(show_stream, read, position, stage, screen),
                "Point at a column that stays dark down the rows. Ask: what wrote it there?",
                key="stream"),
        Section("What each stage adds", partial(show_sizes, read, position, screen),
                "Ask: which stage adds the most here? Does anything replace the stream?",
                key="sizes"),
        Section("The logit lens: the guess forming", partial(show_lens, read, position, char,
                                                              screen),
                "Ask: at which stage does the final guess appear? Why LN_f before U?",
                key="lens"),
        Section(f"Who pushed '{shown_glyph(char)}'",
                partial(show_attribution, read, position, char, screen),
                "Ask: which head or MLP would you knock out to lower this logit?", key="pushes"),
        Section("LayerNorm, on one row", partial(show_layer_norm, read, position, ln_name, screen),
                "Ask: what are the row's mean and spread after normalising, before γ and β?",
                key="layernorm"),
        Section("The MLP: C → 4C → C", partial(show_mlp, read, position, layer, screen),
                "Ask: what does GELU do to a negative input? To a large positive one?",
                key="mlp"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


LESSON = LessonSpec(
    number=14,
    path="pages/block.py",
    title="14 · The block around attention",
    heading="14 · The block around attention: residual, LayerNorm, MLP",
    minutes=15,
    icon=":material/stacks:",
    summary="What happens to a head's output next: the residual stream, LayerNorm, the MLP, "
    "and the guess forming layer by layer (the logit lens), on your text.",
    uses=(),
    objectives=(
        "add up the residual stream: each attention and MLP adds to it, nothing replaces it",
        "compute one output of a LayerNorm from its row's mean and spread, γ and β",
        "read the logit lens: the final LayerNorm and the unembedding on the stream so far",
    ),
    recap="a block adds its attention's and its MLP's outputs to the residual stream, each "
    "reading a LayerNorm of it; the final LayerNorm and the unembedding read the stream, and "
    "the logit lens reads it part-way.",
    params=("blk_text", "blk_pos", "blk_char", "blk_stage", "blk_ln", "blk_mlp"),
    sections=sections,
    class_questions=class_questions,
)
