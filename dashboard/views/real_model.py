"""Lesson 12's blocks: a small GPT trained here on tiny Shakespeare (attention/lm) reads the
student's text; every head at once, one head large, the next character, a head knocked out, and
the text written twice. Every sentence about a head is computed from the numbers shown."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pandas as pd
import streamlit as st
import torch

from attention.drills import Drill
from attention.lm.corpus import GLYPHS, decode
from attention.lm.generate import next_distribution, sample, top_characters
from attention.lm.heads import KINDS, ROLE_SHARE, HeadScore, head_scores
from attention.lm.reading import (
    attends_most,
    glyph,
    induction_question,
    losses,
    top_k_probability,
    twice,
)
from attention.lm.training import RECIPE, SIZE
from attention.masks import as_blocked, causal_mask
from dashboard import controls, state, trained
from dashboard.controls import Settings
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.layout import wrapping_row
from dashboard.render.matrices import matrix_view
from dashboard.render.presenter import Section, presenter_theme
from dashboard.spec import LessonSpec
from dashboard.text import plain
from dashboard.views.what_heads_learn import weights_view

TEXT_DEFAULT = "ROMEO:\nBut soft, what light through yonder window breaks?"
TEMPERATURES = (0.2, 0.5, 0.8, 1.0, 1.5, 2.0)
TOP_KS = (1, 3, 5, 10, 20, 65)
TEMPERATURE_DEFAULT, TOP_K_DEFAULT = 0.8, 10  # reads like its corpus (tests/attention/test_lm.py)
SHOWN_CHARS = 10  # bars in the next-character chart
SAMPLE_SEED = 0


@dataclass(frozen=True, eq=False)
class Reading:
    """The model on one text: its tokens, every head's weights, logits, head scores, losses."""

    text: str
    labels: list[str]
    ids: torch.Tensor  # (T,)
    weights: tuple[torch.Tensor, ...]  # per layer (H, T, T)
    logits: torch.Tensor  # (T, vocab)
    scores: list[HeadScore]
    losses: torch.Tensor  # (T - 1,) nats per next character
    notice: str | None


def position_labels(tokens) -> list[str]:
    """Axis labels that name a character and its position, "3:a" (as lesson 6's do): the
    questions ask for positions, and a character repeats."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


@state.cached
def reading(text: str) -> Reading:
    """The model's forward on the text (ValueError when it has nothing to read)."""
    state.one_torch_thread()
    model = trained.language_model()
    read = trained.read_text(text)
    with torch.inference_mode():
        out = model(read.ids[None])
        scores = head_scores(model, read.ids[None])
        per_char = losses(model, read.ids)
    return Reading(
        text, position_labels(read.tokens), read.ids,
        tuple(t.weights[0] for t in out.traces), out.logits[0], scores, per_char, read.notice,
    )  # fmt: skip


def model_figures() -> dict[str, float]:
    """The model's figures, measured by the build and stored beside its weights (held-out loss,
    the bigram baseline, copy accuracy, parameters); tests/attention/test_lm.py recomputes
    them. Computing them here cost a server's first visitor 0.7 s and 330 MiB."""
    return trained.language_model_figures()


GENERATED = 200  # characters timed with and without the cache


@state.cached(keep=True)
def generation_seconds() -> dict[bool, float]:
    """Seconds to write GENERATED characters after "ROMEO:", with the KV cache (True) and
    without (False): the best of three runs each, measured once per server."""
    state.one_torch_thread()
    model = trained.language_model()
    best = {}
    with torch.inference_mode():
        for cache in (True, False, True, False, True, False):
            run = sample(model, "ROMEO:\n", GENERATED, use_cache=cache,
                         generator=torch.Generator().manual_seed(0))  # fmt: skip
            best[cache] = min(best.get(cache, run.seconds), run.seconds)
    return best


def show_generation_timing() -> None:
    """The cache's speed-up on this model, measured on this server."""
    seconds = generation_seconds()
    st.markdown(
        f"Writing {GENERATED} characters took **{seconds[True] * 1000:.0f} ms** with the KV "
        f"cache and **{seconds[False] * 1000:.0f} ms** without it on this server "
        f"({seconds[False] / seconds[True]:.1f}× longer; the same text either way)."
    )
    st.caption(
        "Best of three runs each, one torch thread. Without the cache every character re-runs "
        f"both layers on the whole window (up to {SIZE.context} characters); with it, one row."
    )


def text_box() -> str:
    """The student's text (bound to the URL as ?rm_text=)."""
    return st.text_area(
        "Your text (one token per character; the model reads at most 64)",
        layout.remember_default("rm_text", TEXT_DEFAULT),
        key="rm_text",
        bind="query-params",
        max_chars=controls.MAX_TEXT,
        height=90,
    )


def current_reading(text: str | None = None) -> Reading | None:
    """The reading of the text (the box's, or the link's in presenter mode); None with the
    reason shown when the model has nothing to read."""
    text = controls.lesson_value("rm_text", None, TEXT_DEFAULT) if text is None else text
    try:
        read = reading(text)
    except ValueError as error:
        st.warning(plain(f"{error}."), icon=":material/edit_off:")
        return None
    if read.notice:
        st.info(plain(read.notice), icon=":material/info:")
    return read


def show_model_card() -> None:
    """What the model is, how it was trained, and how well it does (the build's figures)."""
    f = model_figures()
    st.markdown(
        f"A GPT of **{SIZE.n_layers} layers × {SIZE.n_heads} heads**, d_model = "
        f"{SIZE.d_model}, context {SIZE.context} characters, {f['parameters']:,.0f} parameters; "
        "every attention layer is this project's `MultiHeadSelfAttention`, with pre-LayerNorm, "
        "an MLP and a residual stream as in GPT-2. It read tiny Shakespeare (1,115,394 "
        f"characters, public domain) for {RECIPE.steps:,} steps of {RECIPE.batch} windows. In "
        f"{RECIPE.repeat_share:.0%} of the windows a string of random letters was written "
        "twice: nothing in Shakespeare rewards copying a string never seen before, and that is "
        "how it learned to copy."
    )
    row = st.columns(3)
    row[0].metric("Held-out loss (nats/char)", f"{f['held_out']:.3f}")
    row[1].metric("A bigram model's", f"{f['bigram']:.3f}")
    row[2].metric("Copies random strings", f"{f['copy']:.0%}")
    st.caption(
        "Measured when the model was built (`python -m attention.lm.build`; the tests measure "
        "them again). Held-out: the last 10 % of the text, never trained on. The bigram model "
        "predicts each character from the one before, counted on the first 90 %. Copying: the "
        "second half of 32 random letters written twice, characters predicted exactly."
    )


def head_title(score: HeadScore) -> str:
    return f"layer {score.layer} · head {score.head}"


def role_words(score: HeadScore) -> str:
    """The head's role on this text, from its scores: the kind with the best share of its
    ceiling, when that reaches ROLE_SHARE."""
    kind = score.role
    if kind is None:
        best = max(score.scores, key=score.share)
        return f"no clear role (best: {KINDS[best]}, {score.share(best):.0%} of its best)"
    return f"{KINDS[kind]} ({score.share(kind):.0%} of its best)"


def show_all_heads(read: Reading, size: int | None = None) -> None:
    """Every layer × head on the text at once (BertViz's model view), each named from its
    scores on this text."""
    T = len(read.labels)
    blocked = as_blocked(causal_mask(T))  # (T, T): True where a query may not look
    row = wrapping_row("small")
    for score in read.scores:
        weights = read.weights[score.layer][score.head]
        view = weights_view(weights, read.labels, head_title(score), blocked)
        with row.container(width="content", gap=None):
            if size is None:
                blocks.show_fitted(view, head_title(score), 300, 300)
            else:
                blocks.show_fitted(view, head_title(score), size, size)
            st.caption(role_words(score))


def show_roles(read: Reading) -> None:
    """Every head's role on the text, one line each (presenter mode: the maps do not fit)."""
    frame = pd.DataFrame({
        "head": [head_title(s) for s in read.scores],
        "on this text": [role_words(s) for s in read.scores],
    })  # fmt: skip
    st.table(frame, hide_index=True)  # HTML: scaled with the section (presenter.FIT)


SHORT_KINDS = {
    "previous_token": "previous",
    "two_back": "two back",
    "induction": "induction",
    "first_token": "sink",
    "same_character": "same",
    "separator": "punct.",
    "current_token": "self",
}  # fmt: skip  (column names narrow enough for a 1024 px screen at 150 %)


def scores_frame(read: Reading) -> pd.DataFrame:
    """Every head's detector score for every kind on this text, and, last, the best score
    possible on it (the same for every head: it depends on the text alone)."""
    rows = [
        {"head": s.name} | {SHORT_KINDS[k]: f"{s.scores[k]:.2f}" for k in KINDS}
        for s in read.scores
    ]
    ceilings = read.scores[0].ceilings
    rows.append({"head": "best"} | {SHORT_KINDS[k]: f"{ceilings[k]:.2f}" for k in KINDS})
    return pd.DataFrame(rows)


def show_scores(read: Reading) -> None:
    st.dataframe(scores_frame(read), hide_index=True)
    st.caption(
        'Each cell: TransformerLens\'s head-detector score ("mul") on your text; LnHm is layer '
        "n, head m. Columns: the previous character, two back, induction, the first character "
        "(a sink), the same character earlier, spaces and punctuation, itself. The last row, "
        "best, is what a perfect head would score on this text (the share of query rows that "
        "have something to find). A "
        f"head is named by the kind with the best share of its best, from {ROLE_SHARE:.0%}."
    )


def head_picker(read: Reading) -> tuple[int, int]:
    layers = list(range(len(read.weights)))
    heads = list(range(read.weights[0].shape[0]))
    layer = st.segmented_control("Layer", layers, default=layout.remember_default("rm_layer", 0),
                                 key="rm_layer",
                                 bind="query-params") or 0  # fmt: skip
    head = st.segmented_control("Head", heads, default=layout.remember_default("rm_head", 0),
                                key="rm_head",
                                bind="query-params") or 0  # fmt: skip
    return layer, head


def show_one_head(
    read: Reading, layer: int, head: int, screen: tuple[int, int] | None = None
) -> None:
    """One head's map, large, with its characters on the axes, and what it does in words;
    fitted to `screen` (width, height px) in presenter mode."""
    T = len(read.labels)
    blocked = as_blocked(causal_mask(T))  # (T, T): True where a query may not look
    score = next(s for s in read.scores if (s.layer, s.head) == (layer, head))
    weights = read.weights[layer][head]
    view = matrix_view(tuple(read.labels), tuple(read.labels), _matrix=weights, _blocked=blocked,
                       kind="weight", row_title="query", col_title="key",
                       title=head_title(score) if screen is None else "",
                       present=presenter_theme())  # fmt: skip
    if screen is None:
        show_heatmap(view, f"Attention weights, {head_title(score)}")
    else:
        blocks.show_fitted(view, f"Attention weights, {head_title(score)}", *screen)
    st.markdown(one_head_words(read, weights, score))


def one_head_words(read: Reading, weights: torch.Tensor, score: HeadScore) -> str:
    """Where the last query looks, and the head's role, from its numbers."""
    T = len(read.labels)
    last = T - 1
    key = int(weights[last].argmax())
    return (
        f"The last query, {read.labels[last]} (position {last}), gives key {key} "
        f"({read.labels[key]}) its largest weight, **{float(weights[last, key]):.2f}**. On this "
        f"text the head is a **{role_words(score)}**."
    )


def next_pickers(read: Reading) -> tuple[int, float, int]:
    T = len(read.labels)
    last = len(trained.read_text(TEXT_DEFAULT).tokens) - 1  # Reset's: the default text's last
    position = st.select_slider("After position", list(range(T)),
                                value=layout.remember_default("rm_pos", T - 1, reset_to=last),
                                key="rm_pos", bind="query-params")  # fmt: skip
    temperature = st.select_slider("Temperature", TEMPERATURES,
                                   value=layout.remember_default("rm_temp", TEMPERATURE_DEFAULT),
                                   key="rm_temp", bind="query-params")  # fmt: skip
    top_k = st.select_slider("Top-k", TOP_KS,
                             value=layout.remember_default("rm_topk", TOP_K_DEFAULT),
                             key="rm_topk",
                             bind="query-params")  # fmt: skip
    return position, temperature, top_k


def show_next(read: Reading, position: int, temperature: float, top_k: int) -> None:
    """The sampler's distribution over the next character at a position, its top bars."""
    p = next_distribution(read.logits[position], temperature, top_k)
    top = top_characters(p, SHOWN_CHARS)
    frame = pd.DataFrame({
        "next character": [GLYPHS.get(c, c) for c, _ in top],
        "probability": [probability for _, probability in top],
    })  # fmt: skip
    title = f"After “{glyph(int(read.ids[position]))}” (position {position})"
    st.altair_chart(charts.bars(frame, x="next character", y="probability", title=title,
                                y_domain=[0, 1]), width="stretch")  # fmt: skip
    best = frame.iloc[0]
    following = (
        f"; the text has {read.labels[position + 1]} there" if position + 1 < len(read.labels)
        else ""
    )  # fmt: skip
    st.markdown(
        f"Most likely next: **{best['next character']}** at {best['probability']:.1%}"
        f"{following}. Temperature {temperature:g} divides the logits before the softmax; "
        f"top-k {top_k} keeps the {top_k} likeliest and gives the rest 0."
    )


@state.cached
def continuation(text: str, temperature: float, top_k: int) -> str:
    state.one_torch_thread()
    model = trained.language_model()
    read = trained.read_text(text)
    prompt = decode(read.ids)  # the characters the model read
    with torch.inference_mode():
        run = sample(model, prompt, 120, temperature=temperature, top_k=top_k,
                     generator=torch.Generator().manual_seed(SAMPLE_SEED))  # fmt: skip
    return run.new


def show_continuation(read: Reading, temperature: float, top_k: int) -> None:
    new = continuation(read.text, temperature, top_k)
    st.markdown(f"**120 characters it writes next** (seed {SAMPLE_SEED}):")
    st.code(new, language=None, wrap_lines=True)
    st.caption(
        "Raise the temperature and the top-k and it may start a run of random letters (half "
        "the windows it trained on had one), then repeat the run: that is its induction head "
        "copying what it wrote."
    )
    show_generation_timing()


def knockout_picker(read: Reading) -> list[tuple[int, int]]:
    names = [head_title(s) for s in read.scores]
    chosen = st.multiselect("Knock out", names, layout.remember_default("rm_off", []), key="rm_off",
                            bind="query-params",
                            placeholder="Choose heads")  # fmt: skip
    return [(s.layer, s.head) for s in read.scores if head_title(s) in chosen]


@state.cached
def knocked_loss(text: str, off: tuple[tuple[int, int], ...]) -> float:
    state.one_torch_thread()
    read = trained.read_text(text)
    with torch.inference_mode():
        return float(losses(trained.language_model(), read.ids, off).mean())


def show_knockout(read: Reading, off: list[tuple[int, int]]) -> None:
    if len(read.labels) < 2:
        st.info("Type at least two characters: the loss scores each next character.")
        return
    full = float(read.losses.mean())
    now = knocked_loss(read.text, tuple(off))
    st.metric("Loss on your text (nats per character)", f"{now:.3f}",
              delta=f"{now - full:+.3f}" if off else None, delta_color="inverse")  # fmt: skip
    if off:
        st.markdown(
            f"Without {', '.join(f'L{layer}H{head}' for layer, head in off)} the model "
            f"{'is worse' if now > full else 'is no worse'} at your text: {full:.3f} → "
            f"{now:.3f} nats per character."
        )


@state.cached
def doubled(text: str) -> tuple:
    """The text written twice: its labels, the first copy's and the second copy's losses per
    character (the first character of each not predicted), the heads' induction scores on it,
    and every layer's weights (H, 2L, 2L)."""
    state.one_torch_thread()
    model = trained.language_model()
    read = trained.read_text(text)
    ids = twice(read.ids, model.context)  # (2 L,)
    L = len(ids) // 2
    with torch.inference_mode():
        per_char = losses(model, ids)  # (2 L - 1,)
        scores = head_scores(model, ids[None], ("induction",))
        out = model(ids[None])
    labels = position_labels([glyph(int(t)) for t in ids])
    weights = tuple(t.weights[0] for t in out.traces)
    return labels, per_char[: L - 1], per_char[L:], scores, weights


QUERY_ASKED = 5  # question 1's query: early, so its row of weights fits the screen
MADE_UP = "Zorblax of Quintavia"  # a name the model has never read


def copy_verdict(first: float, second: float) -> str:
    """What the two copies' losses say about copying, in words."""
    saved = first - second
    if saved > 0.5:
        return f"the second copy costs **{saved:.2f} nats less** per character: it copies"
    if saved >= -0.5:
        return (
            f"both copies cost about the same ({first:.2f} and {second:.2f} nats): it predicts "
            "this text from what it knows of English, no better the second time"
        )
    return f"the second copy costs {-saved:.2f} nats more per character: no copying here"


def show_twice(read: Reading, with_map: bool = True) -> None:
    """The student's text and a made-up name, each written twice: the two copies' losses and
    (with_map) the best induction head's map on the student's."""
    rows, verdicts = [], []
    for name, text in (("your text", read.text), ("a made-up name", MADE_UP)):
        labels, first, second, scores, _ = doubled(text)
        if len(labels) < 4:
            continue
        best = max(scores, key=lambda s: s.scores["induction"])
        rows.append({
            "twice": name, "chars": len(labels),
            "1st copy": f"{float(first.mean()):.3f}", "2nd copy": f"{float(second.mean()):.3f}",
            "induction": f"{best.name} {best.scores['induction']:.2f} / "
            f"{best.ceilings['induction']:.2f}",
        })  # fmt: skip
        verdicts.append(f"For {name}, {copy_verdict(float(first.mean()), float(second.mean()))}.")
    if not rows:
        st.info("Type at least two characters to see the model read them twice.")
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        "Each copy's loss in nats per character (its first character not counted); the best "
        "induction head's score on the text twice / the best a head could score there."
    )
    st.markdown(
        " ".join(verdicts)
        + " An induction head lowers the loss where the model cannot guess what comes next from "
        "English alone: a name it has never read is cheap the second time, a line of "
        "Shakespeare it can already predict is not."
    )
    labels, _, _, scores, weights = doubled(read.text)
    if len(labels) < 4 or not with_map:
        return
    best = max(scores, key=lambda s: s.scores["induction"])
    T = len(labels)
    blocked = as_blocked(causal_mask(T))  # (T, T): True where a query may not look
    view = weights_view(weights[best.layer][best.head], labels, head_title(best), blocked)
    st.markdown(
        f"**{head_title(best)} on your text written twice**: from each character of the second "
        "copy, an induction head looks at the character that followed the same one in the first."
    )
    show_heatmap(view, f"Attention weights on the text twice, {head_title(best)}")


def questions(read: Reading, temperature: float, top_k: int) -> tuple[Drill, ...]:
    """Which key the best previous-token head's last query attends to; the top-k probability;
    where an induction head looks in the text written twice."""
    prev = max(read.scores, key=lambda s: s.scores["previous_token"])
    T = len(read.labels)
    asked = [
        attends_most(read.weights[prev.layer][prev.head], read.labels, prev.layer, prev.head,
                     min(T - 1, QUERY_ASKED)),
        top_k_probability(read.logits[T - 1], temperature, min(3, top_k), T - 1),
    ]  # fmt: skip
    model = trained.language_model()
    third = induction_question(twice(read.ids, model.context))
    return tuple(asked if third is None else [*asked, third])


def class_questions(settings: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions on the lesson's own line at its sampling defaults (the
    lesson ignores the sidebar; each prompt carries every number it needs)."""
    return questions(reading(TEXT_DEFAULT), TEMPERATURE_DEFAULT, TOP_K_DEFAULT)


# --- presenter mode (?present=1): one section a screen ---------------------------------


PRESENT_CHARS = 24  # presenter mode's large map: the text's first characters fit one screen


def sections() -> list[Section]:
    """Lesson 12: what each head does, one head large, the next character, the text twice."""
    read = current_reading()
    if read is None:
        return [Section("Your text", lambda: None, "Type some text on the page first.")]
    layer = controls.lesson_value("rm_layer", range(SIZE.n_layers), 0)
    head = controls.lesson_value("rm_head", range(SIZE.n_heads), 0)
    temperature = controls.lesson_value("rm_temp", TEMPERATURES, TEMPERATURE_DEFAULT)
    top_k = controls.lesson_value("rm_topk", TOP_KS, TOP_K_DEFAULT)
    T = len(read.labels)
    start = reading(decode(read.ids[:PRESENT_CHARS]))  # the map's characters, read alone
    return [
        Section("What each head does", partial(show_roles, read),
                "Ask: which head would you knock out to stop it copying?"),
        Section(f"Layer {layer}, head {head}",
                partial(show_one_head, start, layer, head, (blocks.SCREEN[0], 250)),
                "Ask: what would this head do on a text written twice?"),
        Section("What comes next", partial(show_next, read, T - 1, temperature, top_k),
                "Raise the temperature. Ask: what happens to the bars, and to the text?"),
        Section("Type it twice", partial(show_twice, read, False),
                "Ask: why is the made-up name so much cheaper the second time, and your text not?"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


LESSON = LessonSpec(
    number=12,
    path="pages/real_model.py",
    title="12 · A real model reads",
    icon=":material/menu_book:",
    summary="A small GPT trained here on Shakespeare reads your text: every head, named from "
    "its numbers; the next character; knock-outs; your text twice.",
    uses=(),
    objectives=(
        "say which key a head's query attends to most, from its row of weights",
        "compute the probability the sampler gives a character with top-k and a temperature",
        "say which key an induction head attends to when a text repeats",
    ),
    recap="a trained model's heads take on roles you can measure on any text: one looks a "
    "character back, another copies what followed before.",
    params=("rm_text", "rm_layer", "rm_head", "rm_pos", "rm_temp", "rm_topk", "rm_off"),
    sections=sections,
    class_questions=class_questions,
)
