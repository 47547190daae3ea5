"""Lesson 13: cross-attention, on the encoder-decoder trained to reverse a word (attention/cross),
measured on words its training never drew. The blocks the page draws, its presenter sections and
its declaration."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import nbformat
import pandas as pd
import streamlit as st

from attention.cross import questions as cross_questions
from attention.cross.held_out import COMMAND as FIGURES_COMMAND
from attention.cross.held_out import first_reversed, held_out, longer_words
from attention.cross.model import (
    MAX_SOURCE,
    MIN_SOURCE,
    TRAIN_LENGTHS,
    Written,
    check_word,
    padding_effect,
    share_written,
    write,
)
from attention.cross.model import accuracy as model_accuracy
from attention.cross.model import alignment_scores as model_alignment
from attention.cross.training import BATCH, CHECKPOINT, SEED, STEPS, load
from attention.cross.training import COMMAND as TRAINING_COMMAND
from attention.drills import Drill
from attention.masks import as_blocked, causal_mask
from dashboard import controls, state
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.glossary import glossary_link
from dashboard.render import charts, layout
from dashboard.render.blocks import SCREEN, show_matrix
from dashboard.render.elements import show_chart, show_once
from dashboard.render.matrices import matrix_view
from dashboard.render.presenter import Section
from dashboard.spec import LessonSpec
from dashboard.text import plain

WORD_DEFAULT = "black"
LAYER_DEFAULT, HEAD_DEFAULT = cross_questions.ALIGNER  # the page opens on the aligner
STEP_AXIS = "step · token read (query)"  # row t: decoder step t, named by the token it reads
TRAINED = f"{TRAIN_LENGTHS.start} to {TRAIN_LENGTHS.stop - 1}"  # the lengths training drew


@dataclass(frozen=True)
class Source:
    """The word to read, or why it cannot be read."""

    word: str
    error: str = ""


def source_box() -> Source:
    """The student's word (?cross_word=), checked by the model's own rule."""
    word = st.text_input(
        f"Source word: {MIN_SOURCE} to {MAX_SOURCE} different letters from a to l",
        layout.remember_default("cross_word", WORD_DEFAULT),
        key="cross_word",
        bind="query-params",
        max_chars=MAX_SOURCE,
        help=f"The model reverses it. Each letter once, so the letter a step must read is "
        f"known. Training drew words of {TRAINED} letters; longer ones show what it does beyond.",
    )
    return read_source(word)


def read_source(word: str) -> Source:
    try:
        return Source(check_word(word.strip().lower()))
    except ValueError as error:
        return Source(word, f"'{word}' cannot be read: {error}.")


def current_source() -> Source:
    """The word where the page draws no box (presenter mode)."""
    return read_source(controls.lesson_value("cross_word", None, WORD_DEFAULT))


@state.cached
def written(word: str, padded: int = 0, ablate: tuple[tuple[int, int], ...] = ()) -> Written:
    return write(load(), word, padded, ablate)


def held_out_words() -> list[str]:
    """The words the figures are measured on: never drawn by training (attention/cross)."""
    return list(held_out().words)


@state.cached(keep=True)
def alignment() -> pd.DataFrame:
    """Each cross-attention head's alignment score over the held-out words: the mean over every
    (word, step) pair that writes a letter, and the mean over words of each word's mean."""
    words = held_out_words()
    steps, per_word = model_alignment(load(), words), model_alignment(load(), words, True)
    return pd.DataFrame(
        [
            {"decoder layer": layer, "head": head, "alignment": float(steps[layer, head]),
             "alignment per word": float(per_word[layer, head])}
            for layer in range(steps.shape[0])
            for head in range(steps.shape[1])
        ]
    )  # fmt: skip


@state.cached(keep=True)
def accuracy(ablate: tuple[tuple[int, int], ...] = ()) -> float:
    """The share of the held-out words reversed exactly, with `ablate` knocked out."""
    return model_accuracy(load(), held_out_words(), ablate)


@dataclass(frozen=True)
class Longer:
    words: int  # words of 9 to 12 letters
    reversed: float  # the share reversed
    first: int  # how many are written as their first 8 letters backwards, then </s>


@state.cached(keep=True)
def longer() -> Longer:
    words = longer_words()
    first = share_written(load(), words, first_reversed(words))
    return Longer(len(words), model_accuracy(load(), words), round(first * len(words)))


def step_labels(done: Written) -> tuple[str, ...]:
    return tuple(cross_questions.step_labels(done.written)[: done.steps])


def source_labels(done: Written) -> tuple[str, ...]:
    S = len(done.word)
    return tuple(f"{j} {c}" for j, c in enumerate(done.word)) + tuple(
        f"{j} pad" for j in range(S, S + done.padded)
    )


def describe_model() -> None:
    model = load()
    held = held_out()
    mlp = model.decoder[0].mlp[0]  # the MLP's first layer: d_model -> its hidden width
    st.markdown(
        f"The model writes a word backwards: an encoder of {model.n_layers} "
        f"[transformer blocks]({glossary_link('block')}), each a "
        f"self-attention over the source and then an [MLP]({glossary_link('MLP')}) (a small "
        f"network applied to each position on its own, {mlp.in_features} → "
        f"{mlp.out_features} → {mlp.in_features} numbers), and a decoder of {model.n_layers} "
        "blocks, each a causal self-attention, a cross-attention and an MLP; "
        f"{model.n_heads} heads each, d_model = {model.d_model}. Each part reads a LayerNorm of "
        "its input and adds what it computes to it. Each letter appears once in a word, so the "
        "letter a step must read is known: the t-th letter written (t from 0) is the source "
        "letter at position S − 1 − t."
    )
    st.markdown(
        f"Nothing is trained on this page: it loads weights that ship with the app "
        f"(`attention/cross/{CHECKPOINT.name}`), made on a CPU by `{TRAINING_COMMAND}`, which "
        f"remakes them: seed {SEED}, {STEPS:,} steps of {BATCH} random words of {TRAINED} "
        f"letters, {held.draws:,} draws in all, {held.trained:,} different words. The figures "
        f"below are measured on words that training never drew (`{FIGURES_COMMAND}` replays "
        "its draws to find them)."
    )


def show_formula() -> None:
    st.latex(
        r"\text{CrossAttention}(Y, X) = \text{softmax}\!\Big(\frac{(Y W_q)(X W_k)^\top}"
        r"{\sqrt{d_k}}\Big)\,(X W_v)"
    )
    st.markdown(
        "**Y** is the target side: the decoder's state at each step of writing (T × C), after a "
        f"[LayerNorm]({glossary_link('LayerNorm')}) (LN: each row shifted and scaled to mean 0 "
        "and variance 1, then a learned scale and shift per column); **X** is the source side: "
        "the encoder's output, after its last LayerNorm (S × C). Queries come from Y, keys and "
        "values from X: the scores are **T × S**, one row per step of writing, one column per "
        "source position."
    )


def show_writing(done: Written, layer: int, head: int, t: int) -> None:
    """What the model wrote, and the step t's row of the picked head over the source."""
    st.markdown(wrote_sentence(done))
    weights = done.output.cross[layer].weights[0, head, t]  # (S,)
    labels = source_labels(done)
    frame = pd.DataFrame({"source": list(labels), "weight": weights.tolist()})
    reads, weight = done.reads(layer, head, t)
    writes = done.wrote[t]
    title = f"Step {t} reads the source (layer {layer}, head {head})"
    show_chart(("cross_row", done.word, done.padded, layer, head, t),
               lambda: charts.bars(frame, x="source", y="weight", title=title))  # fmt: skip
    st.caption(
        plain(
            f"Step {t} reads '{step_labels(done)[t].split(' ', 1)[1]}' and writes '{writes}'. "
            f"This head puts {weight:.2f} of its weight on {labels[reads]}."
        )
    )


def wrote_sentence(done: Written) -> str:
    """What the model wrote, whether it is the word backwards, and how it stopped."""
    verdict = "correct" if done.right else f"not '{done.word[::-1]}'"
    letters = len(done.written)
    # the word and what was written are letters a to l only (check_word): no markup
    ending = (
        f"then </s>: T = {done.steps} steps, {letters} letter{'s' * (letters != 1)} and the end"
        if done.ended
        else f"and no </s>: it was stopped after {letters} letters, T = {done.steps} steps"
    )
    return f"The model wrote **{done.written or '(nothing)'}** ({verdict}), {ending}."


def show_cross_map(
    done: Written, layer: int, head: int, screen=None, label: str = "Cross-attention"
) -> None:
    """The cross-attention map, T × S: no causal mask across, only the source's pads blocked.
    Fitted to a projector's `screen` (width, height px) in presenter mode; `label` heads it."""
    rows, cols = step_labels(done), source_labels(done)
    cross = done.output.cross[layer].weights[0, head]  # (T, S)
    T, S = cross.shape
    view = matrix_view(rows, cols, _matrix=cross, _blocked=done.source_pad[None, :].expand(T, S),
                       kind="weight", row_title=STEP_AXIS, col_title="source position (key)",
                       title="")  # fmt: skip
    show_matrix(
        view,
        label,
        f"{label}, layer {layer} head {head}: T × S = {T} × {S}",
        name=f"{label}, layer {layer} head {head}",
        screen=screen,
    )


def show_own_map(done: Written, layer: int, head: int, screen=None) -> None:
    """The decoder's own self-attention in the same layer and head, T × T, causal."""
    rows = step_labels(done)
    own = done.output.decoder[layer].weights[0, head]  # (T, T)
    T = own.shape[0]
    view = matrix_view(rows, rows, _matrix=own, _blocked=as_blocked(causal_mask(T)),
                       kind="weight", row_title=STEP_AXIS,
                       col_title="step · token read (key)", title="")  # fmt: skip
    show_matrix(view, "own",
                f"The decoder's own causal self-attention, layer {layer} head {head}: "
                f"T × T = {T} × {T}",
                name=f"Decoder self-attention, layer {layer} head {head}",
                screen=screen)  # fmt: skip


def show_stages(done: Written, layer: int, head: int) -> None:
    """Lesson 1's stages, for cross-attention: Q from the target, K and V from the source."""
    cross = done.output.cross[layer]
    rows, cols = step_labels(done), source_labels(done)
    d_k = cross.q.shape[-1]
    features = tuple(f"f{i}" for i in range(d_k))
    T, S = cross.scores.shape[-2:]
    pad = done.source_pad[None, :].expand(T, S)
    for name, matrix, r, c, kind, heading in (
        ("Q", cross.q[0, head], rows, features, "projection",
         f"Q = Y W_q, from the target (Y LayerNormed): T × d_k = {T} × {d_k}"),
        ("K", cross.k[0, head], cols, features, "projection",
         f"K = X W_k, from the source: S × d_k = {S} × {d_k}"),
        ("V", cross.v[0, head], cols, features, "projection",
         f"V = X W_v, from the source: S × d_k = {S} × {d_k}"),
        ("scaled", cross.scaled[0, head], rows, cols, "score",
         f"Scaled scores Q Kᵀ / √d_k: T × S = {T} × {S}"),
        ("weights", cross.weights[0, head], rows, cols, "weight",
         f"Weights: softmax over the source, each row sums to 1: T × S = {T} × {S}"),
        ("heads", cross.heads[0, head], rows, features, "projection",
         f"This head's output, weights V: T × d_k = {T} × {d_k}"),
    ):  # fmt: skip
        blocked = pad if name in ("scaled", "weights") and done.padded else None
        view = matrix_view(r, c, _matrix=matrix, _blocked=blocked, kind=kind,
                           row_title=STEP_AXIS if r is rows else "source position",
                           col_title="feature" if c is features else "source position",
                           title="")  # fmt: skip
        show_matrix(view, f"stage_{name}", heading, name=f"{name}, layer {layer} head {head}")


@state.cached(keep=True)  # the shipped model's, the same for every session
def alignment_table() -> pd.DataFrame:
    """Each head's alignment score, with the model's accuracy when that head is knocked out."""
    table = alignment().copy()
    table["accuracy with it knocked out"] = [
        accuracy(((int(r["decoder layer"]), int(r["head"])),)) for _, r in table.iterrows()
    ]
    return table


def show_alignment(screen: tuple[int, int] | None = None) -> None:
    """Each head's alignment score, with the model's accuracy when that head is knocked out."""
    table = alignment_table()
    best = table.loc[table.alignment.idxmax()]
    words = held_out_words()
    if screen is not None:  # the projector: the figures, and on what, in a line
        st.caption(
            f"On {len(words)} held-out words, none of them a word training gave the model to read."
        )
    else:
        st.markdown(held_out_sentence())
    # short headers: at 1280 x 720 and 150 % the long ones hid the last column; marshalled
    # once for every session (the same table for all)
    show_once(("alignment_table",), lambda dg: dg.dataframe(
        table, hide_index=True, width="content",
        column_config={
            "decoder layer": st.column_config.NumberColumn("layer"),
            "alignment": st.column_config.NumberColumn(format="%.3f"),
            "alignment per word": st.column_config.NumberColumn("per word", format="%.3f"),
            "accuracy with it knocked out": st.column_config.NumberColumn(
                "knocked out: reversed", format="percent"
            ),
        },
    ))  # fmt: skip
    if screen is not None:
        st.markdown(
            f"Unharmed, the model reverses {accuracy():.1%}. The **aligner**: layer "
            f"{int(best['decoder layer'])}, head {int(best['head'])} ({best.alignment:.2f} of "
            f"its weight on the letter a step writes); knocked out, "
            f"{best['accuracy with it knocked out']:.1%}."
        )
        return
    st.markdown(
        f"With no head knocked out, the model reverses {accuracy():.1%} of them. The "
        f"**aligner** is layer {int(best['decoder layer'])}, head {int(best['head'])}: at a "
        f"step that writes a letter it puts {best.alignment:.2f} of its weight on the source "
        f"letter that step writes, averaged over all {sum(map(len, words)):,} such steps of "
        f"the {len(words)} words ({best['alignment per word']:.2f} averaged over each word's "
        "steps first, then over the words). Knock it out and the model reverses "
        f"{best['accuracy with it knocked out']:.1%} of them."
    )
    others = table.drop(index=table.alignment.idxmax())
    needed = others.loc[others["accuracy with it knocked out"].idxmin()]
    if needed["accuracy with it knocked out"] < 0.5:  # a head that matters but does not align
        st.markdown(
            "A low alignment score does not make a head unimportant: knocked out, layer "
            f"{int(needed['decoder layer'])}, head {int(needed['head'])} (alignment "
            f"{needed.alignment:.2f}) leaves {needed['accuracy with it knocked out']:.1%}."
        )


def held_out_sentence() -> str:
    """Which words the figures are measured on, and why they have the lengths they have."""
    held = held_out()
    words = held.words
    lengths = sorted({len(w) for w in words})
    full = held.all_trained()
    every = (
        f" Training drew every possible word of {' and '.join(map(str, full))} letters, so "
        "none of those can be held out."
        if full
        else ""
    )
    return (
        f"Measured on **{len(words)} held-out words**, drawn as training draws its words but "
        f"from another seed ({held.seed}), each kept only if training never drew it: none of "
        f"them is among its {held.trained:,} different words. They have {lengths[0]} to "
        f"{lengths[-1]} letters.{every}"
    )


def show_padding(word: str, padded: int, layer: int, head: int) -> None:
    """The word with `padded` pads: the map with the pads' columns blocked, the same letters
    written, no weight on a pad."""
    done = written(word, padded)
    effect = padding_effect(written(word), done)
    same = "the same letters" if effect.same else "other letters"
    on_pads = "exactly 0" if effect.on_pads == 0 else f"{effect.on_pads:.2e}"
    st.markdown(
        f"With {padded} pad{'s' * (padded != 1)} after '{word}', the model writes {same}. "
        f"Largest weight on a pad, in any head at any step: {on_pads}; largest change of a "
        f"weight on a letter: {effect.change:.1e} (rounding in the last digits of a float32)."
    )
    show_cross_map(done, layer, head, label="With the pads")


def show_longer(word: str) -> None:
    top = TRAIN_LENGTHS.stop - 1  # the longest word training drew
    figures = longer()
    instead = (
        f" What it does instead: for {figures.first} of the {figures.words} it writes the "
        f"word's first {top} letters backwards (positions 0 to {top - 1}, the ones training "
        "reached), then </s>."
        + (f" The other {figures.words - figures.first} go otherwise."
           if figures.first < figures.words else "")
        if figures.first
        else ""
    )  # fmt: skip
    st.markdown(
        f"Training drew words of {TRAINED} letters, so the position embeddings of positions "
        f"{top} and up (the {top + 1}th letter on) were never trained. Of {figures.words} "
        f"words of {top + 1} to {MAX_SOURCE} letters (so none drawn in training), the model "
        f"reverses {figures.reversed:.0%}.{instead}"
    )
    if len(word) > top:
        done = written(word)
        if done.right:
            what = "correct"
        elif done.written == word[:top][::-1]:
            what = f"not {word[::-1]!r} but its first {top} letters backwards, then </s>"
        else:
            what = f"not {word[::-1]!r}, nor its first {top} letters backwards"
        st.markdown(f"Your word has {len(word)} letters: the model wrote '{done.written}', {what}.")


def layer_and_head() -> tuple[int, int]:
    left, right = st.columns(2)
    with left:
        layer = st.segmented_control(
            "Decoder layer", [0, 1], default=layout.remember_default("cross_layer", LAYER_DEFAULT),
            key="cross_layer", bind="query-params",
        )  # fmt: skip
    with right:
        head = st.segmented_control(
            "Head", [0, 1], default=layout.remember_default("cross_head", HEAD_DEFAULT),
            key="cross_head", bind="query-params",
        )  # fmt: skip
    return (LAYER_DEFAULT if layer is None else layer), (HEAD_DEFAULT if head is None else head)


def step_picker(done: Written) -> int:
    return layout.bounded_slider(
        st, "Decoder step t", done.steps - 1, "cross_step", help="Step t reads token t and writes "
        "the next; its row of the map is what it reads from the source.",
    )  # fmt: skip


def padding_picker(word: str) -> int:
    return layout.bounded_slider(
        st, "Pads after the word", MAX_SOURCE - len(word), "cross_pad",
        single="the source is full",
    )  # fmt: skip


# --- take it home -------------------------------------------------------------------------

EXERCISE_WORDS = (
    "A notebook with this page's numbers for your word, layer and head, where you write "
    "cross-attention yourself: Q from the target, K and V from the source, the T × S scores, the "
    "softmax over the source and the output; a check under each compares yours with this page. "
    "Runs on your computer, never here."
)


def exercises(word: str, layer: int, head: int, solved: bool = False) -> nbformat.NotebookNode:
    """Take it home: lesson 13's exercise notebook on this page's numbers (solved: written)."""
    data = notebooks.cross_data(load(), written(word), layer, head)
    return notebooks.cross_exercise_notebook(data, solved)


# --- presenter mode ----------------------------------------------------------------------


def sections() -> list[Section]:
    source = current_source()
    word = source.word if not source.error else WORD_DEFAULT
    done = written(word)
    layer = controls.lesson_value("cross_layer", (0, 1), LAYER_DEFAULT)
    head = controls.lesson_value("cross_head", (0, 1), HEAD_DEFAULT)
    return [
        Section("Q from the target, K and V from the source", show_formula,
                "Ask: if the source has 5 letters and the decoder has taken 6 steps, what "
                "shape are the scores?", key="formula"),
        Section(f"The model writes '{done.written}'",
                partial(show_writing, done, layer, head, min(1, done.steps - 1)),
                "Ask: which source letter will step 1 read? Why that one?", key="writing"),
        Section("The whole map: T × S", partial(show_cross_map, done, layer, head, SCREEN),
                "Point at the anti-diagonal. Ask: why is there no grey triangle here?",
                key="cross_map"),
        Section("The decoder's own map: T × T, causal",
                partial(show_own_map, done, layer, head, SCREEN),
                "Ask: why does this map have a causal mask and the cross-attention map none?",
                key="own_map"),
        Section("Which head aligns", partial(show_alignment, SCREEN),
                "Ask: what happens if we knock out the aligner? Then show the accuracy.",
                key="aligner"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(word: str) -> tuple[Drill, ...]:
    """The check-yourself questions on the shipped model reversing `word`."""
    return cross_questions.cross_questions(load(), word)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The questions on the default word, 'black' (they name it): the sidebar does not move
    them."""
    return lesson_questions(WORD_DEFAULT)


LESSON = LessonSpec(
    number=13,
    path="pages/cross_attention.py",
    title="13 · Cross-attention",
    heading="13 · Cross-attention: one sequence reads another",
    minutes=15,
    icon=":material/compare_arrows:",
    summary="An encoder-decoder reverses a word: each step's queries read the source's keys "
    "and values.",
    uses=(),
    objectives=(
        "say where Q, K and V come from in cross-attention, and why its map is T × S",
        "compute a cross-attention weight from a row of scores, softmax over the source",
        "explain why no causal mask runs across, and what the padding mask hides",
        "find the head that aligns each output with its input by its alignment score",
    ),
    recap="in cross-attention the target's queries read the source's keys and values: a T × S "
    "map, masked only where the source pads.",
    params=("cross_word", "cross_layer", "cross_head", "cross_step", "cross_pad"),
    sections=sections,
    class_questions=class_questions,
)
